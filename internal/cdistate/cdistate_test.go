package cdistate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/internal/labels"
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

// onClass gives a DataVolume the spec.storage CDI renders, naming class.
func onClass(d *cdiv1.DataVolume, class string) *cdiv1.DataVolume {
	d.Spec.Storage = &cdiv1.StorageSpec{StorageClassName: &class}
	return d
}

// remembering gives a golden the record the catalog writes (Remembered).
func remembering(d *cdiv1.DataVolume) *cdiv1.DataVolume {
	d.Annotations = map[string]string{labels.AnnImportPermanentError: MessageTooSmall}
	return d
}

// notFound404 is the importer's termination message for an HTTP 404:
// pkg/importer/http-datasource.go createHTTPReader 403-406, prefixed by
// cmd/cdi-importer/importer.go errorCannotConnectDataSource 368-370.
const notFound404 = "Unable to connect to http data source: expected status code 200, got 404. Status: 404 Not Found"

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
			reason: "import-controller.go updateStatusPhase keeps the phase on a non-fatal pod failure; pkg/controller/util.go setAnnotationsFromPodWithPrefix 352-388 copies the restarts and the terminated container's reason Error, and keeps them through CrashLoopBackOff (346).",
			dv:     dv(cdiv1.ImportInProgress, "N/A", 3, cond(running, isFalse, ReasonError, notFound404)),
			want:   State{Kind: Failing, Phase: cdiv1.ImportInProgress, Reason: ReasonError, Message: notFound404, Restarts: 3},
		},
		"UnschedulableAfterRestartsIsImporting": {
			reason: "util.go setAnnotationsFromPodWithPrefix 312-316 only ever raises the restart count, also across a recreated importer pod; conditions.go updateRunningCondition 69-70 says Unschedulable for the new pod, which clears once capacity frees up: the count is history, not a loop.",
			dv:     dv(cdiv1.ImportScheduled, "N/A", 3, cond(running, isFalse, ReasonUnschedulable, "Importer pod cannot be scheduled")),
			want:   State{Kind: Importing, Phase: cdiv1.ImportScheduled, Reason: ReasonUnschedulable, Message: "Importer pod cannot be scheduled", Restarts: 3},
		},
		"ContainerCreatingAfterRestartsIsImporting": {
			reason: "util.go setAnnotationsFromPodWithPrefix 346-349 copies a waiting reason other than CrashLoopBackOff verbatim: a recreated pod starting its container is not failing.",
			dv:     dv(cdiv1.ImportInProgress, "N/A", 4, cond(running, isFalse, "ContainerCreating", "")),
			want:   State{Kind: Importing, Phase: cdiv1.ImportInProgress, Reason: "ContainerCreating", Restarts: 4},
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
		"NamedClassNotYetCreatedIsPending": {
			reason: "common/util.go getStorageClassByName 545-550 returns no class for a named one that does not exist, so datavolume/util.go 180-188 gives the no-class message; controller-base.go 314-336 re-reconciles every DataVolume with an empty phase when a StorageClass is created.",
			dv: onClass(dv("", "", 0,
				cond(bound, isFalse, ReasonErrClaimNotValid, MessageStorageClassNotFound),
				cond(ready, isFalse, ReasonErrClaimNotValid, MessageStorageClassNotFound)), "fast"),
			want: State{Kind: Pending, Reason: ReasonErrClaimNotValid, Message: MessageStorageClassNotFound,
				Awaits: `CDI waits for StorageClass "fast", named in spec.storage.storageClassName, to exist and creates the PVC by itself once it does`},
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
		"PopulatorClassNotYetCreatedIsPending": {
			reason: "populators/util.go claimReadyForPopulation 117-119; clone-populator.go reconcilePending 291-294 writes it as Running=False, reason Error, and returns it to controller-runtime, which retries with back-off until the class exists.",
			dv:     dv(cdiv1.CloneScheduled, "N/A", 0, cond(running, isFalse, ReasonError, "storage class fast not found")),
			want: State{Kind: Pending, Phase: cdiv1.CloneScheduled, Reason: ReasonError, Message: "storage class fast not found",
				Awaits: `CDI waits for StorageClass "fast", which the target PVC names, to exist and its clone populator retries with back-off, continuing by itself once it does`},
		},
		"PlannerTargetClassGoneIsPending": {
			reason: "clone/planner.go validateTargetStorageClassAssignment 449-452 (reached only when the class went away after claimReadyForPopulation found it) is retried like every populator error.",
			dv:     onClass(dv(cdiv1.CloneScheduled, "N/A", 0, cond(running, isFalse, ReasonError, MessageTargetClassNotFound)), "fast"),
			want: State{Kind: Pending, Phase: cdiv1.CloneScheduled, Reason: ReasonError, Message: MessageTargetClassNotFound,
				Awaits: `CDI waits for StorageClass "fast", which the target PVC names, to exist and its clone populator retries with back-off, continuing by itself once it does`},
		},
		"ClonePopulatorUnknownStrategyIsPermanent": {
			reason: "clone/planner.go Plan 178-214 errors on a strategy it cannot plan; clone-populator.go planAndExecute 361-365 writes it through updateClonePhaseError 498-512, and getCloneStrategy 347-359 reads the strategy initTargetClaim 436-457 saved on every later reconcile.",
			dv:     dv(cdiv1.CloneScheduled, "N/A", 0, cond(running, isFalse, ReasonError, "unknown strategy/source csi-clon")),
			want:   State{Kind: Permanent, Phase: cdiv1.CloneScheduled, Reason: ReasonError, Message: "unknown strategy/source csi-clon"},
		},
		"StorageProfileSnapshotClassMissingIsPermanent": {
			reason: "clone/common.go getCommonSnapshotClass 245-264 takes both profiles' status.snapshotClass; common/util.go GetVolumeSnapshotClass 1963-1967 returns the cached client's NotFound; planner.go computeStrategyForSourcePVC 347-351 returns it. storageprofile-controller.go 101-107 never clears the stale name.",
			dv:     dv(cdiv1.CloneScheduled, "N/A", 0, cond(running, isFalse, ReasonError, `VolumeSnapshotClass.snapshot.storage.k8s.io "csi-snapclass" not found`)),
			want:   State{Kind: Permanent, Phase: cdiv1.CloneScheduled, Reason: ReasonError, Message: `VolumeSnapshotClass.snapshot.storage.k8s.io "csi-snapclass" not found`},
		},
		"PopulatorOnInTreeClassIsPermanent": {
			reason: "populators/util.go claimReadyForPopulation 121-123 and checkIntreeStorageClass 137-152: a kubernetes.io/ provisioner without the pv.kubernetes.io/migrated-to annotation; clone-populator.go reconcilePending 291-294 writes it as Running=False, reason Error.",
			dv:     dv(cdiv1.CloneScheduled, "N/A", 0, cond(running, isFalse, ReasonError, "can't use populator for PVC tenant-a/worker-disk with in-tree storage class kubernetes.io/no-provisioner")),
			want:   State{Kind: Permanent, Phase: cdiv1.CloneScheduled, Reason: ReasonError, Message: "can't use populator for PVC tenant-a/worker-disk with in-tree storage class kubernetes.io/no-provisioner"},
		},
		"PopulatorEmptyClassIsPermanent": {
			reason: "populators/util.go claimReadyForPopulation 107-108: a PVC's class is immutable, so the empty one stays.",
			dv:     dv(cdiv1.CloneScheduled, "N/A", 0, cond(running, isFalse, ReasonError, "PVC tenant-a/worker-disk has empty storage class name")),
			want:   State{Kind: Permanent, Phase: cdiv1.CloneScheduled, Reason: ReasonError, Message: "PVC tenant-a/worker-disk has empty storage class name"},
		},
		"TooSmallStaysPermanentWhileImporterRunsAgain": {
			reason: "util.go setAnnotationsFromPodWithPrefix 325-330 writes Running=True \"Pod is running\" with an empty message each time the importer restarts; the catalog's record keeps the state Permanent instead of flapping to Importing.",
			dv:     remembering(dv(cdiv1.ImportInProgress, "3.00%", 2, cond(running, isTrue, "Pod is running", ""))),
			want:   State{Kind: Permanent, Phase: cdiv1.ImportInProgress, Progress: "3.00%", Reason: ReasonError, Message: MessageTooSmall, Restarts: 2},
		},
		"RecordNeverOutlivesSuccess": {
			reason: "A Succeeded phase decides before the record: import-controller.go updateStatusPhase 314-315.",
			dv:     remembering(dv(cdiv1.Succeeded, "100.0%", 2)),
			want:   State{Kind: Succeeded, Phase: cdiv1.Succeeded, Progress: "100.0%", Restarts: 2},
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
		"HTTPNotFoundNeedsTheURLFixed": {
			reason: "The importer exits 1 on a 404 (cmd/cdi-importer/importer.go errorCannotConnectDataSource 368-372) and CDI restarts it forever; only the server serving the image, or a new URL, ends it.",
			state:  State{Kind: Failing, Reason: ReasonError, Message: notFound404, Restarts: 3},
			want:   "the import source answers HTTP 404 Not Found: CDI restarts the importer forever, but every attempt gets the same answer until the server serves the image at that URL; correct the URL (a DataVolume's source is immutable: delete the DataVolume and create it with the right URL)",
		},
		"UnknownStrategyNamesWhereItCameFrom": {
			reason: "storageprofile-controller.go reconcileCloneStrategy 247-250 copies spec.cloneStrategy unchecked; the populator saves it on the claim.",
			state:  State{Kind: Permanent, Reason: ReasonError, Message: "unknown strategy/source csi-clon"},
			want:   `CDI saved clone strategy "csi-clon" in the target PVC's cdi.kubevirt.io/cloneType and cannot plan it (it knows copy, snapshot and csi-clone from a PVC, copy and snapshot from a snapshot) and never chooses again: correct where "csi-clon" came from (the StorageProfile's spec.cloneStrategy, or a cdi.kubevirt.io/cloneType annotation on the DataVolume), then delete the DataVolume so it is created again`,
		},
		"MissingSnapshotClassNamesIt": {
			reason: "The error comes before initTargetClaim saves a strategy, so the populator's next retry picks up a fixed profile.",
			state:  State{Kind: Permanent, Reason: ReasonError, Message: `VolumeSnapshotClass.snapshot.storage.k8s.io "csi-snapclass" not found`},
			want:   `the StorageProfiles of the clone's StorageClasses name VolumeSnapshotClass "csi-snapclass" in status.snapshotClass, which does not exist (CDI keeps the name after the class is deleted): create VolumeSnapshotClass "csi-snapclass" for the CSI driver, or set the StorageProfile's spec.snapshotClass to one that exists; the clone populator retries by itself`,
		},
		"InTreePopulatorNeedsACSIClass": {
			reason: "datavolume/controller-base.go shouldUseCDIPopulator 1317-1338 picks the populator for a class without a CSIDriver only when the DataVolume asks for it.",
			state:  State{Kind: Permanent, Reason: ReasonError, Message: "can't use populator for PVC tenant-a/worker-disk with in-tree storage class kubernetes.io/no-provisioner"},
			want:   `Kubernetes volume populators need a CSI provisioner and the StorageClass's is in-tree: put the DataVolume on a CSI StorageClass, or remove its cdi.kubevirt.io/storage.usePopulator: "true" annotation, and create it again (its PVC's class and data source are immutable)`,
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

func TestSourceRefusal(t *testing.T) {
	cases := map[string]struct {
		reason string
		state  State
		want   string
	}{
		"NotFoundIsARefusal": {
			reason: "pkg/importer/http-datasource.go createHTTPReader 403-406: a 404 repeats on every attempt.",
			state:  State{Kind: Failing, Reason: ReasonError, Message: notFound404},
			want:   "404 Not Found",
		},
		"ServerErrorIsNot": {
			reason: "A 503 passes once the server recovers: the generic remedy is true for it.",
			state:  State{Kind: Failing, Reason: ReasonError, Message: "Unable to connect to http data source: expected status code 200, got 503. Status: 503 Service Unavailable"},
		},
		"RateLimitIsNot": {
			reason: "A 429 passes once the rate limit does.",
			state:  State{Kind: Failing, Reason: ReasonError, Message: "Unable to connect to http data source: expected status code 200, got 429. Status: 429 Too Many Requests"},
		},
		"OnlyAFailingImporter": {
			reason: "Below the restart threshold the state is Importing and needs no remedy yet.",
			state:  State{Kind: Importing, Reason: ReasonError, Message: notFound404},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.state.SourceRefusal()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRemembered(t *testing.T) {
	cases := map[string]struct {
		reason string
		dv     *cdiv1.DataVolume
		want   string
	}{
		"TooSmallIsRecorded": {
			reason: "util.go simplifyKnownMessage 406-415: the message CDI drops on the next restart.",
			dv:     dv(cdiv1.ImportInProgress, "N/A", 1, cond(running, isFalse, ReasonError, MessageTooSmall)),
			want:   MessageTooSmall,
		},
		"RecordIsKept": {
			reason: "While the importer runs again, the record itself keeps the state, so it is written again.",
			dv:     remembering(dv(cdiv1.ImportInProgress, "N/A", 1, cond(running, isTrue, "Pod is running", ""))),
			want:   MessageTooSmall,
		},
		"PopulatorErrorsNeedNoRecord": {
			reason: "clone-populator.go updateClonePhase 471-496 clears the error only when the populator moves on, so CDI keeps it itself.",
			dv:     dv(cdiv1.CloneScheduled, "N/A", 0, cond(running, isFalse, ReasonError, "unknown strategy/source csi-clon")),
		},
		"SucceededDropsTheRecord": {
			reason: "Nothing to remember once CDI succeeded.",
			dv:     remembering(dv(cdiv1.Succeeded, "100.0%", 1)),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Of(tc.dv, nil).Remembered()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
