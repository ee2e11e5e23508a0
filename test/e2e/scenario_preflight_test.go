package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// TestClassWithoutVolumeExpansionHoldsTheNewPool: a 6Gi golden cloned into
// 20Gi worker disks on a class that cannot expand. CDI's clone planner
// falls back to a host-assisted copy (pkg/controller/clone/planner.go
// validateAdvancedClonePVC: a CSI clone into a larger target needs
// allowVolumeExpansion), so the function holds the new pool with the
// expansion message and composes nothing. CDI itself is asked the same
// question: a DataVolume like the one the pool would have made KubeVirt
// create is planned by CDI as a copy, with CDI's own reason on its PVC.
// Once the class allows expansion, the next reconcile composes the pool.
//
// The StorageProfile is CDI's, created by its StorageProfile controller;
// the suite sets its spec (a csi-clone strategy and Filesystem claim
// properties) as a storage admin does, and CDI fills its status.
func TestClassWithoutVolumeExpansionHoldsTheNewPool(t *testing.T) {
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	const ns, cluster, catalog, class = "e2e-no-expansion", "c12", "e2e-no-expansion", "e2e-fixed-size"
	inNamespace(t, ns)

	sc := csiCloneClass(t, class, false)

	sid := schematicID("no-expansion")
	golden := goldenName(sid)
	cat := catalogXR(catalog, sid+" "+talosVersion)
	if err := unstructured.SetNestedField(cat.Object, class, "spec", "storageClass"); err != nil {
		t.Fatal(err)
	}
	cp.MustApply(t, cat)
	deleteOnCleanup(t, cat)
	cp.WaitExists(t, reconcileTimeout, harness.DataVolume, goldenNamespace, golden)
	completeGolden(t, golden)
	waitDataVolumePhase(t, goldenNamespace, golden, phaseSucceeded)

	xr := poolXR(ns, cluster, sid, "{builtin: {}}")
	if err := unstructured.SetNestedField(xr.Object, class, "spec", "storageClass"); err != nil {
		t.Fatal(err)
	}
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)

	held := func(ctx context.Context) error {
		u, err := cp.Existing(ctx, harness.NodePool, ns, xr.GetName())
		if err != nil {
			return err
		}
		if err := isHeldNotReady(u, "HostAssistedCopy"); err != nil {
			return err
		}
		msg, _, _ := unstructured.NestedString(u.Object, "status", "gate", "message")
		for _, want := range []string{"NoVolumeExpansion", "allowVolumeExpansion: true on StorageClass " + class, "diskSize"} {
			if !strings.Contains(msg, want) {
				return fmt.Errorf("status.gate.message does not name %q: %s", want, msg)
			}
		}
		return nil
	}
	cp.Eventually(t, reconcileTimeout, "XNodePool "+ns+"/"+xr.GetName()+" to be held HostAssistedCopy with the expansion fix", held)
	cp.Consistently(t, 5*time.Second, "the held pool composes nothing in "+ns, allOf(held, nothingComposedIn(ns)))

	// What CDI does with the clone the function refused: the worker disk
	// the pool's template would have given each machine (the golden cloned
	// into diskSize on the class).
	wouldBe := harness.MustObject(fmt.Sprintf(`
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: would-be-worker-disk
  namespace: %s
spec:
  source:
    pvc:
      namespace: %s
      name: %s
  storage:
    storageClassName: %s
    resources:
      requests:
        storage: 20Gi
`, ns, goldenNamespace, golden, class))
	cp.MustApply(t, wouldBe)
	pvc := waitClonePlanned(t, ns, wouldBe.GetName())
	if got := pvc.GetAnnotations()[annCloneType]; got != "copy" {
		t.Errorf("CDI planned the clone on %s as %q, want copy (host-assisted); PVC annotations %v", class, got, pvc.GetAnnotations())
	}
	if got := pvc.GetAnnotations()[annCloneFallbackReason]; !strings.Contains(got, "No volume expansion is possible") {
		t.Errorf("CDI's fallback reason on PVC %s/%s is %q, want its NoVolumeExpansion message", ns, pvc.GetName(), got)
	}
	t.Logf("CDI planned the refused clone: %s=%q, %s=%q", annCloneType, pvc.GetAnnotations()[annCloneType], annCloneFallbackReason, pvc.GetAnnotations()[annCloneFallbackReason])
	cp.MustDelete(t, harness.DataVolume, ns, wouldBe.GetName())
	cp.WaitGone(t, gcTimeout, harness.DataVolume, ns, wouldBe.GetName())

	// allowVolumeExpansion is the one StorageClass field that may change.
	if err := unstructured.SetNestedField(sc.Object, true, "allowVolumeExpansion"); err != nil {
		t.Fatal(err)
	}
	cp.MustApply(t, sc)
	kmt := poolTemplate(t, oneGatedReconcile+reconcileTimeout, ns, xr.GetName())
	if got := diskSourceOf(kmt); got.CloneFrom != goldenNamespace+"/"+golden || got.Class != class {
		t.Errorf("once the class can expand, the pool clones %s/%s on %s; got %+v", goldenNamespace, golden, class, got)
	}
}

// CDI's annotations on a clone's target PVC: the strategy its planner chose
// and, when it fell back to a host-assisted copy, why
// (populators/clone-populator.go initTargetClaim; API types.go).
const (
	annCloneType           = "cdi.kubevirt.io/cloneType"
	annCloneFallbackReason = "cdi.kubevirt.io/cloneFallbackReason"
)

// waitClonePlanned waits until CDI has planned the clone of DataVolume
// ns/name, recording the strategy on its PVC, and returns the PVC.
func waitClonePlanned(t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	var got *unstructured.Unstructured
	cp.Eventually(t, importTimeout, fmt.Sprintf("CDI to plan the clone of DataVolume %s/%s (%s on its PVC)", ns, name, annCloneType), func(ctx context.Context) error {
		pvc, err := cp.Get(ctx, harness.PVC, ns, name)
		if err != nil {
			return err
		}
		if pvc == nil || pvc.GetAnnotations()[annCloneType] == "" {
			dv, _ := cp.Get(ctx, harness.DataVolume, ns, name)
			var ann map[string]string
			if pvc != nil {
				ann = pvc.GetAnnotations()
			}
			return fmt.Errorf("PVC annotations %v; DataVolume conditions %s", ann, harness.ConditionsString(dv))
		}
		got = pvc
		return nil
	})
	return got
}
