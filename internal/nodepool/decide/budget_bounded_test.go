package decide

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/cozystack/function-worker-image/internal/clonebudget"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/poolspec"
)

// TestBounded: the budget bounds only what it decided, and the shape the
// pool's status reports from is left as the spec asks.
func TestBounded(t *testing.T) {
	fixed := pool.Shape{Size: poolspec.Size{Replicas: 10, Scaling: poolspec.Scaling{MaxSurge: intstr.FromString("25%"), MaxUnavailable: intstr.FromInt32(0)}}}
	auto := pool.Shape{Size: poolspec.Size{Scaling: poolspec.Scaling{Autoscaled: true, Min: 1, Max: 20, MaxSurge: intstr.FromInt32(3)}}}
	cases := map[string]struct {
		reason string
		shape  pool.Shape
		b      BudgetPlan
		want   pool.Shape
	}{
		"NotApplying": {
			reason: "On the HTTP path or while held the budget bounds nothing, even with a decision in it.",
			shape:  fixed, b: BudgetPlan{Decision: clonebudget.Decision{Replicas: 2}}, want: fixed,
		},
		"FixedPoolGrowsByTheRoom": {
			reason: "A fixed pool's replicas are the budget's.",
			shape:  fixed, b: BudgetPlan{Applies: true, Decision: clonebudget.Decision{Replicas: 4, MaxSurge: 3}},
			want: func() pool.Shape { s := fixed; s.Replicas = 4; return s }(),
		},
		"SurgeLoweredAsACount": {
			reason: "A lowered surge replaces the spec's percentage with the count the budget leaves.",
			shape:  fixed, b: BudgetPlan{Applies: true, Decision: clonebudget.Decision{Replicas: 10, MaxSurge: 1, SurgeLowered: true}},
			want: func() pool.Shape { s := fixed; s.Scaling.MaxSurge = intstr.FromInt32(1); return s }(),
		},
		"AutoscaledMaxLowered": {
			reason: "An autoscaled pool's maximum is lowered, its replicas left to the autoscaler.",
			shape:  auto, b: BudgetPlan{Applies: true, Pool: clonebudget.Pool{Autoscaled: true, Max: 20}, Decision: clonebudget.Decision{Replicas: 7, MaxSize: 6}},
			want: func() pool.Shape { s := auto; s.Scaling.Max = 6; return s }(),
		},
		"AutoscaledMaxNotRaised": {
			reason: "A budget that allows the whole maximum leaves it as the spec asks.",
			shape:  auto, b: BudgetPlan{Applies: true, Pool: clonebudget.Pool{Autoscaled: true, Max: 20}, Decision: clonebudget.Decision{MaxSize: 20}},
			want: auto,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.b.Bounded(tc.shape)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
	if fixed.Replicas != 10 || fixed.Scaling.MaxSurge != intstr.FromString("25%") {
		t.Errorf("Bounded changed the shape it was given: %+v", fixed)
	}
}
