package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/poolspec"
)

// TestDeployment: the MachineDeployment is built once from the (bounded)
// shape: replicas only for a fixed pool, the autoscaler's bounds and the
// worker's capacity as annotations, the rollout, and the Machines' labels
// beside the selector, pointing at both templates.
func TestDeployment(t *testing.T) {
	p := pool.Pool{Namespace: "tenant-a", Cluster: "demo", Name: "md0"}
	rollout := poolspec.Scaling{MaxSurge: intstr.FromInt32(2), MaxUnavailable: intstr.FromInt32(0)}
	fixed := pool.Shape{Size: poolspec.Size{Replicas: 3, Scaling: rollout, Labels: poolspec.NodeLabels{Machine: map[string]string{"example.com/zone": "a"}}}, MachineVersion: "v1.35.6"}
	fixed.VM.Roles = []string{"ingress"}
	auto := fixed
	auto.Scaling = poolspec.Scaling{Autoscaled: true, Min: 1, Max: 6, ProvisionTime: "15m", MaxSurge: intstr.FromInt32(1)}
	type view struct {
		Replicas           *int32
		MaxSize, MinSize   string
		Memory             string
		Surge              intstr.IntOrString
		MachineLabels      map[string]string
		Machine, Bootstrap string
	}
	cases := map[string]struct {
		reason string
		shape  pool.Shape
		want   view
	}{
		"Fixed": {
			reason: "A fixed pool writes its replicas and no autoscaler annotation.",
			shape:  fixed,
			want: view{Replicas: ptr.To[int32](3), Surge: intstr.FromInt32(2),
				MachineLabels: map[string]string{"cluster.x-k8s.io/cluster-name": "demo", "cluster.x-k8s.io/deployment-name": "demo-md0", "node-role.kubernetes.io/ingress": "", "example.com/zone": "a"},
				Machine:       "demo-md0-m", Bootstrap: "demo-md0-b"},
		},
		"Autoscaled": {
			reason: "An autoscaled pool writes no replicas: the autoscaler owns them; its bounds and capacity are annotations.",
			shape:  auto,
			want: view{MaxSize: "6", MinSize: "1", Memory: "4096Mi", Surge: intstr.FromInt32(1),
				MachineLabels: map[string]string{"cluster.x-k8s.io/cluster-name": "demo", "cluster.x-k8s.io/deployment-name": "demo-md0", "node-role.kubernetes.io/ingress": "", "example.com/zone": "a"},
				Machine:       "demo-md0-m", Bootstrap: "demo-md0-b"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			md := Deployment(p, tc.shape, "demo-md0-m", "demo-md0-b", clusterapi.Capacity{Known: true, MemoryMi: 4096})
			got := view{
				Replicas: md.Spec.Replicas, MaxSize: md.Annotations[clusterapi.AnnAutoscalerMaxSize], MinSize: md.Annotations[clusterapi.AnnAutoscalerMinSize],
				Memory: md.Annotations[clusterapi.AnnCapacityMemory], Surge: *md.Spec.Strategy.RollingUpdate.MaxSurge,
				MachineLabels: md.Spec.Template.Labels, Machine: md.Spec.Template.Spec.InfrastructureRef.Name, Bootstrap: md.Spec.Template.Spec.Bootstrap.ConfigRef.Name,
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			if md.Spec.Selector.MatchLabels["example.com/zone"] != "" {
				t.Errorf("the Machines' labels leaked into the selector: %v", md.Spec.Selector.MatchLabels)
			}
		})
	}
}
