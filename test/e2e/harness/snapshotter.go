package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// The snapshot stand-ins: what a CSI driver with snapshot support and its
// csi-snapshotter sidecar do for SnapshotCSIDriverName, and what
// external-provisioner does with a claim restored from a VolumeSnapshot. The
// common snapshot controller runs for real (snapshot.go): it creates the
// VolumeSnapshotContent of a VolumeSnapshot, binds them, adds the content's
// finalizer, copies the content's status into the snapshot's and, when the
// snapshot is deleted, annotates the content and deletes it.
//
// Snapshotter (kubernetes-csi/external-snapshotter v8.4.0,
// pkg/sidecar-controller/snapshot_controller.go, and the driver's side of
// pkg/snapshotter/snapshotter.go), for the contents of SnapshotCSIDriverName
// (snapshot_controller_base.go isDriverMatch: a source handle, the driver,
// and the class's driver when the class exists), in syncContent's order:
//   - a content being deleted (shouldDelete: a deletion timestamp and the
//     common controller's volumesnapshot-being-deleted annotation and not
//     the sidecar's volumesnapshot-being-created one, or a pre-provisioned
//     content bound to nothing) with deletionPolicy Delete and a
//     status.snapshotHandle: the driver deletes the snapshot
//     (deleteCSISnapshotOperation, DeleteSnapshot), the sidecar clears
//     status.snapshotHandle, readyToUse, creationTime and restoreSize
//     (clearVolumeContentStatus), then removes the content finalizer
//     snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection
//     (removeContentFinalizer), which lets the API server delete it;
//   - a dynamically provisioned content (spec.source.volumeHandle) with no
//     status, or one not ready yet: createSnapshotWrapper. The class must
//     exist (getCSISnapshotInput); the sidecar annotates the content
//     snapshot.storage.kubernetes.io/volumesnapshot-being-created: "yes"
//     (setAnnVolumeSnapshotBeingCreated), calls CreateSnapshot with the name
//     snapshot-<VolumeSnapshot UID> (csi_handler.go makeSnapshotName with
//     the sidecar's default prefix and no truncation), writes the status
//     (updateSnapshotContentStatus: snapshotHandle, readyToUse,
//     creationTime in Unix nanoseconds, restoreSize when the driver reports
//     a size, fields already set kept) and removes the annotation again
//     (removeAnnVolumeSnapshotBeingCreated). CreateSnapshot is idempotent
//     by name, so a content not ready yet is cut once and polled by calling
//     it again, as the sidecar requeues it;
//   - a ready content: only the being-created annotation is removed, if it
//     is still there;
//   - a pre-provisioned content (spec.source.snapshotHandle): its status
//     from ListSnapshots (checkandUpdateContentStatusOperation,
//     GetSnapshotStatus).
//
// A failure is written as upstream writes it (updateContentErrorStatusWithEvent:
// status.error with the message, readyToUse false); the Warning event it
// also records is not. Group snapshots are not played (the controller runs
// without its CSIVolumeGroupSnapshot gate).
//
// The driver (CSI CreateSnapshot, DeleteSnapshot, ListSnapshots): a
// snapshot of a volume of the driver (a PV of SnapshotCSIDriverName with
// that volume handle) is cut at once, with id e2e-<name> and size the
// volume's capacity, so restoreSize is the source PV's capacity; it is
// ready at once, or, with SetSnapshotDuration(d), d after it was cut (a
// driver reports ready_to_use false while it uploads or copies the cut
// snapshot, and CreateSnapshot is called again until it says true). A
// second CreateSnapshot of the same name from another volume is refused
// (AlreadyExists), a volume the driver does not have is NotFound; both are
// final errors (snapshot_controller.go isCSIFinalError), so the
// being-created annotation is removed. DeleteSnapshot of an unknown id
// succeeds, as the CSI spec asks. The driver's snapshots live in the test
// binary's memory for the run.

// Snapshot API names the stand-ins read and write.
const (
	snapshotGroup = "snapshot.storage.k8s.io"
	// annVolumeSnapshotBeingCreated and annVolumeSnapshotBeingDeleted
	// (external-snapshotter pkg/utils/util.go AnnVolumeSnapshotBeingCreated,
	// AnnVolumeSnapshotBeingDeleted): the first the sidecar sets while it
	// waits on CreateSnapshot, the second the common controller sets on the
	// content of a deleted snapshot.
	annVolumeSnapshotBeingCreated = "snapshot.storage.kubernetes.io/volumesnapshot-being-created"
	annVolumeSnapshotBeingDeleted = "snapshot.storage.kubernetes.io/volumesnapshot-being-deleted"
	// annVolumeGroupSnapshotHandle marks a member of a group snapshot
	// (pkg/utils/util.go VolumeGroupSnapshotHandleAnnotation).
	annVolumeGroupSnapshotHandle = "groupsnapshot.storage.k8s.io/volumeGroupSnapshotHandle"
	// volumeSnapshotContentFinalizer is the common controller's finalizer
	// on a bound content, which the sidecar removes once the snapshot is
	// deleted (pkg/utils/util.go VolumeSnapshotContentFinalizer).
	volumeSnapshotContentFinalizer = "snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection"
	// provisionerSnapshotFinalizer is external-provisioner's (v6.4.0)
	// finalizer on a VolumeSnapshot it is restoring a volume from
	// (pkg/controller/controller.go snapshotSourceProtectionFinalizer).
	provisionerSnapshotFinalizer = "provisioner.storage.kubernetes.io/volumesnapshot-as-source-protection"
	// annAllowVolumeModeChange, on a content, lets a claim restore it in
	// another volume mode (controller.go annAllowVolumeModeChange).
	annAllowVolumeModeChange = "snapshot.storage.kubernetes.io/allow-volume-mode-change"
	// csiSnapshotNamePrefix is csi-snapshotter's default
	// --snapshot-name-prefix (cmd/csi-snapshotter/main.go).
	csiSnapshotNamePrefix = "snapshot"
)

// driverSnapshot is one snapshot the snapshot driver holds.
type driverSnapshot struct {
	id, name, sourceVolume string
	size                   int64
	cut                    time.Time
}

// SetSnapshotDuration makes the snapshot driver report a new snapshot not
// ready to use (CSI ready_to_use false) until d after it was cut: its
// VolumeSnapshotContent, and through the snapshot controller its
// VolumeSnapshot, say readyToUse false meanwhile, with a snapshotHandle and
// a creationTime already. 0, the default, makes it ready at once. A
// scenario that sets it resets it when it ends. It fails when the stand-ins
// are not running.
func (cp *ControlPlane) SetSnapshotDuration(d time.Duration) error {
	if cp.standIns == nil {
		return fmt.Errorf("the snapshot stand-in is not running")
	}
	cp.standIns.snapshotDuration.Store(int64(d))
	cp.standIns.logf("snapshot-duration", "snapshot driver: a snapshot is ready %s after it is cut from now on", d)
	return nil
}

// snapshotContent is what the sidecar reads and writes of a
// VolumeSnapshotContent (client/v8 apis/volumesnapshot/v1 types.go, by
// their JSON names).
type snapshotContent struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		VolumeSnapshotRef corev1.ObjectReference `json:"volumeSnapshotRef"`
		Source            struct {
			VolumeHandle   *string `json:"volumeHandle,omitempty"`
			SnapshotHandle *string `json:"snapshotHandle,omitempty"`
		} `json:"source"`
		VolumeSnapshotClassName *string                      `json:"volumeSnapshotClassName,omitempty"`
		DeletionPolicy          string                       `json:"deletionPolicy"`
		Driver                  string                       `json:"driver"`
		SourceVolumeMode        *corev1.PersistentVolumeMode `json:"sourceVolumeMode,omitempty"`
	} `json:"spec"`
	Status *contentStatus `json:"status,omitempty"`
}

// contentStatus is a VolumeSnapshotContent's status
// (VolumeSnapshotContentStatus).
type contentStatus struct {
	SnapshotHandle            *string        `json:"snapshotHandle,omitempty"`
	CreationTime              *int64         `json:"creationTime,omitempty"`
	RestoreSize               *int64         `json:"restoreSize,omitempty"`
	ReadyToUse                *bool          `json:"readyToUse,omitempty"`
	Error                     *snapshotError `json:"error,omitempty"`
	VolumeGroupSnapshotHandle *string        `json:"volumeGroupSnapshotHandle,omitempty"`
}

// snapshotError is VolumeSnapshotError.
type snapshotError struct {
	Time    *metav1.Time `json:"time,omitempty"`
	Message *string      `json:"message,omitempty"`
}

// volumeSnapshot is what external-provisioner reads of a VolumeSnapshot.
type volumeSnapshot struct {
	metav1.ObjectMeta `json:"metadata"`
	Status            *struct {
		BoundVolumeSnapshotContentName *string            `json:"boundVolumeSnapshotContentName,omitempty"`
		ReadyToUse                     *bool              `json:"readyToUse,omitempty"`
		RestoreSize                    *resource.Quantity `json:"restoreSize,omitempty"`
	} `json:"status,omitempty"`
}

// fromObject decodes u into out through its JSON form.
func fromObject(u *unstructured.Unstructured, out any) error {
	b, err := json.Marshal(u.Object)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// patchOp is one JSON patch operation (pkg/utils/patch.go PatchOp).
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// patchContent JSON-patches the content, or its status subresource, as
// pkg/utils/patch.go PatchVolumeSnapshotContent does.
func (s *standIns) patchContent(ctx context.Context, name string, ops []patchOp, subresources ...string) error {
	ri, err := s.cp.Resource(VolumeSnapshotContent, "")
	if err != nil {
		return err
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	_, err = ri.Patch(ctx, name, types.JSONPatchType, data, metav1.PatchOptions{}, subresources...)
	return err
}

// snapshotter plays csi-snapshotter and the snapshot driver for every
// VolumeSnapshotContent of SnapshotCSIDriverName.
func (s *standIns) snapshotter(ctx context.Context) {
	ri, err := s.cp.Resource(VolumeSnapshotContent, "")
	if err != nil {
		s.logf("list-contents", "snapshotter: %v", err)
		return
	}
	l, err := ri.List(ctx, metav1.ListOptions{})
	if err != nil {
		s.logf("list-contents", "snapshotter: cannot list VolumeSnapshotContents: %v", err)
		return
	}
	for i := range l.Items {
		var c snapshotContent
		if err := fromObject(&l.Items[i], &c); err != nil {
			s.logf("content/"+l.Items[i].GetName(), "snapshotter: cannot read VolumeSnapshotContent %s: %v", l.Items[i].GetName(), err)
			continue
		}
		if !s.driverMatch(ctx, &c) {
			continue
		}
		s.syncContent(ctx, &c)
	}
}

// driverMatch is snapshot_controller_base.go isDriverMatch: the content
// has a source handle and is of the snapshot driver, and so is its class
// when that exists.
func (s *standIns) driverMatch(ctx context.Context, c *snapshotContent) bool {
	if c.Spec.Source.VolumeHandle == nil && c.Spec.Source.SnapshotHandle == nil {
		return false
	}
	if c.Spec.Driver != SnapshotCSIDriverName {
		return false
	}
	if c.Spec.VolumeSnapshotClassName != nil {
		if class, err := s.cp.Get(ctx, VolumeSnapshotClass, "", *c.Spec.VolumeSnapshotClassName); err == nil && class != nil {
			if d, _, _ := unstructured.NestedString(class.Object, "driver"); d != SnapshotCSIDriverName {
				return false
			}
		}
	}
	return true
}

// syncContent is snapshot_controller.go syncContent.
func (s *standIns) syncContent(ctx context.Context, c *snapshotContent) {
	key := "content/" + c.Name
	if shouldDeleteContent(c) {
		if c.Spec.DeletionPolicy == "Delete" && c.Status != nil && c.Status.SnapshotHandle != nil && c.Status.VolumeGroupSnapshotHandle == nil {
			// deleteCSISnapshotOperation: DeleteSnapshot, then
			// clearVolumeContentStatus; the finalizer stays until both
			// succeeded, so that no snapshot leaks.
			id := *c.Status.SnapshotHandle
			s.deleteDriverSnapshot(id)
			finalizers, err := s.clearContentStatus(ctx, c.Name)
			if err != nil {
				s.logf(key, "snapshotter: VolumeSnapshotContent %s: deleted snapshot %s, cannot clear the status: %v", c.Name, id, err)
				return
			}
			s.logf(key+"/deleted", "snapshotter: VolumeSnapshotContent %s: deleted snapshot %s on the storage and cleared its status", c.Name, id)
			// The finalizer is removed from the content the update
			// returned, as upstream continues with it.
			c.Finalizers = finalizers
		}
		if slices.Contains(c.Finalizers, volumeSnapshotContentFinalizer) {
			// removeContentFinalizer.
			rest := slices.DeleteFunc(slices.Clone(c.Finalizers), func(f string) bool { return f == volumeSnapshotContentFinalizer })
			if err := s.patchContent(ctx, c.Name, []patchOp{{Op: "replace", Path: "/metadata/finalizers", Value: rest}}); err != nil {
				s.logf(key, "snapshotter: cannot remove finalizer %s from VolumeSnapshotContent %s: %v", volumeSnapshotContentFinalizer, c.Name, err)
				return
			}
			s.logf(key, "snapshotter: removed finalizer %s from VolumeSnapshotContent %s (deletionPolicy %s)", volumeSnapshotContentFinalizer, c.Name, c.Spec.DeletionPolicy)
		}
		return
	}
	_, groupMember := c.Annotations[annVolumeGroupSnapshotHandle]
	if c.Spec.Source.VolumeHandle != nil && c.Status == nil && !groupMember {
		s.createSnapshot(ctx, c)
		return
	}
	if c.Status != nil && c.Status.ReadyToUse != nil && *c.Status.ReadyToUse {
		s.removeBeingCreated(ctx, c)
		return
	}
	// checkandUpdateContentStatusOperation.
	if h := c.Spec.Source.SnapshotHandle; h != nil {
		snap := s.snapshotByID(*h)
		if snap == nil {
			s.contentError(ctx, c, fmt.Sprintf("Failed to check and update snapshot content: failed to list snapshot for content %s: %q", c.Name, "can not find snapshot for snapshotID "+*h))
			return
		}
		if _, err := s.updateContentStatus(ctx, c.Name, snap); err != nil {
			s.contentError(ctx, c, fmt.Sprintf("Failed to check and update snapshot content: %v", err))
		}
		return
	}
	if !groupMember {
		s.createSnapshot(ctx, c)
	}
}

// shouldDeleteContent is snapshot_controller.go shouldDelete.
func shouldDeleteContent(c *snapshotContent) bool {
	if c.DeletionTimestamp == nil {
		return false
	}
	if c.Spec.Source.SnapshotHandle != nil && c.Spec.VolumeSnapshotRef.UID == "" {
		return true
	}
	if _, ok := c.Annotations[annVolumeSnapshotBeingCreated]; ok {
		return false
	}
	_, ok := c.Annotations[annVolumeSnapshotBeingDeleted]
	return ok
}

// createSnapshot is createSnapshotWrapper followed by what createSnapshot
// does with its error.
func (s *standIns) createSnapshot(ctx context.Context, c *snapshotContent) {
	key := "content/" + c.Name
	// getCSISnapshotInput: a dynamically provisioned content needs its class.
	if c.Spec.VolumeSnapshotClassName == nil {
		s.contentError(ctx, c, fmt.Sprintf("Failed to create snapshot: failed to get input parameters to create snapshot for content %s: %q", c.Name, fmt.Sprintf("failed to take snapshot %s without a snapshot class", c.Name)))
		return
	}
	class, err := s.cp.Get(ctx, VolumeSnapshotClass, "", *c.Spec.VolumeSnapshotClassName)
	if err != nil || class == nil {
		if err == nil {
			err = fmt.Errorf("volumesnapshotclass.snapshot.storage.k8s.io %q not found", *c.Spec.VolumeSnapshotClassName)
		}
		s.contentError(ctx, c, fmt.Sprintf("Failed to create snapshot: failed to get input parameters to create snapshot for content %s: %q", c.Name, err.Error()))
		return
	}
	// setAnnVolumeSnapshotBeingCreated: the whole annotation map, replaced.
	if _, ok := c.Annotations[annVolumeSnapshotBeingCreated]; !ok {
		anns := map[string]string{}
		for k, v := range c.Annotations {
			anns[k] = v
		}
		anns[annVolumeSnapshotBeingCreated] = "yes"
		if err := s.patchContent(ctx, c.Name, []patchOp{{Op: "replace", Path: "/metadata/annotations", Value: anns}}); err != nil {
			s.logf(key, "snapshotter: cannot annotate VolumeSnapshotContent %s %s: %v", c.Name, annVolumeSnapshotBeingCreated, err)
			return
		}
		c.Annotations = anns
	}
	snap, final, err := s.driverCreateSnapshot(ctx, c)
	if err != nil {
		if final {
			s.removeBeingCreated(ctx, c)
		}
		s.contentError(ctx, c, fmt.Sprintf("Failed to create snapshot: failed to take snapshot of the volume %s: %q", ptrString(c.Spec.Source.VolumeHandle), err.Error()))
		return
	}
	ready, err := s.updateContentStatus(ctx, c.Name, snap)
	if err != nil {
		s.contentError(ctx, c, fmt.Sprintf("Failed to create snapshot: error updating status for volume snapshot content %s: %v", c.Name, err))
		return
	}
	s.removeBeingCreated(ctx, c)
	s.logf(key, "snapshotter: VolumeSnapshotContent %s: snapshot %s of volume %s (%d bytes), readyToUse %t", c.Name, snap.id, snap.sourceVolume, snap.size, ready)
}

// driverCreateSnapshot is the driver's CreateSnapshot as csi_handler.go
// CreateSnapshot calls it. final says whether an error is final in the
// sense of isCSIFinalError: the driver's own refusals are; the handler's
// checks before the call are not gRPC errors and so are not.
func (s *standIns) driverCreateSnapshot(ctx context.Context, c *snapshotContent) (*driverSnapshot, bool, error) {
	if c.Spec.VolumeSnapshotRef.UID == "" {
		return nil, false, fmt.Errorf("cannot create snapshot. Snapshot content %s not bound to a snapshot", c.Name)
	}
	if c.Spec.Source.VolumeHandle == nil {
		return nil, false, fmt.Errorf("cannot create snapshot. Volume handle not found in snapshot content %s", c.Name)
	}
	name := csiSnapshotNamePrefix + "-" + string(c.Spec.VolumeSnapshotRef.UID)
	volume := *c.Spec.Source.VolumeHandle
	if snap, ok := s.snapshots[name]; ok {
		if snap.sourceVolume != volume {
			return nil, true, fmt.Errorf("rpc error: code = AlreadyExists desc = snapshot %s exists, of volume %s, not %s", name, snap.sourceVolume, volume)
		}
		return snap, false, nil
	}
	pvs, err := s.cp.Kube.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, false, err
	}
	for _, pv := range pvs.Items {
		if pv.Spec.CSI == nil || pv.Spec.CSI.Driver != SnapshotCSIDriverName || pv.Spec.CSI.VolumeHandle != volume {
			continue
		}
		capacity := pv.Spec.Capacity[corev1.ResourceStorage]
		snap := &driverSnapshot{id: "e2e-" + name, name: name, sourceVolume: volume, size: capacity.Value(), cut: time.Now()}
		s.snapshots[name] = snap
		return snap, false, nil
	}
	return nil, true, fmt.Errorf("rpc error: code = NotFound desc = volume %s not found", volume)
}

// snapshotByID returns the driver's snapshot of that id, or nil.
func (s *standIns) snapshotByID(id string) *driverSnapshot {
	for _, snap := range s.snapshots {
		if snap.id == id {
			return snap
		}
	}
	return nil
}

// deleteDriverSnapshot is the driver's DeleteSnapshot: idempotent.
func (s *standIns) deleteDriverSnapshot(id string) {
	if snap := s.snapshotByID(id); snap != nil {
		delete(s.snapshots, snap.name)
	}
}

// snapshotReady is the driver's ready_to_use of snap (SetSnapshotDuration).
func (s *standIns) snapshotReady(snap *driverSnapshot) bool {
	return time.Since(snap.cut) >= time.Duration(s.snapshotDuration.Load())
}

// updateContentStatus is updateSnapshotContentStatus: the latest content's
// status gets what is missing of snap (handle, creation time, restore
// size) and its readiness, through a JSON patch of /status on the status
// subresource. It returns the readiness written.
func (s *standIns) updateContentStatus(ctx context.Context, name string, snap *driverSnapshot) (bool, error) {
	ready := s.snapshotReady(snap)
	u, err := s.cp.Existing(ctx, VolumeSnapshotContent, "", name)
	if err != nil {
		return false, fmt.Errorf("error get snapshot content %s from api server: %w", name, err)
	}
	var c snapshotContent
	if err := fromObject(u, &c); err != nil {
		return false, err
	}
	created := snap.cut.UnixNano()
	updated := false
	status := c.Status
	if status == nil {
		status = &contentStatus{SnapshotHandle: &snap.id, ReadyToUse: &ready, CreationTime: &created}
		if snap.size > 0 {
			status.RestoreSize = &snap.size
		}
		updated = true
	} else {
		if status.SnapshotHandle == nil {
			status.SnapshotHandle = &snap.id
			updated = true
		}
		if status.ReadyToUse == nil || *status.ReadyToUse != ready {
			status.ReadyToUse = &ready
			updated = true
			if ready {
				status.Error = nil
			}
		}
		if status.CreationTime == nil {
			status.CreationTime = &created
			updated = true
		}
		if status.RestoreSize == nil && snap.size > 0 {
			status.RestoreSize = &snap.size
			updated = true
		}
	}
	if !updated {
		return ready, nil
	}
	if err := s.patchContent(ctx, name, []patchOp{{Op: "replace", Path: "/status", Value: status}}, "status"); err != nil {
		return false, fmt.Errorf("snapshot controller failed to update %s on API server: %w", name, err)
	}
	return ready, nil
}

// clearContentStatus is clearVolumeContentStatus: the latest content's
// snapshotHandle, readyToUse, creationTime and restoreSize removed, by an
// update of the status subresource. It returns the finalizers of the
// content the update returned.
func (s *standIns) clearContentStatus(ctx context.Context, name string) ([]string, error) {
	ri, err := s.cp.Resource(VolumeSnapshotContent, "")
	if err != nil {
		return nil, err
	}
	u, err := ri.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("error get snapshot content %s from api server: %w", name, err)
	}
	if status, ok, _ := unstructured.NestedMap(u.Object, "status"); ok {
		for _, f := range []string{"snapshotHandle", "readyToUse", "creationTime", "restoreSize"} {
			delete(status, f)
		}
		u.Object["status"] = status
	}
	updated, err := ri.UpdateStatus(ctx, u, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return updated.GetFinalizers(), nil
}

// removeBeingCreated is removeAnnVolumeSnapshotBeingCreated.
func (s *standIns) removeBeingCreated(ctx context.Context, c *snapshotContent) {
	if _, ok := c.Annotations[annVolumeSnapshotBeingCreated]; !ok {
		return
	}
	path := "/metadata/annotations/" + strings.ReplaceAll(annVolumeSnapshotBeingCreated, "/", "~1")
	if err := s.patchContent(ctx, c.Name, []patchOp{{Op: "remove", Path: path}}); err != nil {
		s.logf("content/"+c.Name, "snapshotter: cannot remove annotation %s from VolumeSnapshotContent %s: %v", annVolumeSnapshotBeingCreated, c.Name, err)
		return
	}
	delete(c.Annotations, annVolumeSnapshotBeingCreated)
}

// contentError is updateContentErrorStatusWithEvent without the event:
// status.error (time, message) and readyToUse false, unless the same
// message is there already.
func (s *standIns) contentError(ctx context.Context, c *snapshotContent, message string) {
	key := "content/" + c.Name
	s.logf(key, "snapshotter: VolumeSnapshotContent %s: %s", c.Name, message)
	if c.Status != nil && c.Status.Error != nil && c.Status.Error.Message != nil && *c.Status.Error.Message == message {
		return
	}
	ready := false
	e := &snapshotError{Time: &metav1.Time{Time: time.Now()}, Message: &message}
	var ops []patchOp
	if c.Status == nil {
		ops = []patchOp{{Op: "replace", Path: "/status", Value: &contentStatus{ReadyToUse: &ready, Error: e}}}
	} else {
		ops = []patchOp{{Op: "replace", Path: "/status/error", Value: e}, {Op: "replace", Path: "/status/readyToUse", Value: &ready}}
	}
	if err := s.patchContent(ctx, c.Name, ops, "status"); err != nil {
		s.logf(key+"/error", "snapshotter: cannot write the error status of VolumeSnapshotContent %s: %v", c.Name, err)
	}
}

func ptrString(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// snapshotRef is a claim's data source when it is a VolumeSnapshot, as
// external-provisioner's dataSource reads it: dataSource first, else
// dataSourceRef (whose namespace, a cross-namespace source, needs a
// feature gate the suite does not enable).
type snapshotRef struct {
	Name, APIGroup string
	Namespace      *string
}

// restoreSource returns the claim's VolumeSnapshot source, if it has one.
// Like external-provisioner's Provision it decides by kind only; the API
// group is checked after (restorable).
func restoreSource(pvc *corev1.PersistentVolumeClaim) (snapshotRef, bool) {
	if ds := pvc.Spec.DataSource; ds != nil {
		if ds.Kind != "VolumeSnapshot" {
			return snapshotRef{}, false
		}
		return snapshotRef{Name: ds.Name, APIGroup: ptrOr(ds.APIGroup)}, true
	}
	if ref := pvc.Spec.DataSourceRef; ref != nil && ref.Kind == "VolumeSnapshot" {
		return snapshotRef{Name: ref.Name, APIGroup: ptrOr(ref.APIGroup), Namespace: ref.Namespace}, true
	}
	return snapshotRef{}, false
}

func ptrOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// restorable makes external-provisioner's checks before its CreateVolume
// from a snapshot (kubernetes-csi/external-provisioner v6.4.0,
// pkg/controller/controller.go: Provision's data source kind and API group
// and the driver's capability, dataSource, getSnapshotSource), then puts
// its finalizer on the snapshot (setSnapshotFinalizer) and asks the driver
// for the snapshot. It returns whether the volume can be made now; when not,
// the claim waits, as external-provisioner retries it.
func (s *standIns) restorable(ctx context.Context, key string, pvc *corev1.PersistentVolumeClaim, sc *storagev1.StorageClass, request resource.Quantity, ref snapshotRef) bool {
	wait := func(format string, args ...any) bool {
		s.logf(key, "provisioner: PVC %s/%s restores VolumeSnapshot %s: %s; waiting", pvc.Namespace, pvc.Name, ref.Name, fmt.Sprintf(format, args...))
		return false
	}
	if ref.APIGroup != snapshotGroup {
		return wait("the PVC source does not belong to the right APIGroup. Expected %s, Got %s", snapshotGroup, ref.APIGroup)
	}
	// checkDriverCapabilities: only the snapshot driver has
	// CREATE_DELETE_SNAPSHOT.
	if sc.Provisioner != SnapshotCSIDriverName {
		return wait("CSI driver %s does not support snapshot restore (no CREATE_DELETE_SNAPSHOT capability)", sc.Provisioner)
	}
	if ref.Namespace != nil && *ref.Namespace != "" {
		return wait("dataSourceRef namespace specified but the CrossNamespaceVolumeDataSource feature is disabled")
	}
	u, err := s.cp.Get(ctx, VolumeSnapshot, pvc.Namespace, ref.Name)
	if err != nil || u == nil {
		if err == nil {
			err = fmt.Errorf("volumesnapshots.%s %q not found", snapshotGroup, ref.Name)
		}
		return wait("error getting snapshot %s from api server: %v", ref.Name, err)
	}
	var vs volumeSnapshot
	if err := fromObject(u, &vs); err != nil {
		return wait("cannot read it: %v", err)
	}
	if vs.DeletionTimestamp != nil && !slices.Contains(vs.Finalizers, provisionerSnapshotFinalizer) {
		return wait("snapshot %s is being deleted", ref.Name)
	}
	if vs.Status == nil || vs.Status.BoundVolumeSnapshotContentName == nil {
		return wait("snapshot %s not bound", ref.Name)
	}
	contentName := *vs.Status.BoundVolumeSnapshotContentName
	cu, err := s.cp.Get(ctx, VolumeSnapshotContent, "", contentName)
	if err != nil || cu == nil {
		return wait("error getting snapshotcontent %s for snapshot %s", contentName, ref.Name)
	}
	var c snapshotContent
	if err := fromObject(cu, &c); err != nil {
		return wait("cannot read VolumeSnapshotContent %s: %v", contentName, err)
	}
	if r := c.Spec.VolumeSnapshotRef; r.UID != vs.UID || r.Namespace != vs.Namespace || r.Name != vs.Name {
		return wait("snapshotcontent %s for snapshot %s is bound to a different snapshot", contentName, ref.Name)
	}
	if c.Spec.Driver != sc.Provisioner {
		return wait("snapshotcontent %s for snapshot %s is not handled by CSI driver of StorageClass %s", contentName, ref.Name, sc.Name)
	}
	if vs.Status.ReadyToUse == nil || !*vs.Status.ReadyToUse {
		return wait("snapshot %s is not Ready", ref.Name)
	}
	if c.Status == nil || c.Status.SnapshotHandle == nil {
		return wait("snapshot handle %s is not available", ref.Name)
	}
	if rs := vs.Status.RestoreSize; rs != nil && request.Value() < rs.Value() {
		return wait("requested volume size %d is less than the size %d for the source snapshot %s", request.Value(), rs.Value(), ref.Name)
	}
	// --prevent-volume-mode-conversion, true by default.
	if m := c.Spec.SourceVolumeMode; m != nil && pvc.Spec.VolumeMode != nil && *m != *pvc.Spec.VolumeMode {
		if ok, err := strconv.ParseBool(c.Annotations[annAllowVolumeModeChange]); err != nil || !ok {
			return wait("requested volume %s/%s modifies the mode of the source volume but does not have permission to do so (%s on snapshotcontent %s)", pvc.Namespace, pvc.Name, annAllowVolumeModeChange, contentName)
		}
	}
	// setSnapshotFinalizer: an update of the whole snapshot.
	if !slices.Contains(u.GetFinalizers(), provisionerSnapshotFinalizer) {
		u.SetFinalizers(append(u.GetFinalizers(), provisionerSnapshotFinalizer))
		ri, err := s.cp.Resource(VolumeSnapshot, pvc.Namespace)
		if err != nil {
			return wait("%v", err)
		}
		if _, err := ri.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
			return wait("cannot add finalizer %s: %v", provisionerSnapshotFinalizer, err)
		}
	}
	s.heldSnapshots[pvc.Namespace+"/"+ref.Name] = true
	// The driver's CreateVolume from the snapshot.
	if s.snapshotByID(*c.Status.SnapshotHandle) == nil {
		return wait("CreateVolume: rpc error: code = NotFound desc = snapshot %s not found", *c.Status.SnapshotHandle)
	}
	return true
}

// releaseSnapshot is removeSnapshotFinalizer: once the volume is made, the
// provisioner's finalizer goes from the snapshot.
func (s *standIns) releaseSnapshot(ctx context.Context, ns, name string) {
	key := "release/" + ns + "/" + name
	ri, err := s.cp.Resource(VolumeSnapshot, ns)
	if err != nil {
		s.logf(key, "provisioner: %v", err)
		return
	}
	u, err := ri.Get(ctx, name, metav1.GetOptions{})
	if isNotFound(err) {
		delete(s.heldSnapshots, ns+"/"+name)
		return
	}
	if err != nil {
		s.logf(key, "provisioner: cannot read VolumeSnapshot %s/%s to remove finalizer %s: %v", ns, name, provisionerSnapshotFinalizer, err)
		return
	}
	if fs := u.GetFinalizers(); slices.Contains(fs, provisionerSnapshotFinalizer) {
		u.SetFinalizers(slices.DeleteFunc(slices.Clone(fs), func(f string) bool { return f == provisionerSnapshotFinalizer }))
		if _, err := ri.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
			if !isNotFound(err) {
				s.logf(key, "provisioner: cannot remove finalizer %s from VolumeSnapshot %s/%s: %v", provisionerSnapshotFinalizer, ns, name, err)
				return
			}
		}
	}
	delete(s.heldSnapshots, ns+"/"+name)
}

// releaseSnapshots is external-provisioner's SnapshotFinalizerController
// sweep (pkg/controller/snapshot_finalizer_controller.go
// sweepOrphanedFinalizers): a snapshot the provisioner holds that no
// Pending claim restores any more (deleted, or made from another source
// meanwhile) is released.
func (s *standIns) releaseSnapshots(ctx context.Context, pvcs []corev1.PersistentVolumeClaim) {
	if len(s.heldSnapshots) == 0 {
		return
	}
	pending := map[string]bool{}
	for i := range pvcs {
		pvc := &pvcs[i]
		if pvc.Status.Phase != corev1.ClaimPending && pvc.Status.Phase != "" {
			continue
		}
		if ref, ok := restoreSource(pvc); ok {
			ns := pvc.Namespace
			if ref.Namespace != nil && *ref.Namespace != "" {
				ns = *ref.Namespace
			}
			pending[ns+"/"+ref.Name] = true
		}
	}
	for held := range s.heldSnapshots {
		if pending[held] {
			continue
		}
		ns, name, _ := strings.Cut(held, "/")
		s.releaseSnapshot(ctx, ns, name)
	}
}
