package clusterapi

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/defaults"
	"github.com/cozystack/function-worker-image/internal/poolspec"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

func TestResolveScaling(t *testing.T) {
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
		"RolloutAsWritten": {
			reason: "The rollout's counts or percentages replace the defaults.",
			shape:  v1alpha1.PoolShape{Rollout: &v1alpha1.Rollout{MaxSurge: "25%", MaxUnavailable: "1"}},
			fixed:  4,
			want:   Scaling{MaxSurge: intstr.FromString("25%"), MaxUnavailable: intstr.FromInt32(1)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ResolveScaling(tc.shape, tc.fixed)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestAutoscalerAnnotations(t *testing.T) {
	reserved, errs := poolspec.Reservations(nil, nil, poolspec.NodeSize{MilliCPU: 4000, MemoryBytes: 8 << 30})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	node := talosconfig.Node{Labels: map[string]string{"b": "2", "a": "1"}, Taints: map[string]string{"dedicated": "batch:NoSchedule", "spot": "PreferNoSchedule"}}
	autoscaled := Scaling{Autoscaled: true, Min: 1, Max: 3, ProvisionTime: "15m"}
	cases := map[string]struct {
		reason string
		sc     Scaling
		c      Capacity
		want   map[string]string
	}{
		"Fixed": {
			reason: "A fixed pool carries no autoscaler annotations.",
			c:      WorkerCapacity(poolspec.NodeSize{MilliCPU: 4000, MemoryBytes: 8 << 30}, true, reserved, node, nil),
		},
		"SizeUnknown": {
			reason: "While the node's size is unknown only the bounds are claimed.",
			sc:     autoscaled,
			c:      WorkerCapacity(poolspec.NodeSize{}, false, reserved, node, nil),
			want:   map[string]string{AnnAutoscalerMinSize: "1", AnnAutoscalerMaxSize: "3", AnnMaxNodeProvisionTime: "15m"},
		},
		"Capacity": {
			reason: "Allocatable CPU and memory (size less reservations and hard eviction), the GPUs, labels and taints in the autoscaler's forms.",
			sc:     autoscaled,
			c:      WorkerCapacity(poolspec.NodeSize{MilliCPU: 4000, MemoryBytes: 8 << 30}, true, reserved, node, []v1alpha1.GPU{{Name: "nvidia.com/GH200"}}),
			want: map[string]string{
				AnnAutoscalerMinSize: "1", AnnAutoscalerMaxSize: "3", AnnMaxNodeProvisionTime: "15m",
				// 4 cores less 5% twice; 8Gi less 409Mi twice and 7%.
				AnnCapacityCPU:      "3600m",
				AnnCapacityMemory:   "6800Mi",
				AnnCapacityGPUCount: "1", AnnCapacityGPUType: "nvidia.com/gpu",
				AnnCapacityLabels: "a=1,b=2", AnnCapacityTaints: "dedicated=batch:NoSchedule,spot=:PreferNoSchedule",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, autoscalerAnnotations(tc.sc, tc.c)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
