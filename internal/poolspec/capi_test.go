package poolspec

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
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
			for _, e := range CAPI(root, tc.shape) {
				got = append(got, e.Field)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
