// Package cdistate classifies a CDI DataVolume, and for a golden image its
// PVC, into the one state every decision in the function reads: ready to
// clone, still working, stuck in a loop, or stuck for good.
//
// The phase alone is not enough: several CDI dead ends leave it empty or in
// progress and show only in a Bound, Ready or Running reason
// (ErrClaimNotValid, CloneValidationFailed, CloneWithoutSource). Each rule
// cites the CDI file and function it reads, in CDI v1.64.0-v1.66.0 (the same
// unless a rule says otherwise); docs/cdi-behaviour.md has the line ranges at
// v1.65.0.
package cdistate

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/internal/labels"
)

// Kind is the class of a state.
type Kind string

// The kinds, from "nothing there" to "done".
const (
	// Missing: neither a DataVolume nor a PVC exists, or only a PVC whose
	// owning DataVolume is gone.
	Missing Kind = "Missing"
	// Pending: CDI has not started the transfer (no PVC, unbound, quota,
	// first consumer); it resolves by itself.
	Pending Kind = "Pending"
	// Importing: CDI is transferring data (an import or a clone).
	Importing Kind = "Importing"
	// Failing: the worker pod keeps failing (error exit, image pull). CDI
	// retries forever with the phase in progress; some causes
	// (State.SourceRefusal) never clear without a change.
	Failing Kind = "Failing"
	// Failed: phase Failed. CDI stopped: a fatal import error (checksum
	// mismatch, v1.65+) or a lost claim.
	Failed Kind = "Failed"
	// Permanent: stuck until the DataVolume, its StorageClass or its
	// StorageProfile changes, though the phase is not Failed.
	Permanent Kind = "Permanent"
	// WaitingForSource: a clone whose source does not exist; CDI waits forever.
	WaitingForSource Kind = "WaitingForSource"
	// Succeeded: phase Succeeded, or a PVC no DataVolume owns.
	Succeeded Kind = "Succeeded"
)

// Condition reasons CDI writes on a DataVolume.
const (
	// ReasonErrClaimNotValid: CDI cannot build the PVC spec (no default class
	// it reads, incomplete StorageProfile, invalid size); phase empty.
	ReasonErrClaimNotValid = "ErrClaimNotValid"
	// ReasonCloneValidationFailed: the clone does not fit its source
	// (content type, size); phase unchanged.
	ReasonCloneValidationFailed = "CloneValidationFailed"
	// ReasonCloneWithoutSource: the clone's source does not exist; phase
	// unchanged.
	ReasonCloneWithoutSource = "CloneWithoutSource"
	// ReasonErrExceededQuota: creating the PVC hit a ResourceQuota; the
	// phase stays Pending.
	ReasonErrExceededQuota = "ErrExceededQuota"
	// ReasonClaimLost: the PVC lost its volume; the phase is Failed.
	ReasonClaimLost = "ClaimLost"
	// ReasonNotFound: Bound=False because no PVC exists yet.
	ReasonNotFound = "NotFound"
	// ReasonChecksumError: Running=False after the importer found a
	// checksum mismatch (v1.65+); the phase is Failed.
	ReasonChecksumError = "ChecksumError"
	// ReasonImagePullFailed: Running=False, a worker image cannot be pulled.
	ReasonImagePullFailed = "ImagePullFailed"
	// ReasonError: Running=False after a worker container exited with an
	// error, or a clone populator error.
	ReasonError = "Error"
	// ReasonUnschedulable: Running=False, the worker pod cannot be scheduled.
	ReasonUnschedulable = "Unschedulable"
)

// Reasons this package gives where CDI has no condition to quote.
const (
	// ReasonPVCWithoutDataVolume: a PVC no DataVolume owns, which CDI clones.
	ReasonPVCWithoutDataVolume = "PVCWithoutDataVolume"
	// ReasonOwningDataVolumeMissing: a PVC whose owning DataVolume is gone;
	// CDI cannot look the owner up, so it never counts the PVC as populated.
	ReasonOwningDataVolumeMissing = "OwningDataVolumeMissing"
)

// Messages CDI writes that classify a state on their own, because the reason
// that carries them ("Error", ErrClaimNotValid) also carries transient ones.
const (
	// MessageStorageClassNotFound: the DataVolume names no class, CDI finds
	// no default it reads, and the spec has no accessModes.
	MessageStorageClassNotFound = "PVC spec is missing accessMode and no storageClass to choose profile"
	// MessageTooSmall is CDI's rewording of "no space left on device" and
	// friends from the importer: the image does not fit the volume.
	MessageTooSmall = "DataVolume too small to contain image"
	// MessageTargetClassNotFound: the clone planner found no StorageClass
	// for the target PVC (clone/planner.go validateTargetStorageClassAssignment,
	// validateAdvancedClonePVC).
	MessageTargetClassNotFound = "target storage class not found"
)

// RestartLoopThreshold is the worker restart count from which Running=False
// with reason Error counts as Failing rather than Importing. CDI restarts the
// importer with the kubelet's back-off and never fails the DataVolume for it,
// so an unreachable URL looks like an import forever; one or two restarts are
// a blip, three are over a minute of failures. The count is CDI's monotonic
// maximum (setAnnotationsFromPodWithPrefix), so only reason Error (a
// container that exited non-zero, kept through CrashLoopBackOff) says the
// worker is failing now.
const RestartLoopThreshold = 3

// State is what CDI says about one DataVolume (and, for a golden, its PVC).
type State struct {
	Kind Kind
	// Phase is the DataVolume's phase, empty before CDI set one.
	Phase cdiv1.DataVolumePhase
	// Progress is CDI's percentage ("45.53%"), empty for "N/A".
	Progress string
	// Reason and Message quote the CDI condition that decided Kind, or one of
	// this package's Reason* constants when no condition did.
	Reason  string
	Message string
	// Restarts is the worker pod restart count CDI copied onto the DataVolume.
	Restarts int32
	// Awaits is, for a Pending state that clears once an object appears, a
	// clause saying what CDI waits for ("CDI waits for StorageClass ...").
	Awaits string
}

// Ready reports whether CDI would clone from it now: a Succeeded DataVolume,
// or a PVC no DataVolume owns.
func (s State) Ready() bool { return s.Kind == Succeeded }

// Permanent reports whether CDI is stuck until someone changes something.
func (s State) Permanent() bool { return s.Kind == Permanent }

// InProgress reports whether CDI is working on it and it should finish by
// itself: worth polling faster.
func (s State) InProgress() bool { return s.Kind == Pending || s.Kind == Importing }

// NeedsAction reports whether a person should look at it: a restart loop, a
// Failed phase or a permanent error.
func (s State) NeedsAction() bool {
	return s.Kind == Failing || s.Kind == Failed || s.Kind == Permanent
}

// PhaseText is the phase for messages, "<none>" when CDI set none.
func (s State) PhaseText() string {
	if s.Phase == cdiv1.PhaseUnset {
		return "<none>"
	}
	return string(s.Phase)
}

// Of classifies a DataVolume and its PVC, either nil; the PVC matters only
// without the DataVolume.
func Of(dv *cdiv1.DataVolume, pvc *corev1.PersistentVolumeClaim) State {
	if dv == nil {
		return ofClaim(pvc)
	}
	s := State{Phase: dv.Status.Phase, Progress: progressOf(dv.Status.Progress), Restarts: dv.Status.RestartCount}
	bound := find(dv, cdiv1.DataVolumeBound)
	ready := find(dv, cdiv1.DataVolumeReady)
	running := find(dv, cdiv1.DataVolumeRunning)
	notRunning := running != nil && running.Status == corev1.ConditionFalse

	switch dv.Status.Phase {
	case cdiv1.Succeeded:
		// controller-base.go updateStatus.
		return s.with(Succeeded, ready)
	case cdiv1.Failed:
		// import-controller.go updateStatusPhase (v1.65+: Running reason
		// ChecksumError) or controller-base.go updateStatus (ClaimLost).
		if notRunning && running.Reason != "" {
			return s.with(Failed, running)
		}
		return s.with(Failed, bound)
	}

	// While a restarted importer runs, CDI reports Running=True and drops the
	// too-small message (setAnnotationsFromPodWithPrefix); the golden's
	// remembered annotation keeps the state Permanent instead of flapping.
	if dv.Annotations[labels.AnnImportPermanentError] == MessageTooSmall {
		s.Kind, s.Reason, s.Message = Permanent, ReasonError, MessageTooSmall
		return s
	}

	// Reasons CDI sets on Bound and Ready, phase unchanged
	// (controller-base.go updateDataVolumeStatusPhaseWithEvent).
	if c := withReason(ReasonErrClaimNotValid, bound, ready); c != nil {
		if claimErrorIsTransient(c.Message) {
			return s.with(Pending, c)
		}
		if class := namedStorageClass(dv); c.Message == MessageStorageClassNotFound && class != "" {
			// datavolume/util.go looks a missing named class up as nil (the
			// no-default message); the StorageClass watch (controller-base.go
			// addDataVolumeControllerCommonWatches) re-reconciles once it exists.
			s = s.with(Pending, c)
			s.Awaits = fmt.Sprintf("CDI waits for StorageClass %q, named in spec.storage.storageClassName, to exist and creates the PVC by itself once it does", class)
			return s
		}
		return s.with(Permanent, c)
	}
	if c := withReason(ReasonCloneValidationFailed, bound, ready); c != nil {
		return s.with(Permanent, c)
	}
	if c := withReason(ReasonCloneWithoutSource, bound, ready); c != nil {
		return s.with(WaitingForSource, c)
	}

	if notRunning {
		if permanentRunningMessage(running.Message) {
			return s.with(Permanent, running)
		}
		if class, ok := populatorClassMissing(running.Message, dv); ok {
			// The populator's error is retried with back-off
			// (clone-populator.go reconcilePending).
			s = s.with(Pending, running)
			s.Awaits = "CDI waits for the target PVC's StorageClass to exist and its clone populator retries with back-off, continuing by itself once it does"
			if class != "" {
				s.Awaits = fmt.Sprintf("CDI waits for StorageClass %q, which the target PVC names, to exist and its clone populator retries with back-off, continuing by itself once it does", class)
			}
			return s
		}
		// A container the kubelet cannot create for want of a Secret (the
		// import's credentials, cause.go) waits until someone creates it.
		if running.Reason == ReasonImagePullFailed || running.Reason == ReasonCreateContainerConfigError || (running.Reason == ReasonError && dv.Status.RestartCount >= RestartLoopThreshold) {
			return s.with(Failing, running)
		}
	}

	switch dv.Status.Phase {
	case cdiv1.PhaseUnset, cdiv1.Pending, cdiv1.WaitForFirstConsumer, cdiv1.PendingPopulation, cdiv1.Unknown:
		return s.with(Pending, informative(bound, running))
	}
	return s.with(Importing, informative(running, bound))
}

// Remembered is the labels.AnnImportPermanentError a golden in this state
// carries, empty for none: the permanent error CDI clears on each restart.
func (s State) Remembered() string {
	if s.Kind == Permanent && s.Message == MessageTooSmall {
		return MessageTooSmall
	}
	return ""
}

// namedStorageClass is the class spec.storage names: only spec.storage is
// rendered against a class (datavolume/util.go pvcFromStorage); spec.pvc is
// copied as is.
func namedStorageClass(dv *cdiv1.DataVolume) string {
	if dv.Spec.Storage == nil || dv.Spec.Storage.StorageClassName == nil {
		return ""
	}
	return *dv.Spec.Storage.StorageClassName
}

// populatorClassMissing recognises the clone populator's errors for a missing
// target StorageClass (populators/util.go claimReadyForPopulation, or the
// planner's MessageTargetClassNotFound) and returns the class when known.
func populatorClassMissing(msg string, dv *cdiv1.DataVolume) (string, bool) {
	if msg == MessageTargetClassNotFound {
		return namedStorageClass(dv), true
	}
	if name, ok := strings.CutPrefix(msg, "storage class "); ok {
		if name, ok := strings.CutSuffix(name, " not found"); ok && name != "" {
			return name, true
		}
	}
	return "", false
}

// ofClaim classifies a PVC seen without its DataVolume. CDI's IsPopulated
// (containerized-data-importer-api utils.go) treats a PVC as populated unless
// its controller is a DataVolume, in which case it looks that DataVolume up
// and requires Succeeded; a lookup that fails leaves the clone waiting.
func ofClaim(pvc *corev1.PersistentVolumeClaim) State {
	if pvc == nil {
		return State{Kind: Missing}
	}
	if owner := metav1.GetControllerOf(pvc); owner != nil && owner.Kind == "DataVolume" {
		return State{Kind: Missing, Reason: ReasonOwningDataVolumeMissing, Message: fmt.Sprintf(
			"PVC %s/%s is owned by DataVolume %s, which does not exist; CDI never counts such a PVC as populated", pvc.Namespace, pvc.Name, owner.Name)}
	}
	return State{Kind: Succeeded, Reason: ReasonPVCWithoutDataVolume, Message: fmt.Sprintf(
		"PVC %s/%s is owned by no DataVolume; CDI treats it as populated", pvc.Namespace, pvc.Name)}
}

// claimErrorIsTransient picks out the ErrClaimNotValid messages that clear by
// themselves: a StorageProfile CDI has yet to create for a new class (the
// watch in controller-base.go addDataVolumeControllerCommonWatches
// re-reconciles) and API read errors, retried with back-off.
func claimErrorIsTransient(msg string) bool {
	return strings.Contains(msg, "cannot get StorageProfile") || strings.HasPrefix(msg, "unable to retrieve storage class")
}

// permanentRunningPrefixes are Running=False messages that never clear
// without a change: the importer's (pkg/controller/util.go
// simplifyKnownMessage) and clone populator errors, which CDI writes as reason
// Error while the phase stays (clone-populator.go updateClonePhaseError;
// clone-controller-base.go updateStatusPhaseForPopulator never sets Failed).
var permanentRunningPrefixes = []string{
	// A DataVolume's size is immutable.
	MessageTooSmall,
	// clone/planner.go validateSourcePVC via common/util.go
	// ValidateRequestedCloneSize: the target is smaller than the source.
	"target resources requests storage size is smaller than the source",
	"source/target missing storage resource requests",
	// populators/clone-populator.go validateCrossNamespace.
	"cross-namespace with resource grants is not supported yet",
	// clone/planner.go Plan: the strategy saved in the target PVC's
	// cdi.kubevirt.io/cloneType, which getCloneStrategy rereads, cannot be planned.
	prefixUnknownStrategy,
	// populators/util.go claimReadyForPopulation, checkIntreeStorageClass:
	// an in-tree provisioner without CSI migration.
	prefixInTreePopulator,
}

const (
	prefixUnknownStrategy = "unknown strategy/source "
	prefixInTreePopulator = "can't use populator for PVC "
	// The cached client's NotFound for a VolumeSnapshotClass
	// (controller-runtime cache_reader.go: the resource is the Kind).
	prefixSnapshotClassNotFound = `VolumeSnapshotClass.snapshot.storage.k8s.io "`
)

func permanentRunningMessage(msg string) bool {
	for _, p := range permanentRunningPrefixes {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	// clone/common.go getCommonSnapshotClass fetches the StorageProfiles'
	// status.snapshotClass, which CDI never clears when the class goes
	// (storageprofile-controller.go reconcileStorageProfile).
	if snapshotClassMissing(msg) != "" {
		return true
	}
	// populators/util.go claimReadyForPopulation: the target PVC names the
	// empty class, which a PVC's immutable spec keeps.
	return strings.HasPrefix(msg, "PVC ") && strings.HasSuffix(msg, " has empty storage class name")
}

func snapshotClassMissing(msg string) string {
	if name, ok := strings.CutPrefix(msg, prefixSnapshotClassNotFound); ok {
		if name, ok := strings.CutSuffix(name, `" not found`); ok {
			return name
		}
	}
	return ""
}

// refusedStatus matches the importer's error for an HTTP source that did not
// answer 200 (pkg/importer/http-datasource.go createHTTPReader, written by
// cmd/cdi-importer errorCannotConnectDataSource).
var refusedStatus = regexp.MustCompile(`expected status code 200, got (\d{3})\. Status: (.+)$`)

// SourceRefusal is the HTTP status ("404 Not Found") when the worker keeps
// failing because the import source answers with a client error, empty
// otherwise: CDI restarts the importer forever, but a wrong URL never clears.
// Timeouts (408) and rate limits (429) pass, so they are left out.
func (s State) SourceRefusal() string {
	if s.Kind != Failing || s.Reason != ReasonError {
		return ""
	}
	m := refusedStatus.FindStringSubmatch(s.Message)
	if m == nil {
		return ""
	}
	code, err := strconv.Atoi(m[1])
	if err != nil || code < 400 || code > 499 || code == 408 || code == 429 {
		return ""
	}
	return m[2]
}

// Remedy is CDI's side of the fix for a state that needs action, in one
// clause a caller can put after its own context; empty otherwise.
func (s State) Remedy() string {
	switch {
	case s.Kind == Failing && s.Reason == ReasonImagePullFailed:
		return "a CDI worker pod image cannot be pulled: check the CDI installation's image registry and pull secrets"
	case s.Kind == Failing && s.SourceRefusal() != "":
		return fmt.Sprintf("the import source answers HTTP %s: CDI restarts the importer forever, but every attempt gets the same answer until the server serves the image at that URL; correct the URL (a DataVolume's source is immutable: delete the DataVolume and create it with the right URL)", s.SourceRefusal())
	case s.Kind == Failing:
		return "the CDI worker pod keeps failing: check its logs (an unreachable source URL is the usual cause); CDI retries by itself and the state clears once an attempt succeeds"
	case s.Kind == Failed && s.Reason == ReasonChecksumError:
		return "the downloaded image does not match its checksum: fix the source or the checksum, then delete the DataVolume so it is created again"
	case s.Kind == Failed && s.Reason == ReasonClaimLost:
		return "its PVC lost its volume: delete the DataVolume so it is created again"
	case s.Kind == Failed:
		return "CDI gave up: check the worker pod events, then delete the DataVolume so it is created again"
	case s.Kind != Permanent:
		return ""
	case s.Message == MessageStorageClassNotFound:
		return "name a StorageClass, or mark one as default with an annotation CDI reads (storageclass.kubernetes.io/is-default-class or storageclass.kubevirt.io/is-default-virt-class; CDI ignores the beta annotation); CDI retries by itself once a StorageClass changes"
	case strings.HasPrefix(s.Message, "no accessMode specified"), strings.HasPrefix(s.Message, "no matching accessMode specified"):
		return "the StorageClass's StorageProfile has no usable claimPropertySets: set spec.claimPropertySets (accessModes and volumeMode) on the StorageProfile, or use a class CDI knows; CDI retries by itself once the StorageProfile changes"
	case s.Message == MessageTooSmall:
		return "the image does not fit the volume: delete the DataVolume and create it again with a larger size (a DataVolume's size is immutable)"
	case s.Reason == ReasonCloneValidationFailed, strings.HasPrefix(s.Message, "target resources requests storage size is smaller than the source"):
		return "the clone does not fit its source: make the target at least as large as the source and of the same content type, then create the DataVolume again"
	case strings.HasPrefix(s.Message, prefixUnknownStrategy):
		strategy := strings.TrimPrefix(s.Message, prefixUnknownStrategy)
		return fmt.Sprintf("CDI saved clone strategy %q in the target PVC's cdi.kubevirt.io/cloneType and cannot plan it (it knows copy, snapshot and csi-clone from a PVC, copy and snapshot from a snapshot) and never chooses again: correct where %q came from (the StorageProfile's spec.cloneStrategy, or a cdi.kubevirt.io/cloneType annotation on the DataVolume), then delete the DataVolume so it is created again", strategy, strategy)
	case snapshotClassMissing(s.Message) != "":
		vsc := snapshotClassMissing(s.Message)
		return fmt.Sprintf("the StorageProfiles of the clone's StorageClasses name VolumeSnapshotClass %q in status.snapshotClass, which does not exist (CDI keeps the name after the class is deleted): create VolumeSnapshotClass %q for the CSI driver, or set the StorageProfile's spec.snapshotClass to one that exists; the clone populator retries by itself", vsc, vsc)
	case strings.HasPrefix(s.Message, prefixInTreePopulator):
		return "Kubernetes volume populators need a CSI provisioner and the StorageClass's is in-tree: put the DataVolume on a CSI StorageClass, or remove its cdi.kubevirt.io/storage.usePopulator: \"true\" annotation, and create it again (its PVC's class and data source are immutable)"
	case s.Reason == ReasonErrClaimNotValid:
		return "CDI cannot build the PVC from the DataVolume's spec: correct the spec (size, class, volume mode) and create the DataVolume again"
	}
	return "correct the StorageClass or the DataVolume named in the message and create the DataVolume again"
}

func (s State) with(k Kind, c *cdiv1.DataVolumeCondition) State {
	s.Kind = k
	if c != nil {
		s.Reason, s.Message = c.Reason, c.Message
	}
	return s
}

func find(dv *cdiv1.DataVolume, t cdiv1.DataVolumeConditionType) *cdiv1.DataVolumeCondition {
	for i := range dv.Status.Conditions {
		if dv.Status.Conditions[i].Type == t {
			return &dv.Status.Conditions[i]
		}
	}
	return nil
}

// withReason returns the first condition carrying reason.
func withReason(reason string, conds ...*cdiv1.DataVolumeCondition) *cdiv1.DataVolumeCondition {
	for _, c := range conds {
		if c != nil && c.Reason == reason {
			return c
		}
	}
	return nil
}

// informative returns the first condition with a reason, for the message.
func informative(conds ...*cdiv1.DataVolumeCondition) *cdiv1.DataVolumeCondition {
	for _, c := range conds {
		if c != nil && c.Reason != "" {
			return c
		}
	}
	return nil
}

func progressOf(p cdiv1.DataVolumeProgress) string {
	if p == "N/A" {
		return ""
	}
	return string(p)
}
