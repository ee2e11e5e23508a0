package clusterapi

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/poolspec"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

func TestAutoscalerAnnotations(t *testing.T) {
	reserved, errs := poolspec.Reservations(nil, nil, poolspec.NodeSize{MilliCPU: 4000, MemoryBytes: 8 << 30})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	node := talosconfig.Node{Labels: map[string]string{"b": "2", "a": "1"}, Taints: map[string]string{"dedicated": "batch:NoSchedule", "spot": "PreferNoSchedule"}}
	autoscaled := poolspec.Scaling{Autoscaled: true, Min: 1, Max: 3, ProvisionTime: "15m"}
	cases := map[string]struct {
		reason string
		sc     poolspec.Scaling
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
