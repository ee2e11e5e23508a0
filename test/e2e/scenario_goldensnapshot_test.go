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

// poolDisks lists the pool's worker disks as "name=phase/cloneType" and
// counts those Succeeded with cloneType want.
func poolDisks(ctx context.Context, ns, poolHash, want string) (done int, states []string, err error) {
	dvs, err := cp.List(ctx, harness.DataVolume, ns, poolLabel+"="+poolHash)
	if err != nil {
		return 0, nil, err
	}
	for _, dv := range dvs {
		phase, _, _ := unstructured.NestedString(dv.Object, "status", "phase")
		ct := dv.GetAnnotations()[annCloneType]
		states = append(states, fmt.Sprintf("%s=%s/%s", dv.GetName(), phase, ct))
		if phase == phaseSucceeded && ct == want {
			done++
		}
	}
	return done, states, nil
}

// templateDiskSource is the snapshot or PVC a template's system disk names, as
// "snapshot ns/name" or "pvc ns/name", and the pool label of its disks.
func templateDiskSource(t *testing.T, kmt *unstructured.Unstructured) (source, poolHash string) {
	t.Helper()
	dvts, _, _ := unstructured.NestedSlice(kmt.Object, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates")
	if len(dvts) == 0 {
		t.Fatalf("KubevirtMachineTemplate %s/%s has no dataVolumeTemplates", kmt.GetNamespace(), kmt.GetName())
	}
	dvt, _ := dvts[0].(map[string]any)
	poolHash, _, _ = unstructured.NestedString(dvt, "metadata", "labels", poolLabel)
	for _, kind := range []string{"snapshot", "pvc"} {
		if src, ok, _ := unstructured.NestedStringMap(dvt, "spec", "source", kind); ok {
			return kind + " " + src["namespace"] + "/" + src["name"], poolHash
		}
	}
	return fmt.Sprintf("%v", dvt["spec"]), poolHash
}

// A class comes to prefer snapshot sources under a running pool: the pool
// rolls nothing, and its new Machines still clone the golden's PVC, until
// its owner asks for something new; then its new template restores from
// the snapshot the catalog took meanwhile, and the pool rolls onto it.
// Deleting the catalog keeps the golden and its snapshot while that
// template uses them; deleting the pool lets both go.
func TestSnapshotGoldenRollsNoRunningPool(t *testing.T) {
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	const ns, cluster, class = "e2e-snaplater", "snaplater", "e2e-snapshot-later"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := cp.InstallSnapshotStorage(ctx, cdi.Controller, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := cp.InstallSnapshotDriverClass(ctx, cdi.Controller, class, "pvc", 60*time.Second); err != nil {
		t.Fatal(err)
	}
	inNamespace(t, ns)
	capiCluster(t, ns, cluster)
	sid := schematicID("snaplater")
	golden := goldenName(sid)
	cat := catalogXR("e2e-snaplater", sid+" "+talosVersion)
	_ = unstructured.SetNestedField(cat.Object, class, "spec", "storageClass")
	cp.MustApply(t, cat)
	deleteOnCleanup(t, cat)
	cp.WaitExists(t, reconcileTimeout, harness.DataVolume, goldenNamespace, golden)
	completeGolden(t, golden)
	waitDataVolumePhase(t, goldenNamespace, golden, phaseSucceeded)

	xr := sizedPool(ns, cluster, sid, 1, "20Gi")
	_ = unstructured.SetNestedField(xr.Object, class, "spec", "storageClass")
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	kmt1 := poolTemplate(t, reconcileTimeout, ns, xr.GetName())
	src, poolHash := templateDiskSource(t, kmt1)
	if src != "pvc "+goldenNamespace+"/"+golden {
		t.Fatalf("on a class whose profile says pvc, the pool's disk is %s, want the golden's PVC", src)
	}
	waitDisks := func(want int, cloneType string) {
		t.Helper()
		cp.Eventually(t, capiTimeout, fmt.Sprintf("%d worker disks of %s/%s Succeeded with cloneType %s", want, ns, xr.GetName(), cloneType), func(ctx context.Context) error {
			done, states, err := poolDisks(ctx, ns, poolHash, cloneType)
			if err != nil {
				return err
			}
			if done < want {
				return fmt.Errorf("%d of %d: %s", done, want, strings.Join(states, ", "))
			}
			return nil
		})
	}
	waitDisks(1, "csi-clone")
	if vs, err := cp.Get(context.Background(), harness.VolumeSnapshot, goldenNamespace, golden); err != nil || vs != nil {
		t.Fatalf("a VolumeSnapshot of golden %s exists on a class whose profile says pvc (%v)", golden, err)
	}

	// The storage admin makes the class prefer snapshot sources.
	flip, cancelFlip := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancelFlip()
	if err := cp.InstallSnapshotDriverClass(flip, cdi.Controller, class, "snapshot", 60*time.Second); err != nil {
		t.Fatal(err)
	}
	cp.Eventually(t, importTimeout, fmt.Sprintf("the catalog to take VolumeSnapshot %s/%s and see it readyToUse", goldenNamespace, golden), func(ctx context.Context) error {
		vs, err := cp.Existing(ctx, harness.VolumeSnapshot, goldenNamespace, golden)
		if err != nil {
			return err
		}
		if ready, _, _ := unstructured.NestedBool(vs.Object, "status", "readyToUse"); !ready {
			return fmt.Errorf("status %v", vs.Object["status"])
		}
		return nil
	})
	sameTemplate := func(ctx context.Context) error {
		p, err := cp.Existing(ctx, harness.NodePool, ns, xr.GetName())
		if err != nil {
			return err
		}
		if got, _, _ := unstructured.NestedString(p.Object, "status", "template"); got != kmt1.GetName() {
			return fmt.Errorf("status.template is %s, want %s: the pool rolled", got, kmt1.GetName())
		}
		return nil
	}
	cp.Consistently(t, 20*time.Second, fmt.Sprintf("XNodePool %s/%s to keep template %s", ns, xr.GetName(), kmt1.GetName()), sameTemplate)

	// A scale-up is no new template: the new Machine clones the PVC too.
	_ = unstructured.SetNestedField(xr.Object, int64(2), "spec", "replicas")
	cp.MustApply(t, xr)
	waitDisks(2, "csi-clone")
	cp.Eventually(t, reconcileTimeout, "the scaled pool to keep its template", sameTemplate)

	// Its owner asks for a new rendering: the new template restores from
	// the snapshot, and the pool rolls onto it.
	_ = unstructured.SetNestedField(xr.Object, int64(1), "spec", "templateRevision")
	cp.MustApply(t, xr)
	var kmt2 *unstructured.Unstructured
	// The scale-up's burst of watch events (MachineSets, Machines, disks)
	// can open Crossplane v2.4's watch circuit breaker on the pool
	// (Responsive=False, WatchCircuitOpen), which then lets events through
	// only periodically: the spec change may wait for the next poll.
	cp.Eventually(t, capiTimeout, fmt.Sprintf("XNodePool %s/%s to compose a new template", ns, xr.GetName()), func(ctx context.Context) error {
		p, err := cp.Existing(ctx, harness.NodePool, ns, xr.GetName())
		if err != nil {
			return err
		}
		name, _, _ := unstructured.NestedString(p.Object, "status", "template")
		if name == kmt1.GetName() || name == "" {
			return fmt.Errorf("status.template is %q; conditions %s", name, harness.ConditionsString(p))
		}
		kmt2, err = cp.Existing(ctx, harness.KubevirtMachineTemplate, ns, name)
		return err
	})
	if src, _ := templateDiskSource(t, kmt2); src != "snapshot "+goldenNamespace+"/"+golden {
		t.Fatalf("the pool's new template's disk is %s, want the golden's snapshot", src)
	}
	md := cluster + "-" + poolName
	cp.Eventually(t, capiTimeout+importTimeout, fmt.Sprintf("MachineDeployment %s/%s settled on %s with 2 Machines", ns, md, kmt2.GetName()), func(ctx context.Context) error {
		s, err := readDeployment(ctx, ns, md)
		if err != nil {
			return err
		}
		if !s.settledOn(kmt2.GetName(), 2) {
			return fmt.Errorf("%s", s)
		}
		return nil
	})
	waitDisks(2, "snapshot")

	// Deleting the catalog keeps what the pool's template restores from.
	cp.MustDelete(t, harness.WorkerImageCatalog, "", cat.GetName())
	cp.WaitGone(t, gcTimeout, harness.WorkerImageCatalog, "", cat.GetName())
	cp.Consistently(t, 20*time.Second, fmt.Sprintf("golden %s and its VolumeSnapshot to outlive the catalog while template %s restores from them", golden, kmt2.GetName()), func(ctx context.Context) error {
		if _, err := cp.Existing(ctx, harness.VolumeSnapshot, goldenNamespace, golden); err != nil {
			return err
		}
		_, err := cp.Existing(ctx, harness.DataVolume, goldenNamespace, golden)
		return err
	})
	// The pool goes: its templates and Usages go, and the deletes of the
	// golden and its snapshot are replayed.
	deletePool(t, ns, xr.GetName(), md)
	cp.WaitGone(t, gcTimeout, harness.KubevirtMachineTemplate, ns, kmt2.GetName())
	cp.WaitGone(t, gcTimeout, harness.VolumeSnapshot, goldenNamespace, golden)
	cp.WaitGone(t, gcTimeout, harness.DataVolume, goldenNamespace, golden)
}
