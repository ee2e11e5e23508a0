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
// would fall back to a host-assisted copy (v1.66 pkg/controller/clone/
// planner.go validateAdvancedClonePVC: a CSI clone into a larger target
// needs allowVolumeExpansion), so the function holds the new pool with the
// expansion message and composes nothing; once the class allows expansion,
// the next reconcile composes the pool.
//
// The StorageProfile is CDI's, written here as CDI's StorageProfile
// controller fills its status (a csi-clone strategy and Filesystem claim
// properties, the volume mode of the fake's golden PVC); the suite serves
// its kind with a minimal CRD until it runs CDI itself.
func TestClassWithoutVolumeExpansionHoldsTheNewPool(t *testing.T) {
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	const ns, cluster, catalog, class = "e2e-no-expansion", "c12", "e2e-no-expansion", "e2e-fixed-size"
	inNamespace(t, ns)

	sc := harness.MustObject(fmt.Sprintf(`
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: %s
provisioner: e2e.invalid/none
volumeBindingMode: Immediate
`, class))
	profile := harness.MustObject(fmt.Sprintf(`
apiVersion: cdi.kubevirt.io/v1beta1
kind: StorageProfile
metadata:
  name: %[1]s
spec: {}
`, class))
	cp.MustApply(t, sc, profile)
	deleteOnCleanup(t, profile)
	deleteOnCleanup(t, sc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	profile.Object["status"] = map[string]any{
		"storageClass":      class,
		"provisioner":       "e2e.invalid/none",
		"cloneStrategy":     "csi-clone",
		"claimPropertySets": []any{map[string]any{"accessModes": []any{"ReadWriteOnce"}, "volumeMode": "Filesystem"}},
	}
	if err := cp.ApplyStatus(ctx, harness.FakeCDIManager, profile); err != nil {
		t.Fatal(err)
	}

	sid := schematicID("no-expansion")
	golden := goldenName(sid)
	cat := catalogXR(catalog, sid+" "+talosVersion)
	if err := unstructured.SetNestedField(cat.Object, class, "spec", "storageClass"); err != nil {
		t.Fatal(err)
	}
	cp.MustApply(t, cat)
	deleteOnCleanup(t, cat)
	cp.WaitExists(t, reconcileTimeout, harness.DataVolume, goldenNamespace, golden)
	setGoldenPhase(t, golden, harness.PhaseSucceeded, "100.0%")

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
