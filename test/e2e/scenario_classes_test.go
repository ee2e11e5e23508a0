package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// classGoldenName is the golden of sid on a class that is not its
// catalog's first: the function's contract (talosimage.GoldenClassName),
// written out again here because the suite is a module of its own.
func classGoldenName(sid, arch, class string) string {
	sum := sha256.Sum256([]byte(class))
	return goldenName(sid) + "-" + arch + "-" + hex.EncodeToString(sum[:])[:10]
}

// csiCloneClass installs StorageClass name of the suite's CSI driver (not
// the default; expand says allowVolumeExpansion) for the scenario, and sets
// its StorageProfile's cloneStrategy to csi-clone as the storage admin
// does; it returns the StorageClass as applied.
func csiCloneClass(t *testing.T, name string, expand bool) *unstructured.Unstructured {
	t.Helper()
	sc := harness.StorageClassObject(name, false, expand)
	cp.MustApply(t, sc)
	deleteOnCleanup(t, sc)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := cp.ConfigureStorageProfile(ctx, cdi.Controller, name, "csi-clone", 60*time.Second); err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestCatalogKeepsAnImageOnTwoClasses: issue 33, item 2, on CDI and the
// Cluster API chain. A catalog lists two classes of the suite's CSI driver
// (spec.storageClasses); it keeps one golden of the image on each, the
// first under the name pools have always cloned, the second under the
// class-hashed name, each bound on its own class. A pool that names the
// second class clones the golden on it: its worker disk is a CSI clone on
// that class (no cross-class clone, which a real provisioner can refuse,
// cozystack #2908), the grant covers it, and CloneHealthy is True.
func TestCatalogKeepsAnImageOnTwoClasses(t *testing.T) {
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	const ns, cluster, catalog, class = "e2e-two-classes", "c41", "e2e-two-classes", "e2e-second-class"
	inNamespace(t, ns)
	capiCluster(t, ns, cluster)

	csiCloneClass(t, class, true)

	sid := schematicID("two-classes")
	first, second := goldenName(sid), classGoldenName(sid, "amd64", class)
	cat := catalogXR(catalog, sid+" "+talosVersion)
	if err := unstructured.SetNestedStringSlice(cat.Object, []string{harness.DefaultStorageClass, class}, "spec", "storageClasses"); err != nil {
		t.Fatal(err)
	}
	cp.MustApply(t, cat)
	deleteOnCleanup(t, cat)
	for golden, want := range map[string]string{first: harness.DefaultStorageClass, second: class} {
		dv := cp.WaitExists(t, reconcileTimeout, harness.DataVolume, goldenNamespace, golden)
		if got, _, _ := unstructured.NestedString(dv.Object, "spec", "storage", "storageClassName"); got != want {
			t.Errorf("golden %s/%s is on StorageClass %q, want %q", goldenNamespace, golden, got, want)
		}
		completeGolden(t, golden)
	}
	for golden, want := range map[string]string{first: harness.DefaultStorageClass, second: class} {
		waitDataVolumePhase(t, goldenNamespace, golden, phaseSucceeded)
		pvc := cp.WaitExists(t, reconcileTimeout, harness.PVC, goldenNamespace, golden)
		if got, _, _ := unstructured.NestedString(pvc.Object, "spec", "storageClassName"); got != want {
			t.Errorf("golden claim %s/%s is on StorageClass %q, want %q", goldenNamespace, golden, got, want)
		}
	}
	cp.Eventually(t, reconcileTimeout, "the clone ClusterRole to name both goldens", func(ctx context.Context) error {
		cr, err := cp.Existing(ctx, harness.ClusterRole, "", "workerimage-clone-"+catalog)
		if err != nil {
			return err
		}
		rules, _, _ := unstructured.NestedSlice(cr.Object, "rules")
		var names []string
		for _, r := range rules {
			n, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "resourceNames")
			names = append(names, n...)
		}
		if !slices.Contains(names, first) || !slices.Contains(names, second) {
			return fmt.Errorf("resourceNames %v, want %s and %s", names, first, second)
		}
		return nil
	})

	xr := poolXR(ns, cluster, sid, "{builtin: {}}")
	if err := unstructured.SetNestedField(xr.Object, class, "spec", "storageClass"); err != nil {
		t.Fatal(err)
	}
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	kmt := poolTemplate(t, reconcileTimeout, ns, xr.GetName())
	if d := diskSourceOf(kmt); d.CloneFrom != goldenNamespace+"/"+second || d.Class != class {
		t.Fatalf("KubevirtMachineTemplate %s/%s: system disk %+v, want a clone of %s/%s on %s", ns, kmt.GetName(), d, goldenNamespace, second, class)
	}
	disk := waitWorkerDisks(t, ns, cluster+"-"+poolName, kmt, 1)[0]
	waitDataVolumePhase(t, ns, disk, phaseSucceeded)
	_, pvc := waitCloneSettled(t, ns, disk)
	if got := pvc.GetAnnotations()[annCloneType]; got != "csi-clone" {
		t.Errorf("CDI planned worker disk %s/%s as %q, want csi-clone on its own class; PVC annotations %v", ns, disk, got, pvc.GetAnnotations())
	}
	if got, _, _ := unstructured.NestedString(pvc.Object, "spec", "storageClassName"); got != class {
		t.Errorf("worker disk %s/%s is on StorageClass %q, want %q", ns, disk, got, class)
	}
	got := cp.WaitCondition(t, reconcileTimeout, harness.NodePool, ns, xr.GetName(), "CloneHealthy", "True")
	if c := harness.Condition(got, "CloneHealthy"); c["reason"] != "NoCloneProblems" {
		t.Errorf("CloneHealthy reason %v, want NoCloneProblems", c["reason"])
	}
	nothingRefusedIn(t, ns)
}
