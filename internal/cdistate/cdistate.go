// Package cdistate classifies a CDI DataVolume, and for a golden image its
// PVC, into the one state every decision in the function reads: is it ready
// to clone, still working, stuck in a loop, or stuck for good.
//
// CDI reports state in two places that mean different things. The phase says
// how far the operation got; the reasons and messages of the Bound, Ready and
// Running conditions say why it is not moving. Several of CDI's dead ends
// leave the phase empty or "in progress" and only show in a reason
// (ErrClaimNotValid, CloneValidationFailed, CloneWithoutSource), so reading
// the phase alone reports them as "importing" forever. Every rule below names
// the CDI file and function that produces the state it recognises, as read in
// CDI v1.64.0, v1.65.0 and v1.66.0 (identical for what is read here unless a
// rule says otherwise); docs/cdi-behaviour.md has the line ranges.
package cdistate

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
)

// Kind is the class of a state.
type Kind string

// The kinds, from "nothing there" to "done".
const (
	// Missing: neither a DataVolume nor a PVC exists, or only a PVC whose
	// owning DataVolume is gone.
	Missing Kind = "Missing"
	// Pending: CDI has not started the transfer (no PVC yet, PVC not bound,
	// quota, waiting for a consumer). It resolves by itself.
	Pending Kind = "Pending"
	// Importing: CDI is transferring data (an import or a clone), possibly
	// after a few restarts. Progress carries the percentage when CDI knows it.
	Importing Kind = "Importing"
	// Failing: the worker pod keeps failing (restart loop, or its image
	// cannot be pulled). CDI retries forever and the phase stays in
	// progress; it resolves once an attempt succeeds.
	Failing Kind = "Failing"
	// Failed: phase Failed. CDI stopped: a fatal import error (checksum
	// mismatch, v1.65+) or a lost claim.
	Failed Kind = "Failed"
	// Permanent: CDI is stuck on something that never resolves without a
	// change to the DataVolume, its StorageClass or StorageProfile, though
	// the phase does not say Failed.
	Permanent Kind = "Permanent"
	// WaitingForSource: a clone whose source does not exist. CDI waits for
	// it forever without failing.
	WaitingForSource Kind = "WaitingForSource"
	// Succeeded: phase Succeeded, or a PVC no DataVolume owns.
	Succeeded Kind = "Succeeded"
)

// Condition reasons CDI writes on a DataVolume.
const (
	// ReasonErrClaimNotValid: CDI cannot build the PVC spec (no StorageClass
	// it recognises as default, an incomplete StorageProfile, an invalid
	// size). Set on Bound and Ready with an empty phase.
	ReasonErrClaimNotValid = "ErrClaimNotValid"
	// ReasonCloneValidationFailed: the clone does not fit its source
	// (content type, size). Set on Bound and Ready, phase unchanged.
	ReasonCloneValidationFailed = "CloneValidationFailed"
	// ReasonCloneWithoutSource: the clone's source PVC or snapshot does not
	// exist. Set on Bound and Ready, phase unchanged.
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
	// ReasonImagePullFailed: Running=False because a CDI worker pod image
	// cannot be pulled.
	ReasonImagePullFailed = "ImagePullFailed"
	// ReasonError: Running=False after a worker container exited with an
	// error, or a clone populator error.
	ReasonError = "Error"
	// ReasonUnschedulable: Running=False, the worker pod cannot be scheduled.
	ReasonUnschedulable = "Unschedulable"
)

// Reasons this package gives where CDI has no condition to quote.
const (
	// ReasonPVCWithoutDataVolume: a PVC that no DataVolume owns. CDI treats
	// it as populated and clones it.
	ReasonPVCWithoutDataVolume = "PVCWithoutDataVolume"
	// ReasonOwningDataVolumeMissing: a PVC owned by a DataVolume that does
	// not exist (it is being garbage-collected). CDI cannot look its owner
	// up, so it never counts the PVC as populated.
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
)

// RestartLoopThreshold is the worker pod restart count from which a
// DataVolume whose Running condition is False counts as Failing rather than
// Importing. CDI restarts the importer (restartPolicy OnFailure) with the
// kubelet's back-off of 10 s, 20 s, 40 s... and never fails the DataVolume
// for it (only a fatal error such as a checksum mismatch does), so an
// unreachable URL looks like an import in progress forever. One or two
// restarts are a blip (a network hiccup, a node drain); three in a row with
// the pod not running are more than a minute of consecutive failures. The
// Running=False requirement keeps an import that recovered after restarts
// Importing. Both earlier classifiers of this function used 3.
const RestartLoopThreshold = 3

// State is what CDI says about one DataVolume (and, for a golden, its PVC).
type State struct {
	Kind Kind
	// Phase is the DataVolume's phase, empty without a DataVolume or before
	// CDI set one.
	Phase cdiv1.DataVolumePhase
	// Progress is CDI's percentage ("45.53%"), empty when CDI reports none
	// ("N/A").
	Progress string
	// Reason and Message quote the CDI condition that decided Kind, or one of
	// this package's Reason* constants when no condition did.
	Reason  string
	Message string
	// Restarts is the worker pod restart count CDI copied onto the DataVolume.
	Restarts int32
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

// Of classifies a DataVolume and its PVC. Either may be nil. The DataVolume
// decides when there is one; the PVC matters only without it.
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
		// controller-base.go updateStatus: the worker pod succeeded, or the
		// PVC needed no work.
		return s.with(Succeeded, ready)
	case cdiv1.Failed:
		// import-controller.go updateStatusPhase (fatal import error, v1.65+:
		// Running reason ChecksumError) and controller-base.go updateStatus
		// (ClaimLost). Quote whichever condition says why.
		if notRunning && running.Reason != "" {
			return s.with(Failed, running)
		}
		return s.with(Failed, bound)
	}

	// Reasons CDI sets on Bound and Ready while leaving the phase as it was
	// (controller-base.go updateDataVolumeStatusPhaseWithEvent copies the
	// event's reason and message onto both when there is no PVC).
	if c := withReason(ReasonErrClaimNotValid, bound, ready); c != nil {
		if claimErrorIsTransient(c.Message) {
			return s.with(Pending, c)
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
		if dv.Status.RestartCount >= RestartLoopThreshold || running.Reason == ReasonImagePullFailed {
			return s.with(Failing, running)
		}
	}

	switch dv.Status.Phase {
	case cdiv1.PhaseUnset, cdiv1.Pending, cdiv1.WaitForFirstConsumer, cdiv1.PendingPopulation, cdiv1.Unknown:
		return s.with(Pending, informative(bound, running))
	}
	return s.with(Importing, informative(running, bound))
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
// themselves. CDI's StorageProfile controller creates a profile for every
// StorageClass shortly after the class appears, and the DataVolume controller
// re-reconciles every DataVolume with an empty phase when a StorageClass or
// StorageProfile changes (controller-base.go addDataVolumeControllerCommonWatches);
// an API read error is retried with back-off. Every other ErrClaimNotValid
// (no default class, a profile without claimPropertySets, a size below 1MiB)
// needs someone to change the class, the profile or the DataVolume.
func claimErrorIsTransient(msg string) bool {
	return strings.Contains(msg, "cannot get StorageProfile") || strings.HasPrefix(msg, "unable to retrieve storage class")
}

// permanentRunningPrefixes are Running=False messages that never clear
// without a change. The first comes from the importer (pkg/controller/util.go
// simplifyKnownMessage); the others are clone populator errors, which CDI
// writes as Running=False, reason Error, with the error as the message
// (populators/clone-populator.go updateClonePhaseError, addRunningAnnotations),
// while the DataVolume's phase stays where it was (clone-controller-base.go
// updateStatusPhaseForPopulator never applies Failed).
var permanentRunningPrefixes = []string{
	// The image is larger than the volume; the importer fails the same way on
	// every restart and a DataVolume's size is immutable.
	MessageTooSmall,
	// clone/planner.go validateSourcePVC via common/util.go
	// ValidateRequestedCloneSize: the target is smaller than the source.
	"target resources requests storage size is smaller than the source",
	"source/target missing storage resource requests",
	// clone/planner.go validateTargetStorageClassAssignment.
	"claim has emptystring storageclass, will not work",
	"target storage class not found",
	// populators/clone-populator.go validateCrossNamespace.
	"cross-namespace with resource grants is not supported yet",
}

func permanentRunningMessage(msg string) bool {
	for _, p := range permanentRunningPrefixes {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	// populators/util.go claimReadyForPopulation: the target PVC names a
	// class that does not exist, or an empty one.
	if strings.HasPrefix(msg, "storage class ") && strings.HasSuffix(msg, " not found") {
		return true
	}
	return strings.HasPrefix(msg, "PVC ") && strings.HasSuffix(msg, " has empty storage class name")
}

// Remedy is CDI's side of the fix for a state that needs action, in one
// clause a caller can put after its own context; empty otherwise.
func (s State) Remedy() string {
	switch {
	case s.Kind == Failing && s.Reason == ReasonImagePullFailed:
		return "a CDI worker pod image cannot be pulled: check the CDI installation's image registry and pull secrets"
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

// withReason returns the first condition carrying reason. CDI writes the
// same reason on Bound and Ready; either is enough.
func withReason(reason string, conds ...*cdiv1.DataVolumeCondition) *cdiv1.DataVolumeCondition {
	for _, c := range conds {
		if c != nil && c.Reason == reason {
			return c
		}
	}
	return nil
}

// informative returns the first condition with a reason, so that a pending
// or importing state quotes what CDI says it is doing.
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
