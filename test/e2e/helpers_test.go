package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// talosVersion is the Talos release the scenarios' images use: a release
// the support matrix knows to pair with Kubernetes v1.35.
const talosVersion = "v1.13.6"

// schematicID returns a realistic (64 lowercase hex) schematic ID unique to
// seed, so that the scenarios' goldens never collide.
func schematicID(seed string) string {
	sum := sha256.Sum256([]byte("function-worker-image-e2e/" + seed))
	return hex.EncodeToString(sum[:])
}

// goldenName is the product's golden DataVolume name for sid at talosVersion.
func goldenName(sid string) string { return "talos-worker-" + sid + "-" + talosVersion }

// goldenStatus returns the entry of the catalog's status.goldens for name.
func goldenStatus(catalog *unstructured.Unstructured, name string) (map[string]any, bool) {
	gs, _, _ := unstructured.NestedSlice(catalog.Object, "status", "goldens")
	for _, g := range gs {
		m, ok := g.(map[string]any)
		if ok && m["name"] == name {
			return m, true
		}
	}
	return nil, false
}

// setGoldenPhase plays CDI for a golden DataVolume or fails the test.
func setGoldenPhase(t *testing.T, name, phase, progress string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cp.SetDataVolumePhase(ctx, goldenNamespace, name, phase, progress, ""); err != nil {
		t.Fatalf("cannot play CDI for DataVolume %s/%s: %v", goldenNamespace, name, err)
	}
}

// waitGoldenReported waits until the catalog's status reports golden name
// with phase (and progress, when not empty).
func waitGoldenReported(t *testing.T, catalog, name, phase, progress string) {
	t.Helper()
	cp.Eventually(t, reconcileTimeout, fmt.Sprintf("catalog %s to report golden %s in phase %s %s", catalog, name, phase, progress), func(ctx context.Context) error {
		u, err := cp.Existing(ctx, harness.WorkerImageCatalog, "", catalog)
		if err != nil {
			return err
		}
		g, ok := goldenStatus(u, name)
		if !ok {
			gs, _, _ := unstructured.NestedSlice(u.Object, "status", "goldens")
			return fmt.Errorf("status.goldens has no %s: %v", name, gs)
		}
		if g["phase"] != phase || (progress != "" && g["progress"] != progress) {
			return fmt.Errorf("status.goldens[%s] is %v", name, g)
		}
		return nil
	})
}

// deleteOnCleanup deletes the object when the test ends, so that one
// scenario's objects do not feed the next. It does not wait.
func deleteOnCleanup(t *testing.T, obj *unstructured.Unstructured) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := cp.Delete(ctx, obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName()); err != nil {
			t.Logf("cleanup: cannot delete %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	})
}

// catalogXR returns an XWorkerImageCatalog with the given images, each
// "schematicID version storage".
func catalogXR(name string, images ...string) *unstructured.Unstructured {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: workerimage.cozystack.io/v1alpha1\nkind: XWorkerImageCatalog\nmetadata:\n  name: %s\nspec:\n  goldenNamespace: %s\n  images:", name, goldenNamespace)
	if len(images) == 0 {
		b.WriteString(" []")
	}
	b.WriteString("\n")
	for _, im := range images {
		f := strings.Fields(im)
		fmt.Fprintf(&b, "  - schematicID: %s\n    version: %s\n", f[0], f[1])
		if len(f) > 2 {
			fmt.Fprintf(&b, "    storage: %s\n", f[2])
		}
	}
	return harness.MustObject(b.String())
}
