package clonebudget

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// now is when the tests decide; ago is a time before it.
var now = time.Date(2026, time.January, 1, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) time.Time { return now.Add(-d) }

// tmpClaim is a claim CDI runs a clone through, on class, in phase, made
// at created (zero: not said); deleted, when not zero, is its deletion.
func tmpClaim(name, class string, phase corev1.PersistentVolumeClaimPhase, created, deleted time.Time) corev1.PersistentVolumeClaim {
	pvc := corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "cozy-public", CreationTimestamp: metav1.NewTime(created)},
		Spec:       corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(class)},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: phase},
	}
	if !deleted.IsZero() {
		pvc.DeletionTimestamp = ptr.To(metav1.NewTime(deleted))
	}
	return pvc
}

func TestCountClaims(t *testing.T) {
	bound := 10 * time.Minute
	var never time.Time
	cases := map[string]struct {
		reason string
		claims []corev1.PersistentVolumeClaim
		class  string
		now    time.Time
		want   Claims
	}{
		"BoundClaimCountsWhateverItsAge": {
			reason: "A bound claim holds a volume a clone fills or expands: it runs, however long.",
			claims: []corev1.PersistentVolumeClaim{tmpClaim("tmp-pvc-a", "replicated", corev1.ClaimBound, ago(3*time.Hour), never)},
			class:  "replicated", now: now,
			want: Claims{Live: []string{"tmp-pvc-a"}},
		},
		"FreshPendingAndLostCount": {
			reason: "Pending until provisioned and Lost between the rebind and the cleanup are a running clone's, for a moment.",
			claims: []corev1.PersistentVolumeClaim{
				tmpClaim("tmp-pvc-b", "replicated", corev1.ClaimPending, ago(2*time.Minute), never),
				tmpClaim("tmp-pvc-a", "replicated", corev1.ClaimLost, ago(9*time.Minute), never),
			},
			class: "replicated", now: now,
			want: Claims{Live: []string{"tmp-pvc-a", "tmp-pvc-b"}},
		},
		"PendingPastTheBoundLeaked": {
			reason: "A claim Pending longer than the bound since its creation never bound: CDI #2323, cozystack #2908.",
			claims: []corev1.PersistentVolumeClaim{tmpClaim("tmp-pvc-a", "replicated", corev1.ClaimPending, ago(11*time.Minute), never)},
			class:  "replicated", now: now,
			want: Claims{Leaked: []string{"tmp-pvc-a"}},
		},
		"NoPhaseYetIsPending": {
			reason: "A claim whose status the controller has not written yet is Pending, and timed as one.",
			claims: []corev1.PersistentVolumeClaim{
				tmpClaim("tmp-pvc-a", "replicated", "", ago(time.Minute), never),
				tmpClaim("tmp-pvc-b", "replicated", "", ago(time.Hour), never),
			},
			class: "replicated", now: now,
			want: Claims{Live: []string{"tmp-pvc-a"}, Leaked: []string{"tmp-pvc-b"}},
		},
		"LostPastTheBoundLeaked": {
			reason: "A claim Lost and older than the bound: the rebind handed its volume over and nothing cleaned it up (CDI #3470).",
			claims: []corev1.PersistentVolumeClaim{tmpClaim("tmp-pvc-a", "replicated", corev1.ClaimLost, ago(10*time.Minute+time.Second), never)},
			class:  "replicated", now: now,
			want: Claims{Leaked: []string{"tmp-pvc-a"}},
		},
		"ExactlyTheBoundStillCounts": {
			reason: "Past the bound means longer than it.",
			claims: []corev1.PersistentVolumeClaim{tmpClaim("tmp-pvc-a", "replicated", corev1.ClaimLost, ago(bound), never)},
			class:  "replicated", now: now,
			want: Claims{Live: []string{"tmp-pvc-a"}},
		},
		"TerminatingIsNeverCounted": {
			reason: "A claim being deleted is the cleanup of a clone that is over; named only once it stays past the bound.",
			claims: []corev1.PersistentVolumeClaim{
				tmpClaim("tmp-pvc-a", "replicated", corev1.ClaimLost, ago(time.Minute), ago(30*time.Second)),
				tmpClaim("tmp-pvc-b", "replicated", corev1.ClaimBound, ago(time.Hour), ago(20*time.Minute)),
			},
			class: "replicated", now: now,
			want: Claims{Stuck: []string{"tmp-pvc-b"}},
		},
		"TerminatingTimedFromItsDeletion": {
			reason: "An old claim deleted a moment ago is a cleanup under way, not stuck.",
			claims: []corev1.PersistentVolumeClaim{tmpClaim("tmp-pvc-a", "replicated", corev1.ClaimPending, ago(2*time.Hour), ago(time.Minute))},
			class:  "replicated", now: now,
		},
		"AgeUnknownCounts": {
			reason: "A claim that says not when it was made is counted, as before the bound existed.",
			claims: []corev1.PersistentVolumeClaim{tmpClaim("tmp-pvc-a", "replicated", corev1.ClaimPending, never, never)},
			class:  "replicated", now: now,
			want: Claims{Live: []string{"tmp-pvc-a"}},
		},
		"NoClockCountsAll": {
			reason: "Without a time to measure from (the zero now) nothing is taken for leaked; terminating claims still are not counted.",
			claims: []corev1.PersistentVolumeClaim{
				tmpClaim("tmp-pvc-a", "replicated", corev1.ClaimLost, ago(time.Hour), never),
				tmpClaim("tmp-pvc-b", "replicated", corev1.ClaimLost, ago(time.Hour), ago(time.Hour)),
			},
			class: "replicated",
			want:  Claims{Live: []string{"tmp-pvc-a"}},
		},
		"OtherClassNeitherCountedNorNamed": {
			reason: "A claim on another class is that class's budget's, leaked or not.",
			claims: []corev1.PersistentVolumeClaim{
				tmpClaim("tmp-pvc-a", "local", corev1.ClaimPending, ago(time.Minute), never),
				tmpClaim("tmp-pvc-b", "local", corev1.ClaimLost, ago(time.Hour), never),
				tmpClaim("tmp-pvc-c", "replicated", corev1.ClaimBound, ago(time.Minute), never),
			},
			class: "replicated", now: now,
			want: Claims{Live: []string{"tmp-pvc-c"}},
		},
		"EveryClassWhenTheClassIsUnknown": {
			reason: "When the pool's class is unknown every claim of the golden counts or is named.",
			claims: []corev1.PersistentVolumeClaim{
				tmpClaim("tmp-pvc-a", "local", corev1.ClaimPending, ago(time.Minute), never),
				tmpClaim("tmp-pvc-b", "local", corev1.ClaimLost, ago(time.Hour), never),
			},
			now:  now,
			want: Claims{Live: []string{"tmp-pvc-a"}, Leaked: []string{"tmp-pvc-b"}},
		},
		"FiveLeaksOfAFullBudgetAreNamedSorted": {
			reason: "Five Lost or terminating claims left by another pool's clones are neither counted nor named out of order.",
			claims: []corev1.PersistentVolumeClaim{
				tmpClaim("tmp-pvc-e", "replicated", corev1.ClaimLost, ago(time.Hour), ago(time.Hour)),
				tmpClaim("tmp-pvc-d", "replicated", corev1.ClaimLost, ago(time.Hour), never),
				tmpClaim("tmp-pvc-c", "replicated", corev1.ClaimPending, ago(time.Hour), never),
				tmpClaim("tmp-pvc-b", "replicated", corev1.ClaimLost, ago(time.Hour), never),
				tmpClaim("tmp-pvc-a", "replicated", corev1.ClaimLost, ago(time.Hour), ago(time.Hour)),
			},
			class: "replicated", now: now,
			want: Claims{Leaked: []string{"tmp-pvc-b", "tmp-pvc-c", "tmp-pvc-d"}, Stuck: []string{"tmp-pvc-a", "tmp-pvc-e"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := CountClaims(tc.claims, tc.class, tc.now, bound)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestCountClaimsWithoutABound: leakedAfter 0 takes no claim for leaked.
func TestCountClaimsWithoutABound(t *testing.T) {
	claims := []corev1.PersistentVolumeClaim{tmpClaim("tmp-pvc-a", "replicated", corev1.ClaimLost, ago(time.Hour), time.Time{})}
	want := Claims{Live: []string{"tmp-pvc-a"}}
	if diff := cmp.Diff(want, CountClaims(claims, "replicated", now, 0)); diff != "" {
		t.Errorf("without a bound every claim not terminating counts\n-want, +got:\n%s", diff)
	}
}
