package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// snapshotCutToReady is how long the snapshot driver takes from cutting a
// snapshot to reporting it ready in TestSnapshotStandInTakesAndRestoresASnapshot
// (harness.SetSnapshotDuration): long enough to see the content in flight
// between two polls of the scenario.
const snapshotCutToReady = 5 * time.Second

// TestSnapshotStandInTakesAndRestoresASnapshot proves, on the real
// kube-apiserver, kube-controller-manager (PV binder), CDI (the snapshot
// class's StorageProfile) and external-snapshotter's snapshot controller,
// that the suite can take and restore CSI snapshots of its snapshot driver,
// as later scenarios need (CDI's smart clone from one VolumeSnapshot of a
// golden, clone/planner.go planSmartCloneFromSnapshot):
//   - InstallSnapshotStorage: CDI reports the class's StorageProfile with
//     status.snapshotClass the suite's VolumeSnapshotClass and
//     dataImportCronSourceFormat snapshot;
//   - a PVC of the snapshot class binds, to a PV of the snapshot driver;
//   - a VolumeSnapshot of it (class: the suite's VolumeSnapshotClass) is
//     bound by the snapshot controller to a content it created, whose
//     driver, deletionPolicy, volumeSnapshotRef, source volume handle and
//     spec.sourceVolumeMode are the controller's, and which carries the
//     controller's finalizer; the content is seen in flight (a handle and
//     creationTime, readyToUse false) while the driver is not done, then
//     ready with restoreSize the source PV's capacity, and the snapshot
//     readyToUse with that restoreSize, both written by the controller from
//     what the sidecar stand-in wrote;
//   - a PVC restored from it (dataSourceRef VolumeSnapshot) binds to a PV
//     of the snapshot driver, and the provisioner's finalizer is gone from
//     the snapshot once it did; a claim asking for less than the snapshot's
//     restoreSize stays Pending, as external-provisioner refuses it;
//   - deleting the VolumeSnapshot deletes the content (the controller
//     annotates and deletes it, the sidecar stand-in deletes the snapshot
//     on the storage and removes the content's finalizer) and then the
//     snapshot.
func TestSnapshotStandInTakesAndRestoresASnapshot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	if err := cp.InstallSnapshotStorage(ctx, cdi.Controller, 60*time.Second); err != nil {
		cancel()
		t.Fatal(err)
	}
	cancel()
	sp := cp.MustGet(t, harness.StorageProfileKind, "", harness.SnapshotStorageClass)
	t.Logf("StorageProfile %s, written by cdi-controller: status %v", sp.GetName(), sp.Object["status"])
	if err := cp.SetSnapshotDuration(snapshotCutToReady); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.SetSnapshotDuration(0) })

	const (
		ns       = "e2e-snapshot-standin"
		size     = "1Gi"
		snapshot = "golden-snapshot"
	)
	inNamespace(t, ns)
	source := snapshotClaim(ns, "golden", size, "")
	cp.MustApply(t, source)
	deleteOnCleanup(t, source)
	sourcePV := waitSnapshotClaimBound(t, ns, "golden")
	sourceHandle, _, _ := unstructured.NestedString(sourcePV.Object, "spec", "csi", "volumeHandle")

	vs := harness.MustObject(fmt.Sprintf(`
apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshot
metadata:
  name: %s
  namespace: %s
spec:
  volumeSnapshotClassName: %s
  source:
    persistentVolumeClaimName: golden
`, snapshot, ns, harness.SnapshotClassName))
	cp.MustApply(t, vs)
	deleteOnCleanup(t, vs)

	// Bound by the snapshot controller to the content it made, in flight.
	var contentName string
	cp.Eventually(t, 60*time.Second, "VolumeSnapshot "+ns+"/"+snapshot+" bound to a content the snapshot driver is still cutting (readyToUse false, a snapshotHandle)", func(ctx context.Context) error {
		u, err := cp.Existing(ctx, harness.VolumeSnapshot, ns, snapshot)
		if err != nil {
			return err
		}
		contentName, _, _ = unstructured.NestedString(u.Object, "status", "boundVolumeSnapshotContentName")
		if contentName == "" {
			return fmt.Errorf("status %v: not bound yet", u.Object["status"])
		}
		c, err := cp.Existing(ctx, harness.VolumeSnapshotContent, "", contentName)
		if err != nil {
			return err
		}
		if _, ok, _ := unstructured.NestedString(c.Object, "status", "snapshotHandle"); !ok {
			return fmt.Errorf("VolumeSnapshotContent %s status %v: no snapshotHandle yet", contentName, c.Object["status"])
		}
		if ready, ok, _ := unstructured.NestedBool(c.Object, "status", "readyToUse"); !ok || ready {
			return fmt.Errorf("VolumeSnapshotContent %s status %v: want readyToUse false while the driver has not finished", contentName, c.Object["status"])
		}
		return nil
	})
	u := cp.MustGet(t, harness.VolumeSnapshot, ns, snapshot)
	content := cp.MustGet(t, harness.VolumeSnapshotContent, "", contentName)
	for _, c := range []struct {
		field []string
		want  string
	}{
		{[]string{"spec", "driver"}, harness.SnapshotCSIDriverName},
		{[]string{"spec", "deletionPolicy"}, "Delete"},
		{[]string{"spec", "volumeSnapshotClassName"}, harness.SnapshotClassName},
		{[]string{"spec", "sourceVolumeMode"}, "Filesystem"},
		{[]string{"spec", "source", "volumeHandle"}, sourceHandle},
		{[]string{"spec", "volumeSnapshotRef", "name"}, snapshot},
		{[]string{"spec", "volumeSnapshotRef", "namespace"}, ns},
		{[]string{"spec", "volumeSnapshotRef", "uid"}, string(u.GetUID())},
	} {
		if got, _, _ := unstructured.NestedString(content.Object, c.field...); got != c.want {
			t.Errorf("VolumeSnapshotContent %s %s = %q, want %q", contentName, strings.Join(c.field, "."), got, c.want)
		}
	}
	if want := "snapcontent-" + string(u.GetUID()); contentName != want {
		t.Errorf("the snapshot is bound to content %s, want the snapshot controller's %s", contentName, want)
	}
	if !slices.Contains(content.GetFinalizers(), "snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection") {
		t.Errorf("VolumeSnapshotContent %s finalizers %v: want the snapshot controller's volumesnapshotcontent-bound-protection", contentName, content.GetFinalizers())
	}

	// Ready, with the source PV's capacity as its restore size.
	capacity := resource.MustParse(size)
	cp.Eventually(t, 60*time.Second, "VolumeSnapshot "+ns+"/"+snapshot+" readyToUse with restoreSize "+size, func(ctx context.Context) error {
		u, err := cp.Existing(ctx, harness.VolumeSnapshot, ns, snapshot)
		if err != nil {
			return err
		}
		if ready, _, _ := unstructured.NestedBool(u.Object, "status", "readyToUse"); !ready {
			return fmt.Errorf("status %v: not ready", u.Object["status"])
		}
		rs, _, _ := unstructured.NestedString(u.Object, "status", "restoreSize")
		if q, err := resource.ParseQuantity(rs); err != nil || q.Cmp(capacity) != 0 {
			return fmt.Errorf("status %v: restoreSize %q, want %s", u.Object["status"], rs, size)
		}
		if _, ok, _ := unstructured.NestedString(u.Object, "status", "creationTime"); !ok {
			return fmt.Errorf("status %v: no creationTime", u.Object["status"])
		}
		return nil
	})
	content = cp.MustGet(t, harness.VolumeSnapshotContent, "", contentName)
	if rs, _, _ := unstructured.NestedInt64(content.Object, "status", "restoreSize"); rs != capacity.Value() {
		t.Errorf("VolumeSnapshotContent %s status.restoreSize %d, want the source PV's capacity %d", contentName, rs, capacity.Value())
	}
	if _, ok := content.GetAnnotations()["snapshot.storage.kubernetes.io/volumesnapshot-being-created"]; ok {
		t.Errorf("VolumeSnapshotContent %s still annotated volumesnapshot-being-created once ready: %v", contentName, content.GetAnnotations())
	}
	u = cp.MustGet(t, harness.VolumeSnapshot, ns, snapshot)
	for _, f := range []string{"snapshot.storage.kubernetes.io/volumesnapshot-as-source-protection", "snapshot.storage.kubernetes.io/volumesnapshot-bound-protection"} {
		if !slices.Contains(u.GetFinalizers(), f) {
			t.Errorf("VolumeSnapshot %s finalizers %v: want the snapshot controller's %s", snapshot, u.GetFinalizers(), f)
		}
	}
	t.Logf("VolumeSnapshot %s/%s: status %v; VolumeSnapshotContent %s: spec %v, status %v", ns, snapshot, u.Object["status"], contentName, content.Object["spec"], content.Object["status"])

	// Restored, and a claim too small for it refused.
	tooSmall := snapshotClaim(ns, "too-small", "512Mi", snapshot)
	restored := snapshotClaim(ns, "restored", size, snapshot)
	cp.MustApply(t, tooSmall, restored)
	deleteOnCleanup(t, restored)
	deleteOnCleanup(t, tooSmall)
	restoredPV := waitSnapshotClaimBound(t, ns, "restored")
	if h, _, _ := unstructured.NestedString(restoredPV.Object, "spec", "csi", "volumeHandle"); h == sourceHandle {
		t.Errorf("the restored claim is bound to the source's volume %s", h)
	}
	cp.Eventually(t, 30*time.Second, "the provisioner's finalizer gone from VolumeSnapshot "+snapshot, func(ctx context.Context) error {
		u, err := cp.Existing(ctx, harness.VolumeSnapshot, ns, snapshot)
		if err != nil {
			return err
		}
		if slices.Contains(u.GetFinalizers(), "provisioner.storage.kubernetes.io/volumesnapshot-as-source-protection") {
			return fmt.Errorf("finalizers %v", u.GetFinalizers())
		}
		return nil
	})
	cp.Consistently(t, 3*time.Second, "PVC "+ns+"/too-small (512Mi, less than the snapshot's restoreSize) stays Pending", func(ctx context.Context) error {
		u, err := cp.Existing(ctx, harness.PVC, ns, "too-small")
		if err != nil {
			return err
		}
		if phase, _, _ := unstructured.NestedString(u.Object, "status", "phase"); phase != "Pending" {
			return fmt.Errorf("phase %s", phase)
		}
		return nil
	})
	// The snapshot controller keeps a snapshot that a Pending claim
	// restores (checkandRemoveSnapshotFinalizersAndCheckandDeleteContent,
	// isVolumeBeingCreatedFromSnapshot): the refused claim goes first.
	cp.MustDelete(t, harness.PVC, ns, "too-small")
	cp.WaitGone(t, 60*time.Second, harness.PVC, ns, "too-small")

	// Deleted: the content with the snapshot, on the storage too.
	cp.MustDelete(t, harness.VolumeSnapshot, ns, snapshot)
	cp.WaitGone(t, 60*time.Second, harness.VolumeSnapshotContent, "", contentName)
	cp.WaitGone(t, 60*time.Second, harness.VolumeSnapshot, ns, snapshot)
	handle, _, _ := unstructured.NestedString(content.Object, "status", "snapshotHandle")
	cp.Eventually(t, 10*time.Second, "the snapshot driver to log the deletion of snapshot "+handle, func(context.Context) error {
		b, err := os.ReadFile(filepath.Join(cp.LogDir, "standins.log"))
		if err != nil {
			return err
		}
		if !strings.Contains(string(b), "deleted snapshot "+handle+" on the storage") {
			return errors.New("not logged")
		}
		return nil
	})
}

// snapshotClaim returns a ReadWriteOnce Filesystem PVC of the snapshot class
// requesting size, restored from VolumeSnapshot snapshot when it is set.
func snapshotClaim(ns, name, size, snapshot string) *unstructured.Unstructured {
	pvc := harness.MustObject(fmt.Sprintf(`
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: %s
  namespace: %s
spec:
  storageClassName: %s
  accessModes: [ReadWriteOnce]
  volumeMode: Filesystem
  resources:
    requests:
      storage: %s
`, name, ns, harness.SnapshotStorageClass, size))
	if snapshot != "" {
		_ = unstructured.SetNestedField(pvc.Object, map[string]any{
			"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": snapshot,
		}, "spec", "dataSourceRef")
	}
	return pvc
}

// waitSnapshotClaimBound waits until PVC ns/name is Bound and returns its PV, which
// must be of the snapshot driver.
func waitSnapshotClaimBound(t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	var pv *unstructured.Unstructured
	cp.Eventually(t, 60*time.Second, "PVC "+ns+"/"+name+" Bound to a PV of "+harness.SnapshotCSIDriverName, func(ctx context.Context) error {
		u, err := cp.Existing(ctx, harness.PVC, ns, name)
		if err != nil {
			return err
		}
		phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		volume, _, _ := unstructured.NestedString(u.Object, "spec", "volumeName")
		if phase != "Bound" || volume == "" {
			return fmt.Errorf("phase %q, volume %q", phase, volume)
		}
		if pv, err = cp.Existing(ctx, harness.PV, "", volume); err != nil {
			return err
		}
		if d, _, _ := unstructured.NestedString(pv.Object, "spec", "csi", "driver"); d != harness.SnapshotCSIDriverName {
			return fmt.Errorf("PV %s is of driver %q", volume, d)
		}
		return nil
	})
	return pv
}
