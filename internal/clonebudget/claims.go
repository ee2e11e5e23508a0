package clonebudget

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// What CDI leaves of a clone in the golden's namespace (CDI v1.65.0).
//
// The clone populator plans every clone of a PVC or a snapshot through a
// temporary claim in the source's namespace, tmp-pvc-<target claim UID>, made
// of the target's labels, annotations and spec (pkg/controller/clone/
// planner.go createDesiredClaim); the phase that creates it labels it
// cdi.kubevirt.io/OwnedByUID=<target claim UID> (csi-clone.go, snap-clone.go,
// host-clone.go AddOwnershipLabel; populators/clone-populator.go
// LabelOwnedByUID). It is Pending until its volume is provisioned (on a
// WaitForFirstConsumer class, once CDI's prep pod is scheduled: prep-claim.go),
// Bound while the clone fills and expands it, and Lost once the last phase of
// every plan, RebindPhase (rebind.go, common/util.go Rebind), hands its
// volume to the target; the populator's cleanup (clone-populator.go
// reconcileDone, planner.go Cleanup) then deletes it by its OwnedByUID label.
// Lost is so a normal state for a moment, and a claim that stays Pending or
// Lost is one no clone runs through any more: CDI #2323 (Pending, never
// bound), #3470 (Lost beside a DataVolume stuck in CSICloneInProgress),
// cozystack #2908 (a WaitForFirstConsumer tmp-pvc Pending for hours).
//
// Whether the target still exists would settle it, but the target lives in
// another tenant's namespace, which a pool never reads; OwnedByUID and the
// name give only its UID. So the claim's own record decides:
//
//   - Pending is timed from metadata.creationTimestamp: a claim is Pending
//     from its creation until it binds.
//   - Lost is timed from metadata.creationTimestamp too. Kubernetes records
//     no time a claim's phase changed (PersistentVolumeClaimStatus has no
//     lastPhaseTransitionTime, only a PersistentVolume has, and that volume
//     is the target's after the rebind). A claim turns Lost only after its
//     copy and expansion, so one whose clone ran longer than the bound stops
//     being counted when nothing runs through it any more.
//   - Terminating is timed from metadata.deletionTimestamp, when its
//     deletion was asked; it is never counted (the cleanup deleted it, its
//     clone is over), and named once it stays past the bound: a finalizer
//     holds it, usually kubernetes.io/pvc-protection for a pod still
//     mounting it (cozystack #2908's prep pod).
//
// Host-assisted copies on the legacy path (a class whose provisioner has no
// CSIDriver object, or usePopulator "false": datavolume/controller-base.go
// shouldUseCDIPopulator) make no claim in the golden's namespace: the target
// claim carries k8s.io/CloneRequest and CDI runs a source pod,
// <target claim UID>-source-pod, beside the golden (clone-controller.go
// CreateCloneSourcePod, MakeCloneSourcePodSpec). That pod is labelled with the
// golden claim's UID (cdi.kubevirt.io/hostAssistedSourcePodCloneSource) but
// carries neither the target's labels nor its class, which only the target
// claim in the other tenant's namespace holds, so no pool can tell which
// class's budget it takes; reading it would also have Crossplane cache every
// Pod of the cluster (docs/performance.md). They are not counted; the clone
// pre-flight holds a pool's own such copies unless
// clonePreflight.allowHostAssistedCopy.

// Claims are CDI's claims of other pools' clones of one golden onto one
// class, sorted into those a clone runs through and those CDI left behind.
type Claims struct {
	// Live are counted in flight (InFlight.Others), by name.
	Live []string
	// Leaked stayed Pending or Lost past the bound, by name: no clone runs
	// through them, and deleting them is the fix.
	Leaked []string
	// Stuck stayed terminating past the bound, by name: a finalizer holds
	// them.
	Stuck []string
}

// CountClaims sorts the claims on class (every class when it is unknown, the
// budget erring on the safe side) at now. A claim is counted unless it is
// terminating, or it has stayed Pending or Lost longer than leakedAfter since
// its creation; a terminating claim is named Stuck once it stays so longer
// than leakedAfter since its deletion. Without a time (the zero now or
// creationTimestamp), or without a bound (leakedAfter 0), every claim that
// is not terminating is counted, as before the bound existed.
func CountClaims(claims []corev1.PersistentVolumeClaim, class string, now time.Time, leakedAfter time.Duration) Claims {
	past := func(since time.Time) bool {
		return leakedAfter > 0 && !now.IsZero() && !since.IsZero() && now.Sub(since) > leakedAfter
	}
	var c Claims
	for _, pvc := range claims {
		if class != "" && (pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName != class) {
			continue
		}
		switch {
		case pvc.DeletionTimestamp != nil:
			if past(pvc.DeletionTimestamp.Time) {
				c.Stuck = append(c.Stuck, pvc.Name)
			}
		case pvc.Status.Phase != corev1.ClaimBound && past(pvc.CreationTimestamp.Time):
			c.Leaked = append(c.Leaked, pvc.Name)
		default:
			c.Live = append(c.Live, pvc.Name)
		}
	}
	slices.Sort(c.Live)
	slices.Sort(c.Leaked)
	slices.Sort(c.Stuck)
	return c
}
