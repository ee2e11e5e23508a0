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

// Snapshot goldens on the real CDI, the real CSI snapshot controller and
// Cluster API: a catalog entry on the suite's snapshot class, whose CDI
// StorageProfile says dataImportCronSourceFormat: snapshot, is kept as a
// VolumeSnapshot too once it imported; a pool on that class restores every
// worker disk from that one snapshot (CDI's planSmartCloneFromSnapshot:
// cloneType snapshot, a tmp-pvc restored from the snapshot, no snapshot
// per clone), protects it with a Usage, and the golden namespace holds no
// other snapshot of it. The CSI side of the snapshot and of the restore is
// the stand-ins' (harness/standins.go, the snapshot driver).

func TestSnapshotGoldenRestoresEveryWorkerFromOneSnapshot(t *testing.T) {
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The snapshot class, its VolumeSnapshotClass and CDI's profile saying
	// dataImportCronSourceFormat: snapshot (idempotent).
	if err := cp.InstallSnapshotStorage(ctx, cdi.Controller, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	const ns, cluster, workers = "e2e-snapgolden", "snapgolden", int64(3)
	inNamespace(t, ns)
	capiCluster(t, ns, cluster)
	sid := schematicID("snapgolden")
	golden := goldenName(sid)

	cat := catalogXR("e2e-snapgolden", sid+" "+talosVersion)
	_ = unstructured.SetNestedField(cat.Object, harness.SnapshotStorageClass, "spec", "storageClass")
	cp.MustApply(t, cat)
	deleteOnCleanup(t, cat)
	cp.WaitExists(t, reconcileTimeout, harness.DataVolume, goldenNamespace, golden)
	completeGolden(t, golden)
	waitDataVolumePhase(t, goldenNamespace, golden, phaseSucceeded)

	// The catalog takes the snapshot; the snapshot controller binds it to
	// a content the CSI stand-in cuts; the catalog reports it ready.
	cp.Eventually(t, importTimeout, fmt.Sprintf("VolumeSnapshot %s/%s readyToUse and reported Ready by the catalog", goldenNamespace, golden), func(ctx context.Context) error {
		vs, err := cp.Existing(ctx, harness.VolumeSnapshot, goldenNamespace, golden)
		if err != nil {
			return err
		}
		if ready, _, _ := unstructured.NestedBool(vs.Object, "status", "readyToUse"); !ready {
			return fmt.Errorf("VolumeSnapshot status %v", vs.Object["status"])
		}
		if src, _, _ := unstructured.NestedString(vs.Object, "spec", "source", "persistentVolumeClaimName"); src != golden {
			return fmt.Errorf("VolumeSnapshot source is PVC %q, want the golden's %q", src, golden)
		}
		c, err := cp.Existing(ctx, harness.WorkerImageCatalog, "", cat.GetName())
		if err != nil {
			return err
		}
		g, _ := goldenStatus(c, golden)
		if st, _, _ := unstructured.NestedString(g, "snapshot", "state"); st != "Ready" {
			return fmt.Errorf("catalog status.goldens[%s].snapshot is %v; conditions %s", golden, g["snapshot"], harness.ConditionsString(c))
		}
		return nil
	})

	xr := sizedPool(ns, cluster, sid, workers, "20Gi")
	_ = unstructured.SetNestedField(xr.Object, harness.SnapshotStorageClass, "spec", "storageClass")
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	kmt := poolTemplate(t, reconcileTimeout, ns, xr.GetName())
	dvts, _, _ := unstructured.NestedSlice(kmt.Object, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates")
	if len(dvts) == 0 {
		t.Fatalf("KubevirtMachineTemplate %s/%s has no dataVolumeTemplates", ns, kmt.GetName())
	}
	dvt, _ := dvts[0].(map[string]any)
	src, _, _ := unstructured.NestedStringMap(dvt, "spec", "source", "snapshot")
	if src["namespace"] != goldenNamespace || src["name"] != golden {
		t.Fatalf("the pool's disk template restores from %v, want snapshot %s/%s; spec.source %v", src, goldenNamespace, golden, dvt["spec"])
	}
	poolHash, _, _ := unstructured.NestedString(dvt, "metadata", "labels", poolLabel)

	// Every worker disk is restored from the snapshot by CDI.
	cp.Eventually(t, importTimeout+reconcileTimeout, fmt.Sprintf("%d worker disks of %s/%s Succeeded with cloneType snapshot", workers, ns, xr.GetName()), func(ctx context.Context) error {
		dvs, err := cp.List(ctx, harness.DataVolume, ns, poolLabel+"="+poolHash)
		if err != nil {
			return err
		}
		var states []string
		done := 0
		for _, dv := range dvs {
			phase, _, _ := unstructured.NestedString(dv.Object, "status", "phase")
			ct := dv.GetAnnotations()[annCloneType]
			states = append(states, fmt.Sprintf("%s=%s/%s", dv.GetName(), phase, ct))
			if phase == phaseSucceeded && ct == "snapshot" {
				done++
			}
		}
		if int64(done) != workers {
			return fmt.Errorf("%d of %d done: %s", done, workers, strings.Join(states, ", "))
		}
		return nil
	})

	// One snapshot of the golden, not one per clone: CDI's PVC snapshot
	// strategy would leave tmp-snapshot-<uid> objects in the golden's
	// namespace while it clones (clone/planner.go planSnapshotFromPVC).
	snaps, err := cp.List(context.Background(), harness.VolumeSnapshot, goldenNamespace, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range snaps {
		if s.GetName() != golden && strings.Contains(s.GetName(), "tmp-snapshot") {
			t.Errorf("VolumeSnapshot %s/%s exists: CDI took a snapshot per clone", goldenNamespace, s.GetName())
		}
	}

	// The pool's template protects the snapshot: Crossplane labels it in use
	// and its webhook refuses to delete it.
	cp.Eventually(t, reconcileTimeout, fmt.Sprintf("VolumeSnapshot %s/%s in use by the pool's Usage", goldenNamespace, golden), func(ctx context.Context) error {
		if _, err := cp.Existing(ctx, harness.Usage, ns, kmt.GetName()+"-volumesnapshot"); err != nil {
			return err
		}
		vs, err := cp.Existing(ctx, harness.VolumeSnapshot, goldenNamespace, golden)
		if err != nil {
			return err
		}
		if vs.GetLabels()["crossplane.io/in-use"] != "true" {
			return fmt.Errorf("labels %v", vs.GetLabels())
		}
		if err := cp.DeleteDryRun(ctx, vs); err == nil || !strings.Contains(err.Error(), "nousages.protection.crossplane.io") {
			return fmt.Errorf("a dry-run delete of the snapshot was not refused by the usage webhook: %v", err)
		}
		return nil
	})
}
