package talos

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/validation"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/poolspec"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// node is what Talos reads from the node patch (talosconfig.NodePatch).
type node struct {
	Labels  map[string]string
	Taints  map[string]string
	Modules []string
	// Kubelet is machine.kubelet.extraConfig.
	Kubelet map[string]any
}

func readNode(cfg config.Provider) node {
	m := cfg.Machine()
	n := node{Kubelet: m.Kubelet().ExtraConfig()}
	if l := m.NodeLabels(); len(l) > 0 {
		n.Labels = l
	}
	if ts := m.NodeTaints(); len(ts) > 0 {
		n.Taints = ts
	}
	for _, mod := range m.Kernel().Modules() {
		n.Modules = append(n.Modules, strings.TrimSpace(mod.Name()+" "+strings.Join(mod.Parameters(), " ")))
	}
	return n
}

// kubelet is the extraConfig the chart writes for the given reservations
// (kubernetes-nodes templates/talos-reconcile-job.yaml@27f0283).
func kubelet(sysCPU, sysMem, kubeCPU, kubeMem, hard, soft string) map[string]any {
	return map[string]any{
		"systemReserved":          map[string]any{"cpu": sysCPU, "memory": sysMem},
		"kubeReserved":            map[string]any{"cpu": kubeCPU, "memory": kubeMem},
		"evictionHard":            map[string]any{"memory.available": hard, "nodefs.available": "10%", "imagefs.available": "15%", "nodefs.inodesFree": "5%"},
		"evictionSoft":            map[string]any{"memory.available": soft, "nodefs.available": "15%", "imagefs.available": "20%"},
		"evictionSoftGracePeriod": map[string]any{"memory.available": "1m30s", "nodefs.available": "1m30s", "imagefs.available": "1m30s"},
		"evictionMinimumReclaim":  map[string]any{"memory.available": "256Mi"},
	}
}

// TestNodePatchMakesAValidWorkerConfig applies the node patch (labels,
// taints, kernel modules, kubelet reservations) the way CABPT does and
// validates the result strictly, on every Talos minor the matrix has a
// Kubernetes row for that these features exist on.
func TestNodePatchMakesAValidWorkerConfig(t *testing.T) {
	full := v1alpha1.PoolShape{
		Labels: map[string]string{"workload": "ml", "example.com/tier": "gold"},
		Taints: []v1alpha1.Taint{
			{Key: "dedicated", Value: "batch", Effect: "NoSchedule"},
			{Key: "example.com/spot", Effect: "PreferNoSchedule"},
		},
		GPUs: []v1alpha1.GPU{{Name: "nvidia.com/GB202_RTX_PRO_6000"}},
	}
	// full's resources: 8 cores, 16Gi.
	large := poolspec.NodeSize{MilliCPU: 8000, MemoryBytes: 16 << 30}
	explicit := full
	explicit.KernelModules = &[]v1alpha1.KernelModule{{Name: "br_netfilter", Parameters: []string{"nf_conntrack_helper=0"}}, {Name: "dummy"}}
	explicit.Kubelet = &v1alpha1.Kubelet{SystemReservedCPU: "0.5", KubeReservedMemory: "1Gi", EvictionHardMemory: "500Mi", EvictionSoftMemory: "1Gi"}
	nvidia := []string{"nvidia NVreg_NvLinkDisable=1", "nvidia_uvm", "nvidia_drm", "nvidia_modeset"}
	cases := map[string]struct {
		reason string
		node   talosconfig.Node
		want   node
	}{
		"DefaultPool": {
			reason: "Every pool reserves for the OS and kubelet; u1.medium (1 vCPU, 4Gi) gets the floors.",
			node:   node1CPU4Gi(t, v1alpha1.PoolShape{}),
			want:   node{Kubelet: kubelet("50m", "256Mi", "50m", "256Mi", "7%", "10%")},
		},
		"GPUPoolWithLabelsAndTaints": {
			reason: "Labels sorted beside gpu=on, taints as value:effect or effect alone, the NVIDIA modules in load order, 5% of 8 cores and 16Gi.",
			node:   nodeOf(t, full, large),
			want: node{
				Labels:  map[string]string{"gpu": "on", "workload": "ml", "example.com/tier": "gold"},
				Taints:  map[string]string{"dedicated": "batch:NoSchedule", "example.com/spot": "PreferNoSchedule"},
				Modules: nvidia,
				Kubelet: kubelet("400m", "819Mi", "400m", "819Mi", "7%", "10%"),
			},
		},
		"ExplicitModulesAndOverrides": {
			reason: "An explicit list replaces the NVIDIA set; overrides are written as quantities.",
			node:   nodeOf(t, explicit, large),
			want: node{
				Labels:  map[string]string{"gpu": "on", "workload": "ml", "example.com/tier": "gold"},
				Taints:  map[string]string{"dedicated": "batch:NoSchedule", "example.com/spot": "PreferNoSchedule"},
				Modules: []string{"br_netfilter nf_conntrack_helper=0", "dummy"},
				Kubelet: kubelet("500m", "819Mi", "400m", "1Gi", "500Mi", "1Gi"),
			},
		},
	}
	for _, version := range []struct{ talos, kubernetes string }{{"v1.9.6", "v1.32"}, {"v1.11.5", "v1.34"}, {"v1.12.4", "v1.35"}, {"v1.13.6", "v1.35"}} {
		for name, tc := range cases {
			t.Run(version.talos+"/"+name, func(t *testing.T) {
				r := renderWorker(t, worker{Talos: version.talos, Kubernetes: version.kubernetes, Node: tc.node})
				cfg, err := workerConfig(r)
				if err != nil {
					t.Fatalf("%s\nTalos could not build the worker config: %v\nstrategicPatches:\n%s", tc.reason, err, strings.Join(r.StrategicPatches, "---\n"))
				}
				if warnings, err := cfg.Validate(cloudMode, validation.WithStrict()); err != nil || len(warnings) > 0 {
					t.Errorf("%s\nstrict validation in %s mode failed: %v (warnings %q)", tc.reason, cloudMode, err, warnings)
				}
				if diff := cmp.Diff(tc.want, readNode(cfg)); diff != "" {
					t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
				}
			})
		}
	}
}
