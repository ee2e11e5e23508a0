package cloneplan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
)

// goldenSnapshot is a ready VolumeSnapshot of a Talos golden on LINSTOR (a
// Block PVC of 6Gi), cloned by a pool into the same class with diskSize 6Gi.
func goldenSnapshot() SnapshotInput {
	const name = "talos-worker-abc-v1.13.6"
	return SnapshotInput{
		SourceNamespace: "cozy-public",
		SourceName:      name,
		Snapshot: &snapshotv1.VolumeSnapshot{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "cozy-public"},
			Spec: snapshotv1.VolumeSnapshotSpec{
				Source:                  snapshotv1.VolumeSnapshotSource{PersistentVolumeClaimName: ptr(name)},
				VolumeSnapshotClassName: ptr("linstor"),
			},
			Status: &snapshotv1.VolumeSnapshotStatus{
				BoundVolumeSnapshotContentName: ptr("snapcontent-0b1c"),
				ReadyToUse:                     ptr(true),
				RestoreSize:                    qty("6Gi"),
			},
		},
		Content: &snapshotv1.VolumeSnapshotContent{
			ObjectMeta: metav1.ObjectMeta{Name: "snapcontent-0b1c"},
			Spec: snapshotv1.VolumeSnapshotContentSpec{
				Driver:                  linstor,
				SourceVolumeMode:        &block,
				VolumeSnapshotClassName: ptr("linstor"),
			},
		},
		Target: golden().Target,
	}
}

func fromSnapshot(f func(*SnapshotInput)) SnapshotInput {
	in := goldenSnapshot()
	f(&in)
	return in
}

const snapRef = "cozy-public/talos-worker-abc-v1.13.6"

func TestPredictSnapshot(t *testing.T) {
	snapshotClone := Plan{Strategy: cdiv1.CloneStrategySnapshot, Via: viaSnapshotSource}
	fallback := func(reason, message, fix string) Plan {
		return Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: viaSnapshotSource,
			Fallback: &Fallback{Reason: reason, Message: message}, Fixes: []string{fix}}
	}
	refused := func(message, fix string) Plan {
		return Plan{Blocked: &Blocked{Reason: ReasonCloneValidationFailed, Message: "The clone doesn't meet the validation requirements: " + message}, Fixes: []string{fix}}
	}
	awaited := func(reason, message, awaits, fix string) Plan {
		return Plan{Blocked: &Blocked{Reason: reason, Message: message, Waits: true, Awaits: awaits, OnSource: true}, Fixes: []string{fix}}
	}
	noPopulator := Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "the DataVolume controller (no clone populator)",
		Fallback: &Fallback{Reason: ReasonNoPopulator, Message: MessageNoPopulator},
		Fixes:    []string{"use a StorageClass whose provisioner is a CSI driver with a CSIDriver object, and leave cdi.kubevirt.io/storage.usePopulator unset on the DataVolume; CDI plans CSI clones and snapshots only through its clone populator"}}

	cases := map[string]struct {
		reason string
		in     SnapshotInput
		want   Plan
	}{
		// The populator's planner: computeStrategyForSourceSnapshot.
		"ReadySnapshotOnTheSameDriverIsASnapshotClone": {
			reason: "clone/planner.go computeStrategyForSourceSnapshot: the class's provisioner is the content's driver, no growth, one volume mode.",
			in:     goldenSnapshot(),
			want:   snapshotClone,
		},
		"ProfileCloneStrategyIsIgnored": {
			reason: "computeStrategyForSourceSnapshot reads no StorageProfile strategy and no CDI spec.cloneStrategyOverride (SnapshotInput has no field for it): a profile saying copy, which would make a PVC clone a copy, still gives a snapshot clone.",
			in: fromSnapshot(func(in *SnapshotInput) {
				in.Target.Profile = profile("replicated", cdiv1.CloneStrategyHostAssisted, &block)
				in.Target.StorageClass.Annotations = map[string]string{"cdi.kubevirt.io/clone-strategy": "copy"}
			}),
			want: snapshotClone,
		},
		"ProfileCSICloneIsIgnoredToo": {
			reason: "planner.go Plan knows only snapshot and copy for a snapshot source; the planner never picks csi-clone for it, whatever the profile says.",
			in: fromSnapshot(func(in *SnapshotInput) {
				in.Target.Profile = profile("replicated", cdiv1.CloneStrategyCsiClone, &block)
			}),
			want: snapshotClone,
		},
		"SnapshotNotReadyToUsePasses": {
			reason: "common/util.go IsSnapshotValidForClone only logs a snapshot that is not readyToUse.",
			in:     fromSnapshot(func(in *SnapshotInput) { in.Snapshot.Status.ReadyToUse = ptr(false) }),
			want:   snapshotClone,
		},
		"SizeFromTheSnapshotNeverGrows": {
			reason: "snapshot-clone-controller.go detectCloneSize requests the restoreSize itself for a DataVolume without a size.",
			in:     fromSnapshot(func(in *SnapshotInput) { in.Target.Size = nil }),
			want:   snapshotClone,
		},
		"OtherDriverFallsBackWithNoProvisionerMatch": {
			reason: "common/util.go ValidateSnapshotCloneProvisioners compares the target class's provisioner with the content's spec.driver.",
			in: fromSnapshot(func(in *SnapshotInput) {
				in.Target.StorageClassName, in.Target.StorageClass = "ceph", class("ceph", "rbd.csi.ceph.com", true)
				in.Target.Profile = profile("ceph", cdiv1.CloneStrategySnapshot, &block)
			}),
			want: fallback(ReasonNoProvisionerMatch, MessageNoProvisionerMatch,
				"clone onto a StorageClass whose provisioner is linstor.csi.linbit.com, the spec.driver of VolumeSnapshotContent snapcontent-0b1c that VolumeSnapshot "+snapRef+" is bound to; StorageClass ceph's provisioner is rbd.csi.ceph.com"),
		},
		"ProvisionerIsCheckedBeforeSizeAndMode": {
			reason: "computeStrategyForSourceSnapshot checks the provisioner first: another driver, a larger target and another mode report NoProvisionerMatch.",
			in: fromSnapshot(func(in *SnapshotInput) {
				in.Target.StorageClass.Provisioner = "rbd.csi.ceph.com"
				in.Target.Size = qty("20Gi")
				in.Content.Spec.SourceVolumeMode = &fs
			}),
			want: fallback(ReasonNoProvisionerMatch, MessageNoProvisionerMatch,
				"clone onto a StorageClass whose provisioner is linstor.csi.linbit.com, the spec.driver of VolumeSnapshotContent snapcontent-0b1c that VolumeSnapshot "+snapRef+" is bound to; StorageClass replicated's provisioner is rbd.csi.ceph.com"),
		},
		"LargerTargetOnANonExpandableClassFallsBack": {
			reason: "common/util.go ValidateSnapshotCloneSize: a restoreSize below the claim's request needs allowVolumeExpansion.",
			in:     fromSnapshot(func(in *SnapshotInput) { in.Target.Size = qty("20Gi") }),
			want: fallback(ReasonNoVolumeExpansion, MessageNoVolumeExpansion,
				"set allowVolumeExpansion: true on StorageClass replicated, or request VolumeSnapshot "+snapRef+"'s status.restoreSize (6Gi), or no size, so that the clone (20Gi requested) need not grow past it"),
		},
		"LargerTargetOnAnExpandableClassIsASnapshotClone": {
			reason: "ValidateSnapshotCloneSize: the class allows expansion, so CDI restores and grows the volume.",
			in: fromSnapshot(func(in *SnapshotInput) {
				in.Target.Size = qty("20Gi")
				in.Target.StorageClass = class("replicated", linstor, true)
			}),
			want: snapshotClone,
		},
		"SizeIsCheckedBeforeVolumeMode": {
			reason: "computeStrategyForSourceSnapshot checks the size before SameVolumeMode.",
			in: fromSnapshot(func(in *SnapshotInput) {
				in.Target.Size = qty("20Gi")
				in.Content.Spec.SourceVolumeMode = &fs
			}),
			want: fallback(ReasonNoVolumeExpansion, MessageNoVolumeExpansion,
				"set allowVolumeExpansion: true on StorageClass replicated, or request VolumeSnapshot "+snapRef+"'s status.restoreSize (6Gi), or no size, so that the clone (20Gi requested) need not grow past it"),
		},
		"MinimumSupportedSizeLiftsASmallerRequestAndGrows": {
			reason: "GetEffectiveStorageResources lifts 5Gi to the profile's 10Gi minimum, so validateSnapshotClone passes; the rendered claim requests 10Gi, more than the restoreSize.",
			in: fromSnapshot(func(in *SnapshotInput) {
				in.Target.Size = qty("5Gi")
				in.Target.Profile.Annotations = map[string]string{AnnMinimumSupportedPVCSize: "10Gi"}
			}),
			want: fallback(ReasonNoVolumeExpansion, MessageNoVolumeExpansion,
				"set allowVolumeExpansion: true on StorageClass replicated, or request VolumeSnapshot "+snapRef+"'s status.restoreSize (6Gi), or no size, so that the clone (10Gi requested) need not grow past it"),
		},
		"FilesystemTargetOfTheRestoreSizeGrowsByTheOverhead": {
			reason: "validateSnapshotClone compares the uninflated 6Gi (it passes); the claim requests ceil(6Gi*1.06) = 6828998001 bytes, more than the restoreSize.",
			in: fromSnapshot(func(in *SnapshotInput) {
				in.Target.Profile = profile("replicated", cdiv1.CloneStrategySnapshot, &fs)
				in.Content.Spec.SourceVolumeMode = &fs
			}),
			want: fallback(ReasonNoVolumeExpansion, MessageNoVolumeExpansion,
				"set allowVolumeExpansion: true on StorageClass replicated, or leave the DataVolume's spec.storage.resources.requests.storage unset so that CDI sizes the clone to VolumeSnapshot "+snapRef+"'s status.restoreSize (6Gi): CDI inflates a Filesystem request by the filesystem overhead (6828998001 requested), past the restore size"),
		},
		"FilesystemTargetWithoutSizeIsASnapshotClone": {
			reason: "detectCloneSize requests the restoreSize uninflated.",
			in: fromSnapshot(func(in *SnapshotInput) {
				in.Target.Profile = profile("replicated", cdiv1.CloneStrategySnapshot, &fs)
				in.Content.Spec.SourceVolumeMode = &fs
				in.Target.Size = nil
			}),
			want: snapshotClone,
		},
		"ZeroRestoreSizeWithARequestMustGrow": {
			reason: "validateSnapshotClone allows restoreSize 0 with a requested size; ValidateSnapshotCloneSize then finds 0 below the request.",
			in:     fromSnapshot(func(in *SnapshotInput) { in.Snapshot.Status.RestoreSize = qty("0") }),
			want: fallback(ReasonNoVolumeExpansion, MessageNoVolumeExpansion,
				"set allowVolumeExpansion: true on StorageClass replicated: VolumeSnapshot "+snapRef+" reports status.restoreSize 0, so the restored volume must grow to the 6Gi requested"),
		},
		"VolumeModeMismatchFallsBack": {
			reason: "clone/common.go SameVolumeMode: the content's spec.sourceVolumeMode Filesystem against a Block target.",
			in:     fromSnapshot(func(in *SnapshotInput) { in.Content.Spec.SourceVolumeMode = &fs }),
			want: fallback(ReasonIncompatibleVolumeModes, MessageIncompatibleVolumeModes,
				"give the target the volume mode of the snapshot's source, Filesystem (VolumeSnapshotContent snapcontent-0b1c spec.sourceVolumeMode), with spec.storage.volumeMode or the first claimPropertySets entry of StorageProfile replicated, not Block"),
		},
		"ContentWithoutSourceVolumeModeIsFilesystem": {
			reason: "SameVolumeMode resolves an unset spec.sourceVolumeMode to Filesystem, so a Block golden's snapshot taken without --prevent-volume-mode-conversion is copied.",
			in:     fromSnapshot(func(in *SnapshotInput) { in.Content.Spec.SourceVolumeMode = nil }),
			want: fallback(ReasonIncompatibleVolumeModes, MessageIncompatibleVolumeModes,
				"VolumeSnapshotContent snapcontent-0b1c has no spec.sourceVolumeMode, which CDI reads as Filesystem: take the snapshot again with the snapshot controller's --prevent-volume-mode-conversion on (the default since external-snapshotter v7.0.0), which records the source volume's mode, or for a pre-provisioned content set spec.sourceVolumeMode: Block; or give the target the Filesystem volume mode"),
		},
		"NoBoundContentIsAnErrorThatWaits": {
			reason: "clone/common.go GetSnapshotContentFromSnapshot errors without status.boundVolumeSnapshotContentName; the populator retries with back-off until the snapshot controller binds it.",
			in: fromSnapshot(func(in *SnapshotInput) {
				in.Snapshot.Status.BoundVolumeSnapshotContentName, in.Content = nil, nil
			}),
			want: awaited(ReasonError, "volumeSnapshotContent name not found",
				"VolumeSnapshot "+snapRef+" has no status.boundVolumeSnapshotContentName yet",
				"if status.boundVolumeSnapshotContentName stays unset, check the snapshot controller, which binds VolumeSnapshot "+snapRef+" to its VolumeSnapshotContent"),
		},
		"MissingContentIsAnError": {
			reason: "GetSnapshotContentFromSnapshot returns the cached client's NotFound; every retry gets it again.",
			in:     fromSnapshot(func(in *SnapshotInput) { in.Content = nil }),
			want: Plan{Blocked: &Blocked{Reason: ReasonError, Message: `VolumeSnapshotContent.snapshot.storage.k8s.io "snapcontent-0b1c" not found`},
				Fixes: []string{"VolumeSnapshotContent snapcontent-0b1c, which VolumeSnapshot " + snapRef + " names in status.boundVolumeSnapshotContentName, does not exist: delete the snapshot and take it again"}},
		},
		"ContentOfAnotherNameCountsAsMissing": {
			reason: "CDI gets the content by the name the snapshot is bound to.",
			in:     fromSnapshot(func(in *SnapshotInput) { in.Content.Name = "snapcontent-other" }),
			want: Plan{Blocked: &Blocked{Reason: ReasonError, Message: `VolumeSnapshotContent.snapshot.storage.k8s.io "snapcontent-0b1c" not found`},
				Fixes: []string{"VolumeSnapshotContent snapcontent-0b1c, which VolumeSnapshot " + snapRef + " names in status.boundVolumeSnapshotContentName, does not exist: delete the snapshot and take it again"}},
		},

		// The DataVolume controller: validateCloneAndSourceSnapshot,
		// validateSnapshotClone.
		"MissingSnapshotWaits": {
			reason: "snapshot-clone-controller.go validateCloneAndSourceSnapshot: CloneWithoutSource; the VolumeSnapshot watch reconciles the DataVolume once it is created.",
			in:     fromSnapshot(func(in *SnapshotInput) { in.Snapshot, in.Content = nil, nil }),
			want: awaited(ReasonCloneWithoutSource, "The source snapshot talos-worker-abc-v1.13.6 doesn't exist",
				"VolumeSnapshot "+snapRef+" does not exist (or has not been seen) yet",
				"if VolumeSnapshot "+snapRef+" never appears, create it (CDI clones as soon as it exists)"),
		},
		"SnapshotWithoutStatusWaits": {
			reason: "common/util.go IsSnapshotValidForClone refuses a snapshot without status; the watch re-checks on the update that sets it.",
			in:     fromSnapshot(func(in *SnapshotInput) { in.Snapshot.Status = nil }),
			want: awaited(ReasonCloneValidationFailed, "The clone doesn't meet the validation requirements: no status on source snapshot yet",
				"VolumeSnapshot "+snapRef+" has no status yet",
				"if VolumeSnapshot "+snapRef+" gets no status, check that the snapshot controller and the CSI driver's csi-snapshotter sidecar are running: they fill it in, and CDI checks the snapshot again on each update"),
		},
		"SnapshotInErrorIsRefused": {
			reason: "IsSnapshotValidForClone refuses a snapshot with status.error, quoting its message.",
			in: fromSnapshot(func(in *SnapshotInput) {
				in.Snapshot.Status.ReadyToUse = ptr(false)
				in.Snapshot.Status.Error = &snapshotv1.VolumeSnapshotError{Message: ptr("failed to take snapshot: rpc error")}
			}),
			want: refused("snapshot in error state with msg: failed to take snapshot: rpc error",
				`VolumeSnapshot `+snapRef+` has status.error "failed to take snapshot: rpc error": fix its cause (kubectl describe volumesnapshot), or delete the snapshot and take it again; CDI checks the snapshot again on each update and goes on once the snapshot controller clears status.error`),
		},
		"SnapshotErrorWithoutMessageHasNoDetails": {
			reason: "IsSnapshotValidForClone says \"no details\" for an error without a message.",
			in:     fromSnapshot(func(in *SnapshotInput) { in.Snapshot.Status.Error = &snapshotv1.VolumeSnapshotError{} }),
			want: refused("snapshot in error state with msg: no details",
				`VolumeSnapshot `+snapRef+` has status.error "no details": fix its cause (kubectl describe volumesnapshot), or delete the snapshot and take it again; CDI checks the snapshot again on each update and goes on once the snapshot controller clears status.error`),
		},
		"SnapshotWithoutClassIsRefused": {
			reason: "IsSnapshotValidForClone needs spec.volumeSnapshotClassName (CDI names the snapshot name/namespace, in that order).",
			in:     fromSnapshot(func(in *SnapshotInput) { in.Snapshot.Spec.VolumeSnapshotClassName = nil }),
			want: refused("snapshot talos-worker-abc-v1.13.6/cozy-public does not have volume snap class populated, can't clone",
				"set spec.volumeSnapshotClassName on VolumeSnapshot "+snapRef+" to a VolumeSnapshotClass of driver linstor.csi.linbit.com (its VolumeSnapshotContent's spec.driver); CDI checks the snapshot again on each update"),
		},
		"SnapshotWithEmptyClassAndNoContentIsRefused": {
			reason: "IsSnapshotValidForClone treats \"\" as unset; without the content the driver is not known.",
			in: fromSnapshot(func(in *SnapshotInput) {
				in.Snapshot.Spec.VolumeSnapshotClassName, in.Content = ptr(""), nil
			}),
			want: refused("snapshot talos-worker-abc-v1.13.6/cozy-public does not have volume snap class populated, can't clone",
				"set spec.volumeSnapshotClassName on VolumeSnapshot "+snapRef+" to the VolumeSnapshotClass of the snapshot's CSI driver; CDI checks the snapshot again on each update"),
		},
		"RestoreSizeNotYetReportedWaits": {
			reason: "validateSnapshotClone refuses a nil restoreSize; the snapshot controller sets it from the content, and the watch re-checks.",
			in: fromSnapshot(func(in *SnapshotInput) {
				in.Snapshot.Status.RestoreSize, in.Snapshot.Status.ReadyToUse = nil, ptr(false)
			}),
			want: awaited(ReasonCloneValidationFailed, "The clone doesn't meet the validation requirements: snapshot has no restore size",
				"VolumeSnapshot "+snapRef+" has no status.restoreSize yet (status.readyToUse false)",
				"if status.restoreSize stays unset, check VolumeSnapshot "+snapRef+" (kubectl describe volumesnapshot) and its CSI driver's csi-snapshotter sidecar, which reports the size CDI needs"),
		},
		"RestoreSizeOfASnapshotWithoutReadyToUseWaits": {
			reason: "A snapshot whose status.readyToUse is unset is not ready either: its restoreSize may still come.",
			in: fromSnapshot(func(in *SnapshotInput) {
				in.Snapshot.Status.RestoreSize, in.Snapshot.Status.ReadyToUse = nil, nil
			}),
			want: awaited(ReasonCloneValidationFailed, "The clone doesn't meet the validation requirements: snapshot has no restore size",
				"VolumeSnapshot "+snapRef+" has no status.restoreSize yet (status.readyToUse unset)",
				"if status.restoreSize stays unset, check VolumeSnapshot "+snapRef+" (kubectl describe volumesnapshot) and its CSI driver's csi-snapshotter sidecar, which reports the size CDI needs"),
		},
		"ReadySnapshotWithoutRestoreSizeIsRefused": {
			reason: "A ready snapshot's restoreSize is final: the driver reported none, and validateSnapshotClone refuses it on every check.",
			in:     fromSnapshot(func(in *SnapshotInput) { in.Snapshot.Status.RestoreSize = nil }),
			want: refused("snapshot has no restore size",
				"VolumeSnapshot "+snapRef+" is readyToUse without a status.restoreSize, which its CSI driver never reported and CDI requires: clone from the snapshot's source PVC instead, or from a snapshot of a driver that reports its size"),
		},
		"NegativeRestoreSizeIsRefused": {
			reason: "validateSnapshotClone refuses a negative restoreSize like a missing one.",
			in:     fromSnapshot(func(in *SnapshotInput) { in.Snapshot.Status.RestoreSize = qty("-1") }),
			want: refused("snapshot has no restore size",
				"VolumeSnapshot "+snapRef+" has a negative status.restoreSize (-1), which CDI refuses: delete the snapshot and take it again"),
		},
		"SmallerTargetIsRefused": {
			reason: "validateSnapshotClone via common/util.go ValidateRequestedCloneSize: the request below the restoreSize.",
			in:     fromSnapshot(func(in *SnapshotInput) { in.Target.Size = qty("5Gi") }),
			want: refused("target resources requests storage size is smaller than the source 5368709120 < 6442450944",
				"request at least VolumeSnapshot "+snapRef+"'s status.restoreSize (6Gi) in the DataVolume's spec.storage.resources.requests.storage, or none (CDI then sizes the clone from the snapshot)"),
		},
		"FilesystemRequestIsComparedUninflated": {
			reason: "GetEffectiveStorageResources applies no filesystem overhead: 6000Mi is refused against 6Gi although its rendered claim (6360Mi) would be larger.",
			in: fromSnapshot(func(in *SnapshotInput) {
				in.Target.Profile = profile("replicated", cdiv1.CloneStrategySnapshot, &fs)
				in.Target.Size = qty("6000Mi")
			}),
			want: refused("target resources requests storage size is smaller than the source 6291456000 < 6442450944",
				"request at least VolumeSnapshot "+snapRef+"'s status.restoreSize (6Gi) in the DataVolume's spec.storage.resources.requests.storage, or none (CDI then sizes the clone from the snapshot)"),
		},
		"ZeroRestoreSizeWithoutRequestIsRefused": {
			reason: "validateSnapshotClone: no size on either side of a ready snapshot.",
			in: fromSnapshot(func(in *SnapshotInput) {
				in.Snapshot.Status.RestoreSize, in.Target.Size = qty("0"), nil
			}),
			want: refused("size not specified by user/provisioner, can't tell how much needed for restore",
				"set spec.storage.resources.requests.storage on the DataVolume: VolumeSnapshot "+snapRef+" reports status.restoreSize 0, so CDI cannot size the clone from it"),
		},
		"ZeroRestoreSizeOfAnUnreadySnapshotWaits": {
			reason: "The snapshot controller replaces a restoreSize of 0 once the content reports one (external-snapshotter updateSnapshotStatus), and the watch re-checks.",
			in: fromSnapshot(func(in *SnapshotInput) {
				in.Snapshot.Status.RestoreSize, in.Snapshot.Status.ReadyToUse, in.Target.Size = qty("0"), nil, nil
			}),
			want: awaited(ReasonCloneValidationFailed, "The clone doesn't meet the validation requirements: size not specified by user/provisioner, can't tell how much needed for restore",
				"VolumeSnapshot "+snapRef+" has status.restoreSize 0 and is not readyToUse yet",
				"if status.restoreSize stays 0, set spec.storage.resources.requests.storage on the DataVolume: CDI cannot size the clone from VolumeSnapshot "+snapRef),
		},

		// The populator or the legacy path: shouldUseCDIPopulator.
		"NoPopulatorIsAHostAssistedCopy": {
			reason: "controller-base.go shouldUseCDIPopulator: without the populator syncSnapshotClone restores the snapshot into a temporary PVC and records cloneType copy with NoPopulator; the content is not read.",
			in: fromSnapshot(func(in *SnapshotInput) {
				in.Target.NoPopulator = true
				in.Snapshot.Status.BoundVolumeSnapshotContentName, in.Content = nil, nil
			}),
			want: noPopulator,
		},
		"ProvisionerThatIsNoCSIDriverIsAHostAssistedCopy": {
			reason: "No CSIDriver object names openebs.io/local, so shouldUseCDIPopulator takes the legacy path for its class.",
			in: fromSnapshot(func(in *SnapshotInput) {
				in.Target.StorageClass.Provisioner = "openebs.io/local"
				in.Snapshot.Status.BoundVolumeSnapshotContentName, in.Content = nil, nil
			}),
			want: Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "the DataVolume controller (no clone populator)",
				Fallback: &Fallback{Reason: ReasonNoPopulator, Message: MessageNoPopulator},
				Fixes:    []string{"use a StorageClass of a CSI driver: the provisioner of StorageClass replicated, openebs.io/local, is none, so CDI can only copy onto it"}},
		},
		"MissingTargetClassIsANoPopulatorCopy": {
			reason: "datavolume/util.go storageClassCSIDriverExists finds no class, so no populator.",
			in: fromSnapshot(func(in *SnapshotInput) {
				in.Target.StorageClassName, in.Target.StorageClass, in.Target.Profile = "gone", nil, nil
				in.Target.AccessModes, in.Target.VolumeMode = []corev1.PersistentVolumeAccessMode{rwx}, &block
			}),
			want: Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "the DataVolume controller (no clone populator)",
				Fallback: &Fallback{Reason: ReasonNoPopulator, Message: MessageNoPopulator},
				Fixes:    []string{"create StorageClass gone, or name one that exists; CDI plans CSI clones and snapshots only for a class it can read"}},
		},
		"SnapshotIsValidatedBeforeThePopulatorChoice": {
			reason: "syncSnapshotClone validates the snapshot before it creates the PVC on either path.",
			in: fromSnapshot(func(in *SnapshotInput) {
				in.Target.NoPopulator = true
				in.Snapshot.Status = nil
			}),
			want: awaited(ReasonCloneValidationFailed, "The clone doesn't meet the validation requirements: no status on source snapshot yet",
				"VolumeSnapshot "+snapRef+" has no status yet",
				"if VolumeSnapshot "+snapRef+" gets no status, check that the snapshot controller and the CSI driver's csi-snapshotter sidecar are running: they fill it in, and CDI checks the snapshot again on each update"),
		},

		// The target PVC is rendered first (controller-base.go syncDvPvcState).
		"TargetIsRenderedBeforeTheSnapshotIsRead": {
			reason: "syncDvPvcState renders the PVC spec before syncSnapshotClone looks for the snapshot: a missing StorageProfile is reported over a missing snapshot.",
			in: fromSnapshot(func(in *SnapshotInput) {
				in.Target.Profile = nil
				in.Snapshot, in.Content = nil, nil
			}),
			want: Plan{Blocked: &Blocked{Reason: ReasonErrClaimNotValid, Message: `cannot get StorageProfile: storageprofiles.cdi.kubevirt.io "replicated" not found`, Waits: true,
				Awaits: "StorageProfile replicated, whose status.claimPropertySets give the worker disk its access and volume modes, does not exist yet"},
				Fixes: []string{"if StorageProfile replicated never appears, check that CDI is running: its StorageProfile controller creates one for every StorageClass"}},
		},
		"SizeBelowOneMiBIsErrClaimNotValid": {
			reason: "datavolume/util.go renderPvcSpecVolumeSize refuses less than 1MiB for a snapshot clone too.",
			in:     fromSnapshot(func(in *SnapshotInput) { in.Target.Size = qty("512Ki") }),
			want: Plan{Blocked: &Blocked{Reason: ReasonErrClaimNotValid, Message: "PVC Spec is not valid - storage size should be at least 1MiB"},
				Fixes: []string{"request at least 1Mi"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := PredictSnapshot(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
