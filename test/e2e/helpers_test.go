package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

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

// endImport tells the kubelet stand-in how the importer pod of DataVolume
// ns/name ends (harness.ImporterSucceeded or ImporterChecksumMismatch); CDI
// then moves the DataVolume on by itself. A merge patch of one annotation
// leaves the fields the function applies to the DataVolume its own.
func endImport(t *testing.T, ns, name, how string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ri, err := cp.Resource(harness.DataVolume, ns)
	if err != nil {
		t.Fatal(err)
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, harness.ImporterAnnotation, how)
	if _, err := ri.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "e2e-kubelet-control"}); err != nil {
		t.Fatalf("cannot tell the kubelet stand-in to end the import of DataVolume %s/%s %s: %v", ns, name, how, err)
	}
}

// completeGolden lets CDI finish importing golden name: the kubelet
// stand-in ends its importer pod successfully.
func completeGolden(t *testing.T, name string) {
	t.Helper()
	endImport(t, goldenNamespace, name, harness.ImporterSucceeded)
}

// importTimeout bounds CDI taking a DataVolume from creation to a phase:
// its PVC, the PV binder and the provisioner stand-in binding it, the
// populator's PVC' and importer pod, the kubelet stand-in, the rebind.
const importTimeout = 90 * time.Second

// waitDataVolumePhase waits until CDI reports DataVolume ns/name in phase
// and returns it.
func waitDataVolumePhase(t *testing.T, ns, name, phase string) *unstructured.Unstructured {
	t.Helper()
	var got *unstructured.Unstructured
	cp.Eventually(t, importTimeout, fmt.Sprintf("CDI to report DataVolume %s/%s %s", ns, name, phase), func(ctx context.Context) error {
		dv, err := cp.Existing(ctx, harness.DataVolume, ns, name)
		if err != nil {
			return err
		}
		if p, _, _ := unstructured.NestedString(dv.Object, "status", "phase"); p != phase {
			return fmt.Errorf("phase %q, progress %v; conditions %s", p, dv.Object["status"], harness.ConditionsString(dv))
		}
		got = dv
		return nil
	})
	return got
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

// CDI's DataVolume phases the scenarios wait for (API types.go).
const (
	phaseImportInProgress = "ImportInProgress"
	phaseSucceeded        = "Succeeded"
	phaseFailed           = "Failed"
)

// annotate sets one annotation on an object with a merge patch, as kubectl
// annotate does.
func annotate(t *testing.T, gvk schema.GroupVersionKind, ns, name, key, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ri, err := cp.Resource(gvk, ns)
	if err != nil {
		t.Fatal(err)
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, key, value)
	if _, err := ri.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "e2e-kubectl"}); err != nil {
		t.Fatalf("cannot annotate %s %s/%s %s=%s: %v", gvk.Kind, ns, name, key, value, err)
	}
}
