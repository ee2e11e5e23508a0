package clonebudget

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
)

func TestDecide(t *testing.T) {
	cases := map[string]struct {
		reason string
		budget int32
		in     InFlight
		pool   Pool
		want   Decision
	}{
		"Unbounded": {
			reason: "A budget of 0 leaves the spec as it is.",
			budget: 0, in: InFlight{Own: 40, Others: 40},
			pool: Pool{Wanted: 100, Surge: 100, Unavailable: 1},
			want: Decision{InFlight: InFlight{Own: 40, Others: 40}, Replicas: 100, MaxSurge: 100},
		},
		"NewPoolStartsWithTheBudget": {
			reason: "A pool of 30 with nothing in flight starts 5 clones.",
			budget: 5, pool: Pool{Wanted: 30, Surge: 30, Unavailable: 1},
			want: Decision{Budget: 5, Replicas: 5, MaxSurge: 4, Waiting: 25, SurgeLowered: true},
		},
		"OwnClonesFillTheBudget": {
			reason: "The pool's own five clones leave no room: it stays at 5.",
			budget: 5, in: InFlight{Own: 5}, pool: Pool{Wanted: 30, Current: ptr.To[int32](5), Surge: 30, Unavailable: 1},
			want: Decision{Budget: 5, InFlight: InFlight{Own: 5}, Replicas: 5, MaxSurge: 4, Waiting: 25, SurgeLowered: true},
		},
		"FinishedClonesMakeRoom": {
			reason: "Two clones finished: the pool grows by two.",
			budget: 5, in: InFlight{Own: 3}, pool: Pool{Wanted: 30, Current: ptr.To[int32](5), Surge: 30, Unavailable: 1},
			want: Decision{Budget: 5, InFlight: InFlight{Own: 3}, Replicas: 7, MaxSurge: 4, Waiting: 23, SurgeLowered: true},
		},
		"OtherPoolsShareTheBudget": {
			reason: "Another pool's four clones of the same golden leave one.",
			budget: 5, in: InFlight{Others: 4}, pool: Pool{Wanted: 3, Current: ptr.To[int32](0), Surge: 3, Unavailable: 1},
			want: Decision{Budget: 5, InFlight: InFlight{Others: 4}, Replicas: 1, MaxSurge: 3, Waiting: 2},
		},
		"OverBudgetNeverShrinks": {
			reason: "More in flight than the budget (a lowered budget) holds the count where it is, never lowers it.",
			budget: 2, in: InFlight{Own: 6, Others: 3}, pool: Pool{Wanted: 10, Current: ptr.To[int32](6), Surge: 10, Unavailable: 1},
			want: Decision{Budget: 2, InFlight: InFlight{Own: 6, Others: 3}, Replicas: 6, MaxSurge: 1, Waiting: 4, SurgeLowered: true},
		},
		"ScaleDownAtOnce": {
			reason: "The owner asked for fewer workers: taken at once, whatever is in flight.",
			budget: 5, in: InFlight{Own: 5, Others: 5}, pool: Pool{Wanted: 2, Current: ptr.To[int32](10), Surge: 2, Unavailable: 1},
			want: Decision{Budget: 5, InFlight: InFlight{Own: 5, Others: 5}, Replicas: 2, MaxSurge: 2},
		},
		"SettledPoolUnchanged": {
			reason: "A pool at its count keeps it, and a surge within the budget is the spec's.",
			budget: 10, pool: Pool{Wanted: 3, Current: ptr.To[int32](3), Surge: 3, Unavailable: 1},
			want: Decision{Budget: 10, Replicas: 3, MaxSurge: 3},
		},
		"RollSurgeLeavesRoomForUnavailable": {
			reason: "A 30-worker roll surges 4 (plus 1 unavailable = 5 clones), not 30.",
			budget: 5, pool: Pool{Wanted: 30, Current: ptr.To[int32](30), Surge: 30, Unavailable: 1, Rolling: true},
			want: Decision{Budget: 5, Replicas: 30, MaxSurge: 4, SurgeLowered: true},
		},
		"RollSharesWithOtherPools": {
			reason: "While rolling, other pools' clones lower the surge, down to 0 when maxUnavailable replaces one at a time.",
			budget: 5, in: InFlight{Others: 5}, pool: Pool{Wanted: 30, Current: ptr.To[int32](30), Surge: 30, Unavailable: 1, Rolling: true},
			want: Decision{Budget: 5, InFlight: InFlight{Others: 5}, Replicas: 30, MaxSurge: 0, SurgeLowered: true},
		},
		"RollWithoutUnavailableKeepsOneSurge": {
			reason: "With maxUnavailable 0 Cluster API needs a surge of at least 1.",
			budget: 5, in: InFlight{Others: 9}, pool: Pool{Wanted: 30, Current: ptr.To[int32](30), Surge: 30, Unavailable: 0, Rolling: true},
			want: Decision{Budget: 5, InFlight: InFlight{Others: 9}, Replicas: 30, MaxSurge: 1, SurgeLowered: true},
		},
		"SettledPoolIgnoresOthersForSurge": {
			reason: "Not rolling, the surge depends on the budget alone, so other pools' clones do not rewrite the deployment.",
			budget: 5, in: InFlight{Others: 5}, pool: Pool{Wanted: 30, Current: ptr.To[int32](30), Surge: 30, Unavailable: 1},
			want: Decision{Budget: 5, InFlight: InFlight{Others: 5}, Replicas: 30, MaxSurge: 4, SurgeLowered: true},
		},
		"SmallSurgeIsTheOwners": {
			reason: "A surge below the budget stays as the owner wrote it.",
			budget: 10, pool: Pool{Wanted: 30, Current: ptr.To[int32](30), Surge: 2, Unavailable: 0, Rolling: true},
			want: Decision{Budget: 10, Replicas: 30, MaxSurge: 2},
		},
		"AutoscaledMaxBounded": {
			reason: "An autoscaled pool at 3 may grow to 3 + room.",
			budget: 5, in: InFlight{Own: 1, Others: 1}, pool: Pool{Autoscaled: true, Current: ptr.To[int32](3), Min: 1, Max: 20, Surge: 20, Unavailable: 1},
			want: Decision{Budget: 5, InFlight: InFlight{Own: 1, Others: 1}, MaxSize: 6, MaxSurge: 4, Waiting: 14, SurgeLowered: true},
		},
		"AutoscaledNeverBelowCurrent": {
			reason: "No room: the max is the current count, so the autoscaler adds none and removes none for it.",
			budget: 5, in: InFlight{Own: 5, Others: 2}, pool: Pool{Autoscaled: true, Current: ptr.To[int32](8), Min: 1, Max: 20, Surge: 20, Unavailable: 1},
			want: Decision{Budget: 5, InFlight: InFlight{Own: 5, Others: 2}, MaxSize: 8, MaxSurge: 4, Waiting: 12, SurgeLowered: true},
		},
		"AutoscaledOwnersMaxWins": {
			reason: "The spec's max is never raised, even when the current count is above it.",
			budget: 5, pool: Pool{Autoscaled: true, Current: ptr.To[int32](9), Min: 1, Max: 4, Surge: 4, Unavailable: 1},
			want: Decision{Budget: 5, MaxSize: 4, MaxSurge: 4},
		},
		"AutoscaledNewPoolFromMin": {
			reason: "Before the deployment exists, Cluster API seeds it from the min; the max is at least the min.",
			budget: 2, pool: Pool{Autoscaled: true, Min: 4, Max: 10, Surge: 10, Unavailable: 1},
			want: Decision{Budget: 2, MaxSize: 6, MaxSurge: 1, Waiting: 4, SurgeLowered: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Decide(tc.budget, tc.in, tc.pool)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nDecide(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
