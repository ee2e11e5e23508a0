package cloneplan

// Clone from a VolumeSnapshot: a DataVolume with spec.source.snapshot, as
// CDI v1.65.0 handles it. The DataVolume controller
// (datavolume/snapshot-clone-controller.go syncSnapshotClone) renders the
// target PVC as for a PVC source, checks the snapshot
// (validateCloneAndSourceSnapshot, validateSnapshotClone), sizes a target
// without a request from the snapshot (detectCloneSize), then either hands
// the claim to the clone populator or, on the legacy path, restores the
// snapshot into a temporary PVC and copies it host-assisted. The populator's
// planner (clone/planner.go computeStrategyForSourceSnapshot) chooses
// between snapshot and host-assisted only. docs/cdi-behaviour.md, "Clone
// from a VolumeSnapshot", has the line ranges.

import (
	"fmt"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
)

// The fallback only a VolumeSnapshot source has: the target class's
// provisioner is not the driver of the snapshot's VolumeSnapshotContent
// (clone/planner.go NoProvisionerMatch, MessageNoProvisionerMatch). The
// other fallbacks of a snapshot source reuse ReasonNoVolumeExpansion and
// ReasonIncompatibleVolumeModes with their messages.
const (
	ReasonNoProvisionerMatch  = "NoProvisionerMatch"
	MessageNoProvisionerMatch = "The storageclass provisioner does not match the volumesnapshotcontent driver"
)

// What CDI writes when it refuses or cannot yet plan a snapshot clone,
// verbatim; %s and %q are filled as CDI fills them.
const (
	// datavolume/clone-controller-base.go MessageCloneValidationFailed,
	// the condition message of every validateSnapshotClone error.
	msgValidationFailed = "The clone doesn't meet the validation requirements: %s"
	// common/util.go IsSnapshotValidForClone.
	msgSnapshotNoStatus = "no status on source snapshot yet"
	msgSnapshotError    = "snapshot in error state with msg: %s"
	msgSnapshotNoDetail = "no details"
	// CDI names the snapshot name/namespace, in that order.
	msgSnapshotNoClass = "snapshot %s/%s does not have volume snap class populated, can't clone"
	// datavolume/snapshot-clone-controller.go validateSnapshotClone.
	msgSnapshotNoRestoreSize = "snapshot has no restore size"
	msgSnapshotSizeUnknown   = "size not specified by user/provisioner, can't tell how much needed for restore"
	// clone/common.go GetSnapshotContentFromSnapshot.
	msgNoBoundContent = "volumeSnapshotContent name not found"
	// The populator reads through controller-runtime's cache, whose
	// NotFound names the Kind (controller-runtime v0.19.5
	// pkg/cache/internal/cache_reader.go Get).
	msgContentNotFound = "VolumeSnapshotContent.snapshot.storage.k8s.io %q not found"
)

// viaSnapshotSource is Plan.Via for a snapshot source: the planner decides
// from the snapshot, its content and the target class alone.
const viaSnapshotSource = "CDI's planner for a VolumeSnapshot source, which reads no clone strategy setting"

// SnapshotInput is everything PredictSnapshot reads.
//
// It has no clone strategy override: for a snapshot source CDI reads
// neither the CDI resource's spec.cloneStrategyOverride nor the target
// StorageProfile's status.cloneStrategy (clone/planner.go
// computeStrategyForSourceSnapshot calls neither
// GetGlobalCloneStrategyOverride nor reads a StorageProfile's strategy;
// only computeStrategyForSourcePVC does), so Target.Profile serves only to
// render the target's modes and minimum size.
type SnapshotInput struct {
	// SourceNamespace and SourceName are the DataVolume's
	// spec.source.snapshot; CDI's condition message names SourceName alone.
	SourceNamespace string
	SourceName      string
	// Snapshot is the VolumeSnapshot, nil when it does not exist.
	Snapshot *snapshotv1.VolumeSnapshot
	// Content is the VolumeSnapshotContent the snapshot's
	// status.boundVolumeSnapshotContentName names; nil when it does not
	// exist. One of another name counts as missing. Only the populator
	// path reads it: its spec.driver and spec.sourceVolumeMode.
	Content *snapshotv1.VolumeSnapshotContent
	// Target is the clone DataVolume's spec.storage and its class, as for a
	// PVC source. Target.NoPopulator selects the legacy path.
	Target Target
}

// PredictSnapshot follows CDI's order for a DataVolume cloned from a
// VolumeSnapshot: render the target PVC (datavolume/util.go, as Predict),
// the snapshot exists (validateCloneAndSourceSnapshot), it is fit to
// clone and large enough (validateSnapshotClone), populator or legacy path
// (controller-base.go shouldUseCDIPopulator), then the populator's planner
// (clone/planner.go computeStrategyForSourceSnapshot).
func PredictSnapshot(in SnapshotInput) Plan {
	t := in.Target
	mode, refused := renderTarget(t)
	if refused != nil {
		return *refused
	}
	ref := snapshotRef(in)
	if in.Snapshot == nil {
		// CDI writes the reason on the DataVolume's Bound and Ready
		// conditions and leaves the phase; its VolumeSnapshot watch
		// (addCloneWithoutSourceWatch) reconciles the DataVolume again when
		// the snapshot is created.
		return blockedPlan(&Blocked{Reason: ReasonCloneWithoutSource, Message: fmt.Sprintf("The source snapshot %s doesn't exist", in.SourceName), Waits: true,
			Awaits: fmt.Sprintf("VolumeSnapshot %s does not exist (or has not been seen) yet", ref), OnSource: true},
			fmt.Sprintf("if VolumeSnapshot %s never appears, create it (CDI clones as soon as it exists)", ref))
	}
	if blocked, fix := validateSnapshotClone(in); blocked != nil {
		return blockedPlan(blocked, fix)
	}
	// The snapshot passed, so CDI creates the target PVC now. Without the
	// populator (no CSIDriver object for the class's provisioner, or
	// usePopulator "false"), initLegacyClone restores the snapshot into a
	// temporary PVC in the snapshot's namespace and the target is copied
	// from it host-assisted: syncSnapshotClone writes cloneType copy on the
	// DataVolume and fallbackToHostAssisted the NoPopulator reason on the
	// PVC, as for a PVC source. The temporary PVC needs the
	// VolumeSnapshotClass the snapshot names and a StorageClass of its
	// driver (createTempHostAssistedSourcePvc); that is not modelled.
	if withoutPopulator(t) {
		return noPopulatorPlan(t)
	}
	return planFromSnapshot(in, mode)
}

// validateSnapshotClone is datavolume/snapshot-clone-controller.go
// validateSnapshotClone, with common/util.go IsSnapshotValidForClone first.
// Every refusal is the DataVolume's CloneValidationFailed (Bound and Ready
// conditions, phase unchanged). It is not an error, so nothing retries on a
// timer, but the VolumeSnapshot watch reconciles the DataVolume on every
// update of the snapshot: what the snapshot controller fills in later
// clears by itself, what is final does not.
func validateSnapshotClone(in SnapshotInput) (*Blocked, string) {
	s, t, ref := in.Snapshot, in.Target, snapshotRef(in)
	refused := func(msg string) *Blocked {
		return &Blocked{Reason: ReasonCloneValidationFailed, Message: fmt.Sprintf(msgValidationFailed, msg)}
	}
	awaited := func(msg, awaits string) *Blocked {
		b := refused(msg)
		b.Waits, b.Awaits, b.OnSource = true, awaits, true
		return b
	}
	st := s.Status
	if st == nil {
		return awaited(msgSnapshotNoStatus, fmt.Sprintf("VolumeSnapshot %s has no status yet", ref)),
			fmt.Sprintf("if VolumeSnapshot %s gets no status, check that the snapshot controller and the CSI driver's csi-snapshotter sidecar are running: they fill it in, and CDI checks the snapshot again on each update", ref)
	}
	// A snapshot that is not readyToUse passes: CDI only logs it.
	if st.Error != nil {
		detail := msgSnapshotNoDetail
		if st.Error.Message != nil {
			detail = *st.Error.Message
		}
		// The snapshot controller clears status.error only when the
		// snapshot becomes readyToUse (external-snapshotter
		// updateSnapshotStatus), which an error may never let happen.
		return refused(fmt.Sprintf(msgSnapshotError, detail)),
			fmt.Sprintf("VolumeSnapshot %s has status.error %q: fix its cause (kubectl describe volumesnapshot), or delete the snapshot and take it again; CDI checks the snapshot again on each update and goes on once the snapshot controller clears status.error", ref, detail)
	}
	if c := s.Spec.VolumeSnapshotClassName; c == nil || *c == "" {
		// The snapshot controller fills in the default class of a snapshot
		// it takes (SetDefaultSnapshotClass), so this is a pre-provisioned
		// one or a group snapshot's member; the field may still be set (the
		// CRD only refuses "").
		return refused(fmt.Sprintf(msgSnapshotNoClass, s.Name, s.Namespace)),
			fmt.Sprintf("set spec.volumeSnapshotClassName on VolumeSnapshot %s to %s; CDI checks the snapshot again on each update", ref, classOfDriver(in.Content))
	}
	ready := st.ReadyToUse != nil && *st.ReadyToUse
	size := st.RestoreSize
	switch {
	case size == nil && !ready:
		return awaited(msgSnapshotNoRestoreSize, fmt.Sprintf("VolumeSnapshot %s has no status.restoreSize yet (status.readyToUse %s)", ref, readyText(st.ReadyToUse))),
			fmt.Sprintf("if status.restoreSize stays unset, check VolumeSnapshot %s (kubectl describe volumesnapshot) and its CSI driver's csi-snapshotter sidecar, which reports the size CDI needs", ref)
	case size == nil:
		return refused(msgSnapshotNoRestoreSize),
			fmt.Sprintf("VolumeSnapshot %s is readyToUse without a status.restoreSize, which its CSI driver never reported and CDI requires: clone from the snapshot's source PVC instead, or from a snapshot of a driver that reports its size", ref)
	case size.Sign() < 0:
		return refused(msgSnapshotNoRestoreSize),
			fmt.Sprintf("VolumeSnapshot %s has a negative status.restoreSize (%s), which CDI refuses: delete the snapshot and take it again", ref, size.String())
	}
	// A restoreSize of 0 is allowed when the target names a size.
	switch {
	case size.Sign() > 0 && t.Size != nil:
		// Not the rendered request: GetEffectiveStorageResources applies the
		// StorageProfile's minimum only, no filesystem overhead.
		requested := *t.Size
		if t.StorageClass != nil {
			requested = effectiveSize(requested, t.Profile)
		}
		if msg := compareRequests(size, requested); msg != "" {
			return refused(msg),
				fmt.Sprintf("request at least VolumeSnapshot %s's status.restoreSize (%s) in the DataVolume's spec.storage.resources.requests.storage, or none (CDI then sizes the clone from the snapshot)", ref, size.String())
		}
	case size.Sign() == 0 && t.Size == nil:
		// The snapshot controller replaces a 0 when the content reports a
		// size, so an unready snapshot may still get one.
		if !ready {
			return awaited(msgSnapshotSizeUnknown, fmt.Sprintf("VolumeSnapshot %s has status.restoreSize 0 and is not readyToUse yet", ref)),
				fmt.Sprintf("if status.restoreSize stays 0, set spec.storage.resources.requests.storage on the DataVolume: CDI cannot size the clone from VolumeSnapshot %s", ref)
		}
		return refused(msgSnapshotSizeUnknown),
			fmt.Sprintf("set spec.storage.resources.requests.storage on the DataVolume: VolumeSnapshot %s reports status.restoreSize 0, so CDI cannot size the clone from it", ref)
	}
	return nil, ""
}

// planFromSnapshot is clone/planner.go computeStrategyForSourceSnapshot on
// the target claim the DataVolume controller created: its class exists
// (the populator was chosen for it, so validateTargetStorageClassAssignment
// and the planner's "target claim's storageclass doesn't exist" pass), the
// snapshot exists (validateCloneAndSourceSnapshot saw it). Then the
// snapshot's VolumeSnapshotContent, and the first failed check falls back:
// provisioner, size, volume mode. The snapshot strategy needs no
// VolumeSnapshotClass here. Errors go to the populator's
// updateClonePhaseError (Running=False, reason Error) and are retried with
// back-off; a fallback is saved in the claim's cloneType for good.
func planFromSnapshot(in SnapshotInput, mode corev1.PersistentVolumeMode) Plan {
	t, st, ref := in.Target, in.Snapshot.Status, snapshotRef(in)
	// clone/common.go GetSnapshotContentFromSnapshot.
	bound := st.BoundVolumeSnapshotContentName
	if bound == nil {
		return blockedPlan(&Blocked{Reason: ReasonError, Message: msgNoBoundContent, Waits: true,
			Awaits: fmt.Sprintf("VolumeSnapshot %s has no status.boundVolumeSnapshotContentName yet", ref), OnSource: true},
			fmt.Sprintf("if status.boundVolumeSnapshotContentName stays unset, check the snapshot controller, which binds VolumeSnapshot %s to its VolumeSnapshotContent", ref))
	}
	c := in.Content
	if c == nil || c.Name != *bound {
		// The content is created before the snapshot names it, so a missing
		// one was deleted: every retry gets the same NotFound.
		return blockedPlan(&Blocked{Reason: ReasonError, Message: fmt.Sprintf(msgContentNotFound, *bound)},
			fmt.Sprintf("VolumeSnapshotContent %s, which VolumeSnapshot %s names in status.boundVolumeSnapshotContentName, does not exist: delete the snapshot and take it again", *bound, ref))
	}
	plan := Plan{Strategy: cdiv1.CloneStrategySnapshot, Via: viaSnapshotSource}
	sc := t.StorageClass
	// common/util.go ValidateSnapshotCloneProvisioners: the class's
	// provisioner against the content's driver, never the source PVC's
	// class or the VolumeSnapshotClass.
	if sc.Provisioner != c.Spec.Driver {
		return fallbackPlan(plan, ReasonNoProvisionerMatch, MessageNoProvisionerMatch,
			fmt.Sprintf("clone onto a StorageClass whose provisioner is %s, the spec.driver of VolumeSnapshotContent %s that VolumeSnapshot %s is bound to; StorageClass %s's provisioner is %s", c.Spec.Driver, c.Name, ref, sc.Name, sc.Provisioner))
	}
	// common/util.go ValidateSnapshotCloneSize: the claim's request is the
	// rendered one (overhead and minimum included), or the restoreSize
	// itself when the DataVolume named no size (detectCloneSize).
	if t.Size != nil {
		restore := st.RestoreSize
		if request := targetRequest(t, mode); restore.Cmp(*request) < 0 && !allowsExpansion(sc) {
			return fallbackPlan(plan, ReasonNoVolumeExpansion, MessageNoVolumeExpansion, snapshotExpansionFix(sc.Name, ref, mode, restore, request))
		}
	}
	// clone/common.go SameVolumeMode: an unset spec.sourceVolumeMode is
	// Filesystem.
	if srcMode := resolveMode(c.Spec.SourceVolumeMode); srcMode != mode {
		fix := fmt.Sprintf("give the target the volume mode of the snapshot's source, %s (VolumeSnapshotContent %s spec.sourceVolumeMode), with spec.storage.volumeMode or the first claimPropertySets entry of StorageProfile %s, not %s", srcMode, c.Name, sc.Name, mode)
		if c.Spec.SourceVolumeMode == nil {
			fix = fmt.Sprintf("VolumeSnapshotContent %s has no spec.sourceVolumeMode, which CDI reads as Filesystem: take the snapshot again with the snapshot controller's --prevent-volume-mode-conversion on (the default since external-snapshotter v7.0.0), which records the source volume's mode, or for a pre-provisioned content set spec.sourceVolumeMode: %s; or give the target the Filesystem volume mode", c.Name, mode)
		}
		return fallbackPlan(plan, ReasonIncompatibleVolumeModes, MessageIncompatibleVolumeModes, fix)
	}
	return plan
}

// snapshotExpansionFix says how the restored volume could stay its size.
// A request inflated by the filesystem overhead always exceeds the
// restoreSize it must be at least (validateSnapshotClone); a target with
// no request is sized to the restoreSize exactly (detectCloneSize).
func snapshotExpansionFix(class, ref string, mode corev1.PersistentVolumeMode, restore, request *resource.Quantity) string {
	expand := fmt.Sprintf("set allowVolumeExpansion: true on StorageClass %s", class)
	switch {
	case restore.IsZero():
		return fmt.Sprintf("%s: VolumeSnapshot %s reports status.restoreSize 0, so the restored volume must grow to the %s requested", expand, ref, request.String())
	case mode == corev1.PersistentVolumeFilesystem:
		return fmt.Sprintf("%s, or leave the DataVolume's spec.storage.resources.requests.storage unset so that CDI sizes the clone to VolumeSnapshot %s's status.restoreSize (%s): CDI inflates a Filesystem request by the filesystem overhead (%s requested), past the restore size", expand, ref, restore.String(), request.String())
	}
	return fmt.Sprintf("%s, or request VolumeSnapshot %s's status.restoreSize (%s), or no size, so that the clone (%s requested) need not grow past it", expand, ref, restore.String(), request.String())
}

// classOfDriver names the VolumeSnapshotClass to set on a snapshot.
func classOfDriver(c *snapshotv1.VolumeSnapshotContent) string {
	if c == nil || c.Spec.Driver == "" {
		return "the VolumeSnapshotClass of the snapshot's CSI driver"
	}
	return "a VolumeSnapshotClass of driver " + c.Spec.Driver + " (its VolumeSnapshotContent's spec.driver)"
}

func readyText(b *bool) string {
	if b == nil {
		return "unset"
	}
	return fmt.Sprint(*b)
}

func snapshotRef(in SnapshotInput) string {
	return in.SourceNamespace + "/" + in.SourceName
}
