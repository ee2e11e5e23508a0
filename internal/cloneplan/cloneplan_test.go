package cloneplan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
)

const linstor = "linstor.csi.linbit.com"

var (
	block = corev1.PersistentVolumeBlock
	fs    = corev1.PersistentVolumeFilesystem
	rwx   = corev1.ReadWriteMany
)

func qty(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

func class(name, provisioner string, expand bool) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, AllowVolumeExpansion: &expand}
}

func profile(name string, strategy cdiv1.CDICloneStrategy, mode *corev1.PersistentVolumeMode) *cdiv1.StorageProfile {
	p := &cdiv1.StorageProfile{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if strategy != "" {
		p.Status.CloneStrategy = &strategy
	}
	if mode != nil {
		p.Status.ClaimPropertySets = []cdiv1.ClaimPropertySet{{AccessModes: []corev1.PersistentVolumeAccessMode{rwx}, VolumeMode: mode}}
	}
	return p
}

// golden is a Talos golden as the catalog makes it on LINSTOR: a Block PVC
// of 6Gi, cloned by a pool on the same class with diskSize 6Gi.
func golden() Input {
	return Input{
		SourceName: "talos-worker-abc-v1.13.6",
		Source: &Source{
			Name:         "talos-worker-abc-v1.13.6",
			StorageClass: class("replicated", linstor, false),
			Profile:      profile("replicated", cdiv1.CloneStrategyCsiClone, &block),
			VolumeMode:   &block,
			Request:      qty("6Gi"),
			Capacity:     qty("6Gi"),
		},
		Target: Target{
			StorageClassName: "replicated",
			StorageClass:     class("replicated", linstor, false),
			Profile:          profile("replicated", cdiv1.CloneStrategyCsiClone, &block),
			Size:             qty("6Gi"),
		},
	}
}

func with(f func(*Input)) Input {
	in := golden()
	f(&in)
	return in
}

func ptr[T any](v T) *T { return &v }

func TestPredict(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     Input
		want   Plan
	}{
		"SameClassCSICloneProfileIsCSIClone": {
			reason: "planner.go computeStrategyForSourcePVC takes status.cloneStrategy; validateAdvancedClonePVC finds one driver, one mode, no growth.",
			in: with(func(in *Input) {
				in.Target.VolumeMode, in.Target.AccessModes = &block, []corev1.PersistentVolumeAccessMode{rwx}
			}),
			want: Plan{Strategy: cdiv1.CloneStrategyCsiClone, Via: "StorageProfile replicated status.cloneStrategy"},
		},
		"VolumeModeComesFromClaimPropertySets": {
			reason: "datavolume/util.go getDefaultVolumeAndAccessMode fills a spec.storage without modes from the first claimPropertySets entry (Block here), so the modes match.",
			in:     golden(),
			want:   Plan{Strategy: cdiv1.CloneStrategyCsiClone, Via: "StorageProfile replicated status.cloneStrategy"},
		},
		"DifferentClassSameDriverIsStillCSIClone": {
			reason: "clone/common.go GetCommonDriver compares drivers, not class names: two LINSTOR classes clone with CSI.",
			in: with(func(in *Input) {
				in.Target.StorageClassName, in.Target.StorageClass = "local", class("local", linstor, false)
				in.Target.Profile = profile("local", cdiv1.CloneStrategyCsiClone, &block)
			}),
			want: Plan{Strategy: cdiv1.CloneStrategyCsiClone, Via: "StorageProfile local status.cloneStrategy"},
		},
		"CloneTypeAnnotationAsksForTheCopyAcrossClassesOfOneDriver": {
			reason: "The two LINSTOR classes above would be a CSI clone; a DataVolume carrying cloneType: copy reaches its claim (controller-base.go newPersistentVolumeClaim) and the populator copies as saved (clone-populator.go getCloneStrategy), whatever the profile says.",
			in: with(func(in *Input) {
				in.Target.StorageClassName, in.Target.StorageClass = "local", class("local", linstor, false)
				in.Target.Profile = profile("local", cdiv1.CloneStrategyCsiClone, &block)
				in.Target.CloneType = cdiv1.CloneStrategyHostAssisted
			}),
			want: Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "the DataVolume's cdi.kubevirt.io/cloneType annotation"},
		},
		"CloneTypeAnnotationSkipsThePlannersChecks": {
			reason: "A saved strategy skips computeStrategyForSourcePVC, so neither the missing status.capacity (validateAdvancedClonePVC) nor the expansion check applies: no wait, no fallback reason.",
			in: with(func(in *Input) {
				in.Source.Capacity = nil
				in.Target.Size = qty("20Gi")
				in.Target.CloneType = cdiv1.CloneStrategyHostAssisted
			}),
			want: Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "the DataVolume's cdi.kubevirt.io/cloneType annotation"},
		},
		"CloneTypeAnnotationStillNeedsTheSource": {
			reason: "The DataVolume controller waits for the source before any claim exists (pvc-clone-controller.go validateCloneAndSourcePVC), annotation or not.",
			in: with(func(in *Input) {
				in.Source = nil
				in.Target.CloneType = cdiv1.CloneStrategyHostAssisted
			}),
			want: Plan{Blocked: &Blocked{Reason: ReasonCloneWithoutSource, Message: "The source pvc talos-worker-abc-v1.13.6 doesn't exist", Waits: true, Awaits: "PVC talos-worker-abc-v1.13.6 does not exist (or has not been seen) yet", OnSource: true},
				Fixes: []string{"if PVC talos-worker-abc-v1.13.6 never appears, create it (CDI clones as soon as it exists)"}},
		},
		"UnknownCloneTypeAnnotationErrors": {
			reason: "clone/planner.go Plan errors for a saved strategy it cannot plan from a PVC, on every retry.",
			in:     with(func(in *Input) { in.Target.CloneType = "smart" }),
			want: Plan{Blocked: &Blocked{Reason: ReasonError, Message: "unknown strategy/source smart"},
				Fixes: []string{"remove the DataVolume's cdi.kubevirt.io/cloneType annotation or set it to copy, snapshot or csi-clone, and re-create the DataVolume"}},
		},
		"PVDriverDecidesOverTheSourceClass": {
			reason: "GetDriverFromVolume reads the bound PV's CSI driver first; a source whose class was deleted still clones.",
			in: with(func(in *Input) {
				in.Source.StorageClass, in.Source.Profile, in.Source.CSIDriver = nil, nil, linstor
			}),
			want: Plan{Strategy: cdiv1.CloneStrategyCsiClone, Via: "StorageProfile replicated status.cloneStrategy"},
		},
		"CSICloneAcrossDriversFallsBack": {
			reason: "planner.go validateAdvancedClonePVC: no common driver is IncompatibleProvisioners.",
			in: with(func(in *Input) {
				in.Target.StorageClassName, in.Target.StorageClass = "ceph", class("ceph", "rbd.csi.ceph.com", true)
				in.Target.Profile = profile("ceph", cdiv1.CloneStrategyCsiClone, &block)
			}),
			want: Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "StorageProfile ceph status.cloneStrategy",
				Fallback: &Fallback{Reason: ReasonIncompatibleProvisioners, Message: MessageIncompatibleProvisioners},
				Fixes:    []string{"clone within one CSI driver: the source is on StorageClass replicated (provisioner linstor.csi.linbit.com), the target on StorageClass ceph (provisioner rbd.csi.ceph.com)"}},
		},
		"SnapshotAcrossDriversFallsBackForWantOfASnapshotClass": {
			reason: "planner.go computeStrategyForSourcePVC looks for a VolumeSnapshotClass of the common driver before validateAdvancedClonePVC runs, so different drivers report NoVolumeSnapshotClass.",
			in: with(func(in *Input) {
				in.Target.StorageClassName, in.Target.StorageClass = "ceph", class("ceph", "rbd.csi.ceph.com", true)
				in.Target.Profile = profile("ceph", cdiv1.CloneStrategySnapshot, &block)
				in.SnapshotClasses = []VolumeSnapshotClass{{Name: "rbd", Driver: "rbd.csi.ceph.com", Default: true}}
			}),
			want: Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "StorageProfile ceph status.cloneStrategy",
				Fallback: &Fallback{Reason: ReasonNoVolumeSnapshotClass, Message: MessageNoVolumeSnapshotClass},
				Fixes:    []string{"clone within one CSI driver: the source is on StorageClass replicated (provisioner linstor.csi.linbit.com), the target on StorageClass ceph (provisioner rbd.csi.ceph.com); CDI needs a VolumeSnapshotClass of the driver both share"}},
		},
		"SnapshotWithTheDriversDefaultClass": {
			reason: "common/util.go GetVolumeSnapshotClass takes the driver's default-annotated class.",
			in: with(func(in *Input) {
				in.Target.Profile = profile("replicated", cdiv1.CloneStrategySnapshot, &block)
				in.SnapshotClasses = []VolumeSnapshotClass{{Name: "a", Driver: linstor}, {Name: "b", Driver: linstor, Default: true}}
			}),
			want: Plan{Strategy: cdiv1.CloneStrategySnapshot, Via: "StorageProfile replicated status.cloneStrategy"},
		},
		"SnapshotWithoutASnapshotClassForTheDriverFallsBack": {
			reason: "planner.go computeStrategyForSourcePVC: no VolumeSnapshotClass for the driver is NoVolumeSnapshotClass; another driver's class does not count.",
			in: with(func(in *Input) {
				in.Target.Profile = profile("replicated", cdiv1.CloneStrategySnapshot, &block)
				in.SnapshotClasses = []VolumeSnapshotClass{{Name: "rbd", Driver: "rbd.csi.ceph.com", Default: true}}
			}),
			want: Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "StorageProfile replicated status.cloneStrategy",
				Fallback: &Fallback{Reason: ReasonNoVolumeSnapshotClass, Message: MessageNoVolumeSnapshotClass},
				Fixes:    []string{"create a VolumeSnapshotClass for driver linstor.csi.linbit.com, or set spec.cloneStrategy: csi-clone on StorageProfile replicated if the driver supports volume cloning"}},
		},
		"NoStorageProfileDefaultsToSnapshot": {
			reason: "planner.go computeStrategyForSourcePVC starts from snapshot when the target class has no StorageProfile; the StorageProfile only matters to the strategy here.",
			in: with(func(in *Input) {
				in.Target.VolumeMode, in.Target.AccessModes = &block, []corev1.PersistentVolumeAccessMode{rwx}
				in.Target.Profile = nil
				in.SnapshotClasses = []VolumeSnapshotClass{{Name: "linstor", Driver: linstor}}
			}),
			want: Plan{Strategy: cdiv1.CloneStrategySnapshot, Via: "CDI's default, snapshot (no StorageProfile replicated)"},
		},
		"SnapshotClassBothProfilesNameIsTakenByName": {
			reason: "clone/common.go getCommonSnapshotClass: the status.snapshotClass both profiles state is fetched by name, ignoring defaults.",
			in: with(func(in *Input) {
				in.Target.Profile = profile("replicated", cdiv1.CloneStrategySnapshot, &block)
				in.Target.Profile.Status.SnapshotClass, in.Source.Profile.Status.SnapshotClass = ptr("pinned"), ptr("pinned")
				in.SnapshotClasses = []VolumeSnapshotClass{{Name: "default", Driver: linstor, Default: true}, {Name: "pinned", Driver: linstor}}
			}),
			want: Plan{Strategy: cdiv1.CloneStrategySnapshot, Via: "StorageProfile replicated status.cloneStrategy"},
		},
		"NamedSnapshotClassThatDoesNotExistIsAnError": {
			reason: "common/util.go GetVolumeSnapshotClass returns the Get error for a named class; the populator records it and retries.",
			in: with(func(in *Input) {
				in.Target.Profile = profile("replicated", cdiv1.CloneStrategySnapshot, &block)
				in.Target.Profile.Status.SnapshotClass, in.Source.Profile.Status.SnapshotClass = ptr("gone"), ptr("gone")
			}),
			want: Plan{Blocked: &Blocked{Reason: ReasonError, Message: `volumesnapshotclasses.snapshot.storage.k8s.io "gone" not found`},
				Fixes: []string{"create VolumeSnapshotClass gone for driver linstor.csi.linbit.com, or set spec.snapshotClass on the StorageProfiles to one that exists"}},
		},
		"NamedSnapshotClassOfAnotherDriverFallsBack": {
			reason: "common/util.go GetVolumeSnapshotClass: a named class of another driver is no class.",
			in: with(func(in *Input) {
				in.Target.Profile = profile("replicated", cdiv1.CloneStrategySnapshot, &block)
				in.Target.Profile.Status.SnapshotClass, in.Source.Profile.Status.SnapshotClass = ptr("rbd"), ptr("rbd")
				in.SnapshotClasses = []VolumeSnapshotClass{{Name: "rbd", Driver: "rbd.csi.ceph.com"}}
			}),
			want: Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "StorageProfile replicated status.cloneStrategy",
				Fallback: &Fallback{Reason: ReasonNoVolumeSnapshotClass, Message: MessageNoVolumeSnapshotClass},
				Fixes:    []string{"VolumeSnapshotClass rbd, which the StorageProfiles name in status.snapshotClass, belongs to driver rbd.csi.ceph.com, not linstor.csi.linbit.com: set spec.snapshotClass on the StorageProfiles to a VolumeSnapshotClass of driver linstor.csi.linbit.com"}},
		},
		"CloneStrategyOverrideWins": {
			reason: "planner.go computeStrategyForSourcePVC: the CDI resource's spec.cloneStrategyOverride beats the StorageProfile; a copy chosen there records no fallback reason.",
			in:     with(func(in *Input) { in.CloneStrategyOverride = ptr(cdiv1.CloneStrategyHostAssisted) }),
			want: Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "the CDI resource's spec.cloneStrategyOverride",
				Fixes: []string{"remove spec.cloneStrategyOverride from the CDI resource: it makes every clone in the cluster a host-assisted copy"}},
		},
		"ProfileSaysCopyIsACopyWithoutFallbackReason": {
			reason: "storageprofile-controller.go reconcileCloneStrategy writes copy when the driver has no VolumeSnapshotClass; the planner then picks copy outright.",
			in:     with(func(in *Input) { in.Target.Profile = profile("replicated", cdiv1.CloneStrategyHostAssisted, &block) }),
			want: Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "StorageProfile replicated status.cloneStrategy",
				Fixes: []string{"set spec.cloneStrategy on StorageProfile replicated to csi-clone (if driver linstor.csi.linbit.com supports volume cloning) or snapshot (with a VolumeSnapshotClass for driver linstor.csi.linbit.com); CDI sets status.cloneStrategy to copy from spec.cloneStrategy, the StorageClass's cdi.kubevirt.io/clone-strategy annotation, or when no VolumeSnapshotClass exists for the driver"}},
		},
		"UnknownStrategyIsAnError": {
			reason: "storageprofile-controller.go getCloneStrategyFromStorageClass turns an unknown annotation into \"\"; planner.go Plan errors on it.",
			in:     with(func(in *Input) { in.Target.Profile = profile("replicated", "smart", &block) }),
			want: Plan{Strategy: "", Blocked: &Blocked{Reason: ReasonError, Message: "unknown strategy/source smart"},
				Fixes: []string{"set StorageProfile replicated spec.cloneStrategy, or the StorageClass's cdi.kubevirt.io/clone-strategy annotation, to csi-clone, snapshot or copy"}},
		},
		"VolumeModeMismatchFallsBack": {
			reason: "planner.go validateAdvancedClonePVC: SameVolumeMode fails for a Filesystem target of a Block source.",
			in:     with(func(in *Input) { in.Target.Profile = profile("replicated", cdiv1.CloneStrategyCsiClone, &fs) }),
			want: Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "StorageProfile replicated status.cloneStrategy",
				Fallback: &Fallback{Reason: ReasonIncompatibleVolumeModes, Message: MessageIncompatibleVolumeModes},
				Fixes:    []string{"give the target the source's volume mode Block (spec.storage.volumeMode, or the first claimPropertySets entry of StorageProfile replicated), not Filesystem"}},
		},
		"LargerTargetWithoutExpansionFallsBack": {
			reason: "planner.go validateAdvancedClonePVC: a target request above the source capacity needs allowVolumeExpansion.",
			in:     with(func(in *Input) { in.Target.Size = qty("20Gi") }),
			want: Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "StorageProfile replicated status.cloneStrategy",
				Fallback: &Fallback{Reason: ReasonNoVolumeExpansion, Message: MessageNoVolumeExpansion},
				Fixes:    []string{"set allowVolumeExpansion: true on StorageClass replicated, or request the source DataVolume's size so that the clone (20Gi requested) need not grow past the source's 6Gi"}},
		},
		"LargerTargetWithExpansionIsCSIClone": {
			reason: "The same clone into a class that allows expansion: CDI clones, then grows the PVC (prep-claim.go).",
			in: with(func(in *Input) {
				in.Target.Size = qty("20Gi")
				in.Target.StorageClass = class("replicated", linstor, true)
			}),
			want: Plan{Strategy: cdiv1.CloneStrategyCsiClone, Via: "StorageProfile replicated status.cloneStrategy"},
		},
		"MinimumSupportedSizeCountsAsGrowth": {
			reason: "common/util.go GetEffectiveVolumeSize raises the target to the profile's minimumSupportedPvcSize before the planner compares.",
			in: with(func(in *Input) {
				in.Target.Profile.Annotations = map[string]string{AnnMinimumSupportedPVCSize: "10Gi"}
			}),
			want: Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "StorageProfile replicated status.cloneStrategy",
				Fallback: &Fallback{Reason: ReasonNoVolumeExpansion, Message: MessageNoVolumeExpansion},
				Fixes:    []string{"set allowVolumeExpansion: true on StorageClass replicated, or request the source DataVolume's size so that the clone (10Gi requested) need not grow past the source's 6Gi"}},
		},
		"EqualFilesystemSizesNeedNoExpansion": {
			reason: "common/util.go InflateSizeWithOverhead inflates both the golden and the worker by the same overhead, so the golden's size fits its own capacity (ceil(6Gi*1.06) = 6828998001 bytes).",
			in: with(func(in *Input) {
				in.Source.VolumeMode, in.Source.Request, in.Source.Capacity = &fs, resource.NewQuantity(6828998001, resource.BinarySI), resource.NewQuantity(6828998001, resource.BinarySI)
				in.Target.Profile = profile("replicated", cdiv1.CloneStrategyCsiClone, &fs)
			}),
			want: Plan{Strategy: cdiv1.CloneStrategyCsiClone, Via: "StorageProfile replicated status.cloneStrategy"},
		},
		"FilesystemOverheadCanTipTheBalance": {
			reason: "A per-class overhead above the golden's makes the same 6Gi request larger than the golden's capacity.",
			in: with(func(in *Input) {
				in.Source.VolumeMode, in.Source.Request, in.Source.Capacity = &fs, resource.NewQuantity(6828998001, resource.BinarySI), resource.NewQuantity(6828998001, resource.BinarySI)
				in.Target.Profile = profile("replicated", cdiv1.CloneStrategyCsiClone, &fs)
				in.Target.FilesystemOverhead = "0.1"
			}),
			want: Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "StorageProfile replicated status.cloneStrategy",
				Fallback: &Fallback{Reason: ReasonNoVolumeExpansion, Message: MessageNoVolumeExpansion},
				Fixes:    []string{"set allowVolumeExpansion: true on StorageClass replicated, or request the source DataVolume's size so that the clone (7086696039 requested) need not grow past the source's 6828998001"}},
		},
		"SourceWithoutCapacityIsAnErrorThatClears": {
			reason: "planner.go validateAdvancedClonePVC: a source with no status.capacity is \"source/target size info missing\", an error the populator retries with back-off.",
			in:     with(func(in *Input) { in.Source.Capacity, in.Source.Phase = nil, corev1.ClaimPending }),
			want: Plan{Blocked: &Blocked{Reason: ReasonError, Message: "source/target size info missing", Waits: true,
				Awaits: "PVC talos-worker-abc-v1.13.6 has no status.capacity.storage yet (status.phase Pending)", OnSource: true},
				Fixes: []string{"if status.capacity stays unset, find out why PVC talos-worker-abc-v1.13.6 is not Bound (kubectl describe pvc): CDI decides from that capacity whether the clone must grow"}},
		},
		"SourceRequestDoesNotStandInForItsCapacity": {
			reason: "planner.go validateAdvancedClonePVC reads status.capacity only: a claim that requests as much as the target but has no capacity yet still waits.",
			in: with(func(in *Input) {
				in.Source.Capacity, in.Source.Request, in.Target.Size = nil, qty("20Gi"), qty("20Gi")
			}),
			want: Plan{Blocked: &Blocked{Reason: ReasonError, Message: "source/target size info missing", Waits: true,
				Awaits: "PVC talos-worker-abc-v1.13.6 has no status.capacity.storage yet (status.phase unset)", OnSource: true},
				Fixes: []string{"if status.capacity stays unset, find out why PVC talos-worker-abc-v1.13.6 is not Bound (kubectl describe pvc): CDI decides from that capacity whether the clone must grow"}},
		},
		"SourceWithoutClassClonesWithItsVolumesDriver": {
			reason: "clone/common.go GetCommonDriver takes a PVC's driver from its bound PV (GetDriverFromVolume) before its class: a golden that exists only as a PVC with no class is a CSI clone.",
			in: with(func(in *Input) {
				in.Source.StorageClass, in.Source.Profile, in.Source.CSIDriver, in.Source.VolumeName = nil, nil, linstor, "pvc-0b1c"
			}),
			want: Plan{Strategy: cdiv1.CloneStrategyCsiClone, Via: "StorageProfile replicated status.cloneStrategy"},
		},
		"SourceWithoutClassTakesTheSnapshotClassOfItsProfile": {
			reason: "getSnapshotClassForClaim reads a classless source's snapshot class from the Kubernetes default class's StorageProfile (the caller's Profile): both profiles name a VolumeSnapshotClass that does not exist, an error, whatever default the driver has.",
			in: with(func(in *Input) {
				in.Source.StorageClass, in.Source.CSIDriver = nil, linstor
				in.Source.Profile = profile("replicated", cdiv1.CloneStrategySnapshot, &block)
				in.Source.Profile.Status.SnapshotClass = ptr("gone")
				in.Target.Profile = profile("replicated", cdiv1.CloneStrategySnapshot, &block)
				in.Target.Profile.Status.SnapshotClass = ptr("gone")
				in.SnapshotClasses = []VolumeSnapshotClass{{Name: "linstor", Driver: linstor, Default: true}}
			}),
			want: Plan{Blocked: &Blocked{Reason: ReasonError, Message: `volumesnapshotclasses.snapshot.storage.k8s.io "gone" not found`},
				Fixes: []string{"create VolumeSnapshotClass gone for driver linstor.csi.linbit.com, or set spec.snapshotClass on the StorageProfiles to one that exists"}},
		},
		"SourceWithoutClassOnANonCSIVolumeIsIncompatible": {
			reason: "GetDriverFromVolume gives no driver for a PV that is not a CSI volume (or is missing); with no class there is no common driver.",
			in: with(func(in *Input) {
				in.Source.StorageClass, in.Source.Profile, in.Source.VolumeName = nil, nil, "pvc-0b1c"
			}),
			want: Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "StorageProfile replicated status.cloneStrategy",
				Fallback: &Fallback{Reason: ReasonIncompatibleProvisioners, Message: MessageIncompatibleProvisioners},
				Fixes:    []string{"clone within one CSI driver: the source is on no StorageClass CDI can find, and its PersistentVolume pvc-0b1c (spec.volumeName) is not a CSI volume CDI can read, the target on StorageClass replicated (provisioner linstor.csi.linbit.com)"}},
		},
		"SourceWithoutClassOrCSIVolumeIsIncompatible": {
			reason: "GetCommonDriver: no PV driver (not bound, not a CSI volume) and no class is no common driver, IncompatibleProvisioners.",
			in: with(func(in *Input) {
				in.Source.StorageClass, in.Source.Profile = nil, nil
			}),
			want: Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "StorageProfile replicated status.cloneStrategy",
				Fallback: &Fallback{Reason: ReasonIncompatibleProvisioners, Message: MessageIncompatibleProvisioners},
				Fixes:    []string{"clone within one CSI driver: the source is on no StorageClass CDI can find, the target on StorageClass replicated (provisioner linstor.csi.linbit.com)"}},
		},
		"SourceVolumeClaimedByAnotherClaimIsAnError": {
			reason: "clone/common.go GetDriverFromVolume: a bound PV whose spec.claimRef names another claim is an error on every attempt.",
			in: with(func(in *Input) {
				in.Source.VolumeName, in.Source.VolumeClaimedByOther = "pvc-0b1c", true
			}),
			want: Plan{Blocked: &Blocked{Reason: ReasonError, Message: "pvc does not match volume claim ref"},
				Fixes: []string{"bind PVC talos-worker-abc-v1.13.6 to a PersistentVolume of its own: PersistentVolume pvc-0b1c (its spec.volumeName) names another claim in spec.claimRef"}},
		},
		"SourceVolumeClaimedByAnotherClaimDoesNotStopACopy": {
			reason: "planner.go computeStrategyForSourcePVC asks for the driver only for the snapshot and csi-clone strategies; a copy never reads the PV.",
			in: with(func(in *Input) {
				in.Source.VolumeName, in.Source.VolumeClaimedByOther = "pvc-0b1c", true
				in.Target.Profile = profile("replicated", cdiv1.CloneStrategyHostAssisted, &block)
			}),
			want: Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "StorageProfile replicated status.cloneStrategy",
				Fixes: []string{"set spec.cloneStrategy on StorageProfile replicated to csi-clone (if driver linstor.csi.linbit.com supports volume cloning) or snapshot (with a VolumeSnapshotClass for driver linstor.csi.linbit.com); CDI sets status.cloneStrategy to copy from spec.cloneStrategy, the StorageClass's cdi.kubevirt.io/clone-strategy annotation, or when no VolumeSnapshotClass exists for the driver"}},
		},
		"SmallerTargetIsRefusedByThePlanner": {
			reason: "planner.go validateSourcePVC via common/util.go ValidateRequestedCloneSize: the rendered target request below the source's is an error.",
			in: with(func(in *Input) {
				in.Source.VolumeMode = &fs
				in.Target.Profile = profile("replicated", cdiv1.CloneStrategyCsiClone, &fs)
				in.Source.Request, in.Target.Size = qty("8Gi"), qty("6Gi")
			}),
			want: Plan{Blocked: &Blocked{Reason: ReasonError, Message: "target resources requests storage size is smaller than the source 6828998001 < 8589934592"},
				Fixes: []string{"request at least the source's size"}},
		},
		"SmallerTargetOfABlockSourceFailsValidation": {
			reason: "pvc-clone-controller.go validateClone compares the requested size with a Block source's request before any PVC exists.",
			in:     with(func(in *Input) { in.Target.Size = qty("5Gi") }),
			want: Plan{Blocked: &Blocked{Reason: ReasonCloneValidationFailed, Message: "The clone doesn't meet the validation requirements: target resources requests storage size is smaller than the source 5368709120 < 6442450944"},
				Fixes: []string{"request at least the source's size"}},
		},
		"FilesystemToBlockSkipsTheSizeCheckAndFallsBack": {
			reason: "pvc-clone-controller.go detectCloneSize marks a Filesystem-to-Block clone permissive, so planner.go validateSourcePVC is skipped and the mode check decides.",
			in: with(func(in *Input) {
				in.Source.VolumeMode, in.Source.Request = &fs, qty("8Gi")
			}),
			want: Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "StorageProfile replicated status.cloneStrategy",
				Fallback: &Fallback{Reason: ReasonIncompatibleVolumeModes, Message: MessageIncompatibleVolumeModes},
				Fixes:    []string{"give the target the source's volume mode Filesystem (spec.storage.volumeMode, or the first claimPropertySets entry of StorageProfile replicated), not Block"}},
		},
		"MissingSourceWaits": {
			reason: "pvc-clone-controller.go validateCloneAndSourcePVC: CloneWithoutSource, and CDI waits for the PVC.",
			in:     with(func(in *Input) { in.Source = nil }),
			want: Plan{Blocked: &Blocked{Reason: ReasonCloneWithoutSource, Message: "The source pvc talos-worker-abc-v1.13.6 doesn't exist", Waits: true,
				Awaits: "PVC talos-worker-abc-v1.13.6 does not exist (or has not been seen) yet", OnSource: true},
				Fixes: []string{"if PVC talos-worker-abc-v1.13.6 never appears, create it (CDI clones as soon as it exists)"}},
		},
		"NoCSIDriverIsANoPopulatorCopy": {
			reason: "controller-base.go shouldUseCDIPopulator needs a CSIDriver object; without it pvc-clone-controller.go syncClone marks the PVC host-assisted with NoPopulator.",
			in:     with(func(in *Input) { in.Target.NoPopulator = true }),
			want: Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "the DataVolume controller (no clone populator)",
				Fallback: &Fallback{Reason: ReasonNoPopulator, Message: MessageNoPopulator},
				Fixes:    []string{"use a StorageClass whose provisioner is a CSI driver with a CSIDriver object, and leave cdi.kubevirt.io/storage.usePopulator unset on the DataVolume; CDI plans CSI clones and snapshots only through its clone populator"}},
		},
		"ProvisionerThatIsNoCSIDriverIsANoPopulatorCopy": {
			reason: "rancher.io/local-path is no CSI driver, so no CSIDriver object names it: shouldUseCDIPopulator says no whatever the StorageProfile's strategy.",
			in: with(func(in *Input) {
				in.Source.StorageClass.Provisioner, in.Target.StorageClass.Provisioner = "rancher.io/local-path", "rancher.io/local-path"
			}),
			want: Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "the DataVolume controller (no clone populator)",
				Fallback: &Fallback{Reason: ReasonNoPopulator, Message: MessageNoPopulator},
				Fixes:    []string{"use a StorageClass of a CSI driver: the provisioner of StorageClass replicated, rancher.io/local-path, is none, so CDI can only copy onto it"}},
		},
		"MissingTargetClassWithAccessModesIsANoPopulatorCopy": {
			reason: "datavolume/util.go storageClassCSIDriverExists finds no class, so no populator; the PVC is created with the named class.",
			in: with(func(in *Input) {
				in.Target.StorageClassName, in.Target.StorageClass, in.Target.Profile = "gone", nil, nil
				in.Target.AccessModes, in.Target.VolumeMode = []corev1.PersistentVolumeAccessMode{rwx}, &block
			}),
			want: Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "the DataVolume controller (no clone populator)",
				Fallback: &Fallback{Reason: ReasonNoPopulator, Message: MessageNoPopulator},
				Fixes:    []string{"create StorageClass gone, or name one that exists; CDI plans CSI clones and snapshots only for a class it can read"}},
		},
		"NoClassAndNoAccessModesIsErrClaimNotValid": {
			reason: "datavolume/util.go renderPvcSpecVolumeModeAndAccessModesAndStorageClass returns ErrStorageClassNotFound; no PVC is ever made.",
			in: with(func(in *Input) {
				in.Target.StorageClassName, in.Target.StorageClass, in.Target.Profile = "", nil, nil
			}),
			want: Plan{Blocked: &Blocked{Reason: ReasonErrClaimNotValid, Message: "PVC spec is missing accessMode and no storageClass to choose profile"},
				Fixes: []string{"name an existing StorageClass, or mark one as default with storageclass.kubernetes.io/is-default-class or storageclass.kubevirt.io/is-default-virt-class (CDI ignores the beta annotation)"}},
		},
		"EmptyStorageProfileIsErrClaimNotValid": {
			reason: "datavolume/util.go getDefaultVolumeAndAccessMode: a profile without claimPropertySets cannot fill the modes.",
			in:     with(func(in *Input) { in.Target.Profile = profile("replicated", cdiv1.CloneStrategyCsiClone, nil) }),
			want: Plan{Blocked: &Blocked{Reason: ReasonErrClaimNotValid, Message: "no accessMode specified in StorageProfile replicated"},
				Fixes: []string{"set spec.claimPropertySets (accessModes and volumeMode) on StorageProfile replicated, or set accessModes and volumeMode on the DataVolume"}},
		},
		"NoMatchingClaimPropertySetIsErrClaimNotValid": {
			reason: "datavolume/util.go getDefaultAccessModes: a volumeMode the profile lists no access modes for.",
			in: with(func(in *Input) {
				in.Target.VolumeMode = &fs
			}),
			want: Plan{Blocked: &Blocked{Reason: ReasonErrClaimNotValid, Message: "no matching accessMode specified in StorageProfile replicated"},
				Fixes: []string{"set spec.claimPropertySets (accessModes and volumeMode) on StorageProfile replicated, or set accessModes and volumeMode on the DataVolume"}},
		},
		"AccessModesWithoutMatchingSetAreFilesystem": {
			reason: "datavolume/util.go getDefaultVolumeMode falls back to the Kubernetes default when no set shares an access mode.",
			in: with(func(in *Input) {
				in.Target.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
			}),
			want: Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "StorageProfile replicated status.cloneStrategy",
				Fallback: &Fallback{Reason: ReasonIncompatibleVolumeModes, Message: MessageIncompatibleVolumeModes},
				Fixes:    []string{"give the target the source's volume mode Block (spec.storage.volumeMode, or the first claimPropertySets entry of StorageProfile replicated), not Filesystem"}},
		},
		"StorageProfileNotCreatedYetWaits": {
			reason: "datavolume/util.go wraps the failed profile lookup as \"cannot get StorageProfile\"; CDI creates the profile and retries.",
			in:     with(func(in *Input) { in.Target.Profile = nil }),
			want: Plan{Blocked: &Blocked{Reason: ReasonErrClaimNotValid, Message: `cannot get StorageProfile: storageprofiles.cdi.kubevirt.io "replicated" not found`, Waits: true,
				Awaits: "StorageProfile replicated, whose status.claimPropertySets give the worker disk its access and volume modes, does not exist yet"},
				Fixes: []string{"if StorageProfile replicated never appears, check that CDI is running: its StorageProfile controller creates one for every StorageClass"}},
		},
		"SizeBelowOneMiBIsErrClaimNotValid": {
			reason: "datavolume/util.go renderPvcSpecVolumeSize refuses less than 1MiB.",
			in:     with(func(in *Input) { in.Target.Size = qty("512Ki") }),
			want: Plan{Blocked: &Blocked{Reason: ReasonErrClaimNotValid, Message: "PVC Spec is not valid - storage size should be at least 1MiB"},
				Fixes: []string{"request at least 1Mi"}},
		},
		"SizeFromSourceNeverGrows": {
			reason: "pvc-clone-controller.go detectCloneSize sizes a target without a size from the source, so there is nothing to expand.",
			in:     with(func(in *Input) { in.Target.Size = nil }),
			want:   Plan{Strategy: cdiv1.CloneStrategyCsiClone, Via: "StorageProfile replicated status.cloneStrategy"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Predict(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestHostAssisted(t *testing.T) {
	if !(Plan{Strategy: cdiv1.CloneStrategyHostAssisted}).HostAssisted() || (Plan{Strategy: cdiv1.CloneStrategyCsiClone}).HostAssisted() {
		t.Error("only a copy is host-assisted")
	}
}
