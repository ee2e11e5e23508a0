package cdistate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
)

// cond builds a condition as CDI writes it: conditions.go updateCondition.
func cond(t cdiv1.DataVolumeConditionType, status corev1.ConditionStatus, reason, message string) cdiv1.DataVolumeCondition {
	return cdiv1.DataVolumeCondition{Type: t, Status: status, Reason: reason, Message: message}
}

func dv(phase cdiv1.DataVolumePhase, progress string, restarts int32, conds ...cdiv1.DataVolumeCondition) *cdiv1.DataVolume {
	return &cdiv1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "golden", Namespace: "cozy-public"},
		Status:     cdiv1.DataVolumeStatus{Phase: phase, Progress: cdiv1.DataVolumeProgress(progress), RestartCount: restarts, Conditions: conds},
	}
}

func claim(owner string) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "golden", Namespace: "cozy-public"}}
	if owner != "" {
		yes := true
		pvc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "cdi.kubevirt.io/v1beta1", Kind: "DataVolume", Name: owner, Controller: &yes}}
	}
	return pvc
}

const (
	bound   = cdiv1.DataVolumeBound
	ready   = cdiv1.DataVolumeReady
	running = cdiv1.DataVolumeRunning
	isFalse = corev1.ConditionFalse
	isTrue  = corev1.ConditionTrue
)

func TestOf(t *testing.T) {
	cases := map[string]struct {
		reason string
		dv     *cdiv1.DataVolume
		pvc    *corev1.PersistentVolumeClaim
		want   State
	}{
		"NothingIsMissing": {
			reason: "No DataVolume and no PVC: there is nothing to clone.",
			want:   State{Kind: Missing},
		},
		"PVCWithoutDataVolumeIsReady": {
			reason: "containerized-data-importer-api utils.go IsPopulated: a PVC whose controller is not a DataVolume counts as populated.",
			pvc:    claim(""),
			want:   State{Kind: Succeeded, Reason: ReasonPVCWithoutDataVolume, Message: "PVC cozy-public/golden is owned by no DataVolume; CDI treats it as populated"},
		},
		"PVCWhoseDataVolumeIsGoneIsMissing": {
			reason: "IsPopulated looks the owning DataVolume up; when it is gone the lookup fails and CDI never clones the PVC.",
			pvc:    claim("golden"),
			want:   State{Kind: Missing, Reason: ReasonOwningDataVolumeMissing, Message: "PVC cozy-public/golden is owned by DataVolume golden, which does not exist; CDI never counts such a PVC as populated"},
		},
		"NoPhaseYetIsPending": {
			reason: "A DataVolume CDI has not reconciled has no status at all.",
			dv:     dv("", "", 0),
			want:   State{Kind: Pending},
		},
		"NoPVCYetIsPending": {
			reason: "controller-base.go updateStatus sets Pending without a PVC; conditions.go updateBoundCondition says NotFound \"No PVC found\".",
			dv:     dv(cdiv1.Pending, "", 0, cond(bound, isFalse, ReasonNotFound, "No PVC found"), cond(ready, isFalse, "", ""), cond(running, isFalse, "", "")),
			want:   State{Kind: Pending, Phase: cdiv1.Pending, Reason: ReasonNotFound, Message: "No PVC found"},
		},
		"QuotaIsPendingWithCDIsReason": {
			reason: "controller-base.go handlePvcCreation keeps Pending with ErrExceededQuota; freeing quota clears it without touching the DataVolume.",
			dv:     dv(cdiv1.Pending, "", 0, cond(bound, isFalse, ReasonErrExceededQuota, `persistentvolumeclaims "golden" is forbidden: exceeded quota`), cond(ready, isFalse, ReasonErrExceededQuota, `persistentvolumeclaims "golden" is forbidden: exceeded quota`)),
			want:   State{Kind: Pending, Phase: cdiv1.Pending, Reason: ReasonErrExceededQuota, Message: `persistentvolumeclaims "golden" is forbidden: exceeded quota`},
		},
		"WaitForFirstConsumerIsPending": {
			reason: "controller-base.go updateStatusPVCPending: a WFFC class without a consumer.",
			dv:     dv(cdiv1.WaitForFirstConsumer, "N/A", 0, cond(bound, isFalse, "Pending", "PVC golden Pending")),
			want:   State{Kind: Pending, Phase: cdiv1.WaitForFirstConsumer, Reason: "Pending", Message: "PVC golden Pending"},
		},
		"ImportInProgressCarriesProgress": {
			reason: "import-controller.go updateStatusPhase: pod running; controller-base.go updateProgressUsingPod writes the percentage.",
			dv:     dv(cdiv1.ImportInProgress, "45.53%", 0, cond(bound, isTrue, "Bound", "PVC golden Bound"), cond(running, isTrue, "Pod is running", "")),
			want:   State{Kind: Importing, Phase: cdiv1.ImportInProgress, Progress: "45.53%", Reason: "Pod is running"},
		},
		"UnknownProgressIsEmpty": {
			reason: "controller-base.go reconcileProgressUpdate writes N/A until the pod reports.",
			dv:     dv(cdiv1.ImportScheduled, "N/A", 0),
			want:   State{Kind: Importing, Phase: cdiv1.ImportScheduled},
		},
		"UnschedulableImporterIsStillImporting": {
			reason: "conditions.go updateRunningCondition: Unschedulable clears once capacity frees up.",
			dv:     dv(cdiv1.ImportScheduled, "N/A", 0, cond(running, isFalse, ReasonUnschedulable, "Importer pod cannot be scheduled")),
			want:   State{Kind: Importing, Phase: cdiv1.ImportScheduled, Reason: ReasonUnschedulable, Message: "Importer pod cannot be scheduled"},
		},
		"CloneInProgressIsImporting": {
			reason: "clone-controller-base.go populatorPhaseMap: a clone in progress is work CDI finishes by itself.",
			dv:     dv(cdiv1.CSICloneInProgress, "N/A", 0, cond(running, isTrue, "Populator is running", "")),
			want:   State{Kind: Importing, Phase: cdiv1.CSICloneInProgress, Reason: "Populator is running"},
		},
		"FewRestartsAreImporting": {
			reason: "Two restarts with the importer down are below the threshold: a blip.",
			dv:     dv(cdiv1.ImportInProgress, "N/A", 2, cond(running, isFalse, ReasonError, "Unable to connect to http data source")),
			want:   State{Kind: Importing, Phase: cdiv1.ImportInProgress, Reason: ReasonError, Message: "Unable to connect to http data source", Restarts: 2},
		},
		"RestartLoopIsFailing": {
			reason: "import-controller.go updateStatusPhase keeps the phase on a non-fatal pod failure; pkg/controller/util.go setAnnotationsFromPodWithPrefix copies the restarts and the container's reason.",
			dv:     dv(cdiv1.ImportInProgress, "N/A", 3, cond(running, isFalse, ReasonError, "Unable to connect to http data source: expected status code 200, got 404")),
			want:   State{Kind: Failing, Phase: cdiv1.ImportInProgress, Reason: ReasonError, Message: "Unable to connect to http data source: expected status code 200, got 404", Restarts: 3},
		},
		"RestartsWhileRunningAreImporting": {
			reason: "An importer that runs again after restarts is making progress.",
			dv:     dv(cdiv1.ImportInProgress, "12.00%", 5, cond(running, isTrue, "Pod is running", "")),
			want:   State{Kind: Importing, Phase: cdiv1.ImportInProgress, Progress: "12.00%", Reason: "Pod is running", Restarts: 5},
		},
		"ImagePullFailureIsFailing": {
			reason: "pkg/controller/util.go setAnnotationsFromPodWithPrefix: ImagePullFailed never restarts the container, so the restart count stays 0.",
			dv:     dv(cdiv1.ImportScheduled, "N/A", 0, cond(running, isFalse, ReasonImagePullFailed, "failed to pull image: quay.io/kubevirt/cdi-importer:v1.65.0")),
			want:   State{Kind: Failing, Phase: cdiv1.ImportScheduled, Reason: ReasonImagePullFailed, Message: "failed to pull image: quay.io/kubevirt/cdi-importer:v1.65.0"},
		},
		"ChecksumMismatchIsFailed": {
			reason: "pkg/controller/import-controller.go updatePvcFromPod marks a checksum mismatch fatal (v1.65+); datavolume/import-controller.go updateStatusPhase then sets Failed.",
			dv:     dv(cdiv1.Failed, "N/A", 0, cond(running, isFalse, ReasonChecksumError, "checksum mismatch: expected sha256:aa, got sha256:bb")),
			want:   State{Kind: Failed, Phase: cdiv1.Failed, Reason: ReasonChecksumError, Message: "checksum mismatch: expected sha256:aa, got sha256:bb"},
		},
		"LostClaimIsFailed": {
			reason: "controller-base.go updateStatus: ClaimLost sets Failed; conditions.go updateBoundCondition says \"Claim Lost\".",
			dv:     dv(cdiv1.Failed, "N/A", 0, cond(bound, isFalse, ReasonClaimLost, "Claim Lost"), cond(running, isFalse, "", "")),
			want:   State{Kind: Failed, Phase: cdiv1.Failed, Reason: ReasonClaimLost, Message: "Claim Lost"},
		},
		"NoDefaultClassIsPermanent": {
			reason: "datavolume/util.go renderPvcSpecVolumeModeAndAccessModesAndStorageClass returns ErrStorageClassNotFound; controller-base.go syncDvPvcState keeps the phase empty with ErrClaimNotValid and does not requeue.",
			dv: dv("", "", 0,
				cond(bound, isFalse, ReasonErrClaimNotValid, MessageStorageClassNotFound),
				cond(ready, isFalse, ReasonErrClaimNotValid, MessageStorageClassNotFound),
				cond(running, isFalse, "", "")),
			want: State{Kind: Permanent, Reason: ReasonErrClaimNotValid, Message: MessageStorageClassNotFound},
		},
		"IncompleteStorageProfileIsPermanent": {
			reason: "datavolume/util.go getDefaultVolumeAndAccessMode: a StorageProfile without claimPropertySets; only editing the profile helps.",
			dv:     dv("", "", 0, cond(bound, isFalse, ReasonErrClaimNotValid, "no accessMode specified in StorageProfile replicated")),
			want:   State{Kind: Permanent, Reason: ReasonErrClaimNotValid, Message: "no accessMode specified in StorageProfile replicated"},
		},
		"SizeBelowOneMiBIsPermanent": {
			reason: "datavolume/util.go renderPvcSpecVolumeSize refuses a size below 1MiB; a DataVolume spec is immutable.",
			dv:     dv("", "", 0, cond(ready, isFalse, ReasonErrClaimNotValid, "PVC Spec is not valid - storage size should be at least 1MiB")),
			want:   State{Kind: Permanent, Reason: ReasonErrClaimNotValid, Message: "PVC Spec is not valid - storage size should be at least 1MiB"},
		},
		"StorageProfileNotYetCreatedIsPending": {
			reason: "datavolume/util.go wraps the profile lookup error as \"cannot get StorageProfile\"; CDI's StorageProfile controller creates one per class and the StorageProfile watch re-reconciles the DataVolume.",
			dv:     dv("", "", 0, cond(bound, isFalse, ReasonErrClaimNotValid, `cannot get StorageProfile: storageprofiles.cdi.kubevirt.io "fast" not found`)),
			want:   State{Kind: Pending, Reason: ReasonErrClaimNotValid, Message: `cannot get StorageProfile: storageprofiles.cdi.kubevirt.io "fast" not found`},
		},
		"CloneValidationFailedIsPermanent": {
			reason: "pvc-clone-controller.go validateCloneAndSourcePVC: the phase is left as it was and only the reason tells.",
			dv: dv(cdiv1.Pending, "", 0,
				cond(bound, isFalse, ReasonCloneValidationFailed, "The clone doesn't meet the validation requirements: target resources requests storage size is smaller than the source 5368709120 < 6442450944"),
				cond(ready, isFalse, ReasonCloneValidationFailed, "The clone doesn't meet the validation requirements: target resources requests storage size is smaller than the source 5368709120 < 6442450944")),
			want: State{Kind: Permanent, Phase: cdiv1.Pending, Reason: ReasonCloneValidationFailed, Message: "The clone doesn't meet the validation requirements: target resources requests storage size is smaller than the source 5368709120 < 6442450944"},
		},
		"CloneWithoutSourceIsAReasonNotAPhase": {
			reason: "pvc-clone-controller.go validateCloneAndSourcePVC keeps datavolume.Status.Phase and sets CloneWithoutSource on Bound and Ready.",
			dv: dv("", "", 0,
				cond(bound, isFalse, ReasonCloneWithoutSource, "The source pvc talos-worker-x doesn't exist"),
				cond(ready, isFalse, ReasonCloneWithoutSource, "The source pvc talos-worker-x doesn't exist")),
			want: State{Kind: WaitingForSource, Reason: ReasonCloneWithoutSource, Message: "The source pvc talos-worker-x doesn't exist"},
		},
		"CloneWithoutSourceKeepsAnEarlierPhase": {
			reason: "A clone that was Pending when its source went away stays Pending; the reason is what says why.",
			dv:     dv(cdiv1.Pending, "", 0, cond(bound, isFalse, ReasonCloneWithoutSource, "The source pvc talos-worker-x doesn't exist")),
			want:   State{Kind: WaitingForSource, Phase: cdiv1.Pending, Reason: ReasonCloneWithoutSource, Message: "The source pvc talos-worker-x doesn't exist"},
		},
		"ImageTooLargeForVolumeIsPermanent": {
			reason: "pkg/controller/util.go simplifyKnownMessage rewrites out-of-space errors; the importer fails identically on every restart.",
			dv:     dv(cdiv1.ImportInProgress, "N/A", 1, cond(running, isFalse, ReasonError, MessageTooSmall)),
			want:   State{Kind: Permanent, Phase: cdiv1.ImportInProgress, Reason: ReasonError, Message: MessageTooSmall, Restarts: 1},
		},
		"ClonePopulatorSizeErrorIsPermanent": {
			reason: "clone/planner.go validateSourcePVC fails; populators/clone-populator.go updateClonePhaseError writes Running=False, reason Error, and the DataVolume keeps CloneScheduled.",
			dv:     dv(cdiv1.CloneScheduled, "N/A", 0, cond(running, isFalse, ReasonError, "target resources requests storage size is smaller than the source 1 < 2")),
			want:   State{Kind: Permanent, Phase: cdiv1.CloneScheduled, Reason: ReasonError, Message: "target resources requests storage size is smaller than the source 1 < 2"},
		},
		"ClonePopulatorWaitingForCapacityIsImporting": {
			reason: "clone/planner.go validateAdvancedClonePVC: \"source/target size info missing\" clears once the source PVC reports its capacity.",
			dv:     dv(cdiv1.CloneScheduled, "N/A", 0, cond(running, isFalse, ReasonError, "source/target size info missing")),
			want:   State{Kind: Importing, Phase: cdiv1.CloneScheduled, Reason: ReasonError, Message: "source/target size info missing"},
		},
		"PopulatorTargetClassMissingIsPermanent": {
			reason: "populators/util.go claimReadyForPopulation errors until someone creates the class; the error becomes Running=False, reason Error.",
			dv:     dv(cdiv1.CloneScheduled, "N/A", 0, cond(running, isFalse, ReasonError, "storage class fast not found")),
			want:   State{Kind: Permanent, Phase: cdiv1.CloneScheduled, Reason: ReasonError, Message: "storage class fast not found"},
		},
		"SucceededIsReady": {
			reason: "import-controller.go updateStatusPhase: pod succeeded, progress 100.0%.",
			dv:     dv(cdiv1.Succeeded, "100.0%", 0, cond(bound, isTrue, "Bound", "PVC golden Bound"), cond(ready, isTrue, "", ""), cond(running, isFalse, "Completed", "Import Complete")),
			want:   State{Kind: Succeeded, Phase: cdiv1.Succeeded, Progress: "100.0%"},
		},
		"SucceededWinsOverStaleRestarts": {
			reason: "A restart count from a past attempt never outlives success.",
			dv:     dv(cdiv1.Succeeded, "100.0%", 7, cond(running, isFalse, "Completed", "")),
			want:   State{Kind: Succeeded, Phase: cdiv1.Succeeded, Progress: "100.0%", Restarts: 7},
		},
		"DataVolumeDecidesOverItsPVC": {
			reason: "With a DataVolume, CDI's IsPopulated asks the DataVolume, not the PVC.",
			dv:     dv(cdiv1.ImportInProgress, "1.00%", 0),
			pvc:    claim("golden"),
			want:   State{Kind: Importing, Phase: cdiv1.ImportInProgress, Progress: "1.00%"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Of(tc.dv, tc.pvc)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestHelpers(t *testing.T) {
	type flags struct{ Ready, Permanent, InProgress, NeedsAction bool }
	cases := map[string]struct {
		reason string
		kind   Kind
		want   flags
	}{
		"MissingNeedsTheCatalogNotCDI": {"Nothing to poll and nothing CDI can fix.", Missing, flags{}},
		"PendingIsPolled":              {"CDI will start it.", Pending, flags{InProgress: true}},
		"ImportingIsPolled":            {"CDI is transferring.", Importing, flags{InProgress: true}},
		"FailingNeedsAction":           {"Someone should look at the worker pod.", Failing, flags{NeedsAction: true}},
		"FailedNeedsAction":            {"CDI gave up.", Failed, flags{NeedsAction: true}},
		"PermanentNeedsAction":         {"Stuck until changed.", Permanent, flags{Permanent: true, NeedsAction: true}},
		"WaitingForSourceIsNeither":    {"The source, not CDI, must move.", WaitingForSource, flags{}},
		"SucceededIsReady":             {"Clone from it.", Succeeded, flags{Ready: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := State{Kind: tc.kind}
			got := flags{s.Ready(), s.Permanent(), s.InProgress(), s.NeedsAction()}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRemedy(t *testing.T) {
	cases := map[string]struct {
		reason string
		state  State
		want   string
	}{
		"NoRemedyWhileImporting": {
			reason: "Nothing to fix while CDI works.",
			state:  State{Kind: Importing},
		},
		"NoDefaultClassNamesTheAnnotationsCDIReads": {
			reason: "common/util.go getFallbackStorageClass reads the virt and GA annotations only.",
			state:  State{Kind: Permanent, Reason: ReasonErrClaimNotValid, Message: MessageStorageClassNotFound},
			want:   "name a StorageClass, or mark one as default with an annotation CDI reads (storageclass.kubernetes.io/is-default-class or storageclass.kubevirt.io/is-default-virt-class; CDI ignores the beta annotation); CDI retries by itself once a StorageClass changes",
		},
		"IncompleteProfileNamesClaimPropertySets": {
			reason: "The fix for an empty StorageProfile is its spec.claimPropertySets.",
			state:  State{Kind: Permanent, Reason: ReasonErrClaimNotValid, Message: "no accessMode specified in StorageProfile replicated"},
			want:   "the StorageClass's StorageProfile has no usable claimPropertySets: set spec.claimPropertySets (accessModes and volumeMode) on the StorageProfile, or use a class CDI knows; CDI retries by itself once the StorageProfile changes",
		},
		"RestartLoopClearsByItself": {
			reason: "CDI retries an unreachable URL forever.",
			state:  State{Kind: Failing, Reason: ReasonError},
			want:   "the CDI worker pod keeps failing: check its logs (an unreachable source URL is the usual cause); CDI retries by itself and the state clears once an attempt succeeds",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.state.Remedy()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
