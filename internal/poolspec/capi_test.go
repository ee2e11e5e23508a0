package poolspec

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/defaults"
)

func TestCAPI(t *testing.T) {
	root := field.NewPath("spec", "nodePools").Key("gpu")
	cases := map[string]struct {
		reason string
		shape  v1alpha1.PoolShape
		want   []string // the fields refused, in order
	}{
		"FixedPool":         {"replicas alone.", v1alpha1.PoolShape{Replicas: ptr.To[int32](3)}, nil},
		"AutoscaledPool":    {"Both bounds and a provision time.", v1alpha1.PoolShape{MinReplicas: ptr.To[int32](0), MaxReplicas: ptr.To[int32](10), MaxNodeProvisionTime: "30m"}, nil},
		"OnlyMaxReplicas":   {"minReplicas defaults to 0.", v1alpha1.PoolShape{MaxReplicas: ptr.To[int32](1)}, nil},
		"ReplicasAndBounds": {"A fixed count and bounds contradict.", v1alpha1.PoolShape{Replicas: ptr.To[int32](1), MaxReplicas: ptr.To[int32](3)}, []string{"spec.nodePools[gpu].replicas"}},
		"MinWithoutMax":     {"The autoscaler needs both.", v1alpha1.PoolShape{MinReplicas: ptr.To[int32](1)}, []string{"spec.nodePools[gpu].maxReplicas"}},
		"MinAboveMax":       {"An empty range.", v1alpha1.PoolShape{MinReplicas: ptr.To[int32](4), MaxReplicas: ptr.To[int32](3)}, []string{"spec.nodePools[gpu].minReplicas"}},
		"ZeroMax":           {"A ceiling of zero.", v1alpha1.PoolShape{MaxReplicas: ptr.To[int32](0)}, []string{"spec.nodePools[gpu].maxReplicas"}},
		"MaxAbove1000":      {"The replica bound.", v1alpha1.PoolShape{MaxReplicas: ptr.To[int32](1001)}, []string{"spec.nodePools[gpu].maxReplicas"}},
		"ProvisionTimeOnFixedPool": {"Only the autoscaler reads it.", v1alpha1.PoolShape{MaxNodeProvisionTime: "30m"},
			[]string{"spec.nodePools[gpu].maxNodeProvisionTime"}},
		"BadDurations": {"Each timeout is named.", v1alpha1.PoolShape{HealthCheck: &v1alpha1.HealthCheck{NodeStartupTimeout: "10s", ReadyUnknownTimeout: "0s", ReadyFalseTimeout: "5"}},
			[]string{"spec.nodePools[gpu].healthCheck.nodeStartupTimeout", "spec.nodePools[gpu].healthCheck.readyUnknownTimeout", "spec.nodePools[gpu].healthCheck.readyFalseTimeout"}},
		"BadMaxUnhealthy": {"A fraction.", v1alpha1.PoolShape{HealthCheck: &v1alpha1.HealthCheck{MaxUnhealthy: "0.5"}}, []string{"spec.nodePools[gpu].healthCheck.maxUnhealthy"}},
		"RolloutBothZero": {"No roll could progress.", v1alpha1.PoolShape{Rollout: &v1alpha1.Rollout{MaxSurge: "0%", MaxUnavailable: "0"}}, []string{"spec.nodePools[gpu].rollout"}},
		"RolloutOneZero":  {"A surge-only roll is fine.", v1alpha1.PoolShape{Rollout: &v1alpha1.Rollout{MaxUnavailable: "0"}}, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			_, _, errs := CAPI(root, tc.shape, 1)
			for _, e := range errs {
				got = append(got, e.Field)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCAPIScaling(t *testing.T) {
	unavailable := intstr.Parse(defaults.MaxUnavailable)
	cases := map[string]struct {
		reason string
		shape  v1alpha1.PoolShape
		fixed  int32
		want   Scaling
	}{
		"FixedSurgesByItsCount": {
			reason: "A fixed pool surges by its replica count, the chart's ceiling.",
			fixed:  3,
			want:   Scaling{MaxSurge: intstr.FromInt32(3), MaxUnavailable: unavailable},
		},
		"ScaledToZeroStillSurges": {
			reason: "A pool of zero surges by one, so that its strategy stays valid.",
			want:   Scaling{MaxSurge: intstr.FromInt32(1), MaxUnavailable: unavailable},
		},
		"AutoscaledDefaults": {
			reason: "An autoscaled pool surges by maxReplicas and takes the chart's floor and provision time.",
			shape:  v1alpha1.PoolShape{MaxReplicas: ptr.To[int32](5)},
			fixed:  2,
			want: Scaling{Autoscaled: true, Min: defaults.MinReplicas, Max: 5, ProvisionTime: defaults.MaxNodeProvisionTime,
				MaxSurge: intstr.FromInt32(5), MaxUnavailable: unavailable},
		},
		"AutoscaledAsWritten": {
			reason: "The bounds and provision time as written.",
			shape:  v1alpha1.PoolShape{MinReplicas: ptr.To[int32](2), MaxReplicas: ptr.To[int32](4), MaxNodeProvisionTime: "1h"},
			want: Scaling{Autoscaled: true, Min: 2, Max: 4, ProvisionTime: "1h",
				MaxSurge: intstr.FromInt32(4), MaxUnavailable: unavailable},
		},
		"RolloutAsWritten": {
			reason: "The rollout's counts or percentages replace the defaults.",
			shape:  v1alpha1.PoolShape{Rollout: &v1alpha1.Rollout{MaxSurge: "25%", MaxUnavailable: "1"}},
			fixed:  4,
			want:   Scaling{MaxSurge: intstr.FromString("25%"), MaxUnavailable: intstr.FromInt32(1)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, _, errs := CAPI(field.NewPath("spec"), tc.shape, tc.fixed)
			if len(errs) > 0 {
				t.Fatalf("%s\nunexpected refusal: %v", tc.reason, errs)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCAPIHealthCheck(t *testing.T) {
	cases := map[string]struct {
		reason string
		hc     *v1alpha1.HealthCheck
		want   HealthCheck
	}{
		"Defaults": {
			reason: "An omitted healthCheck takes the chart's values.",
			want:   HealthCheck{MaxUnhealthy: intstr.FromString("50%"), NodeStartupTimeout: 20 * time.Minute, ReadyUnknownTimeout: 5 * time.Minute, ReadyFalseTimeout: 10 * time.Minute},
		},
		"AsWritten": {
			reason: "Each value set replaces its default; a count is an integer.",
			hc:     &v1alpha1.HealthCheck{MaxUnhealthy: "2", NodeStartupTimeout: "1h30m", ReadyFalseTimeout: "30s"},
			want:   HealthCheck{MaxUnhealthy: intstr.FromInt32(2), NodeStartupTimeout: 90 * time.Minute, ReadyUnknownTimeout: 5 * time.Minute, ReadyFalseTimeout: 30 * time.Second},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, got, errs := CAPI(field.NewPath("spec"), v1alpha1.PoolShape{HealthCheck: tc.hc}, 1)
			if len(errs) > 0 {
				t.Fatalf("%s\nunexpected refusal: %v", tc.reason, errs)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
