package talos

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/validation"
)

// node is what Talos reads from the node patch (nodepool/machineconfig.go).
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
	full := map[string]any{
		"resources": map[string]any{"cpu": "8", "memory": "16Gi"},
		"labels":    map[string]any{"workload": "ml", "example.com/tier": "gold"},
		"taints": []any{
			map[string]any{"key": "dedicated", "value": "batch", "effect": "NoSchedule"},
			map[string]any{"key": "example.com/spot", "effect": "PreferNoSchedule"},
		},
		"gpus": []any{map[string]any{"name": "nvidia.com/GB202_RTX_PRO_6000"}},
	}
	with := func(base map[string]any, kv ...any) map[string]any {
		out := map[string]any{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	nvidia := []string{"nvidia NVreg_NvLinkDisable=1", "nvidia_uvm", "nvidia_drm", "nvidia_modeset"}
	cases := map[string]struct {
		reason string
		spec   map[string]any
		want   node
	}{
		"DefaultPool": {
			reason: "Every pool reserves for the OS and kubelet; u1.medium (1 vCPU, 4Gi) gets the floors.",
			spec:   map[string]any{},
			want:   node{Kubelet: kubelet("50m", "256Mi", "50m", "256Mi", "7%", "10%")},
		},
		"GPUPoolWithLabelsAndTaints": {
			reason: "Labels sorted beside gpu=on, taints as value:effect or effect alone, the NVIDIA modules in load order, 5% of 8 cores and 16Gi.",
			spec:   full,
			want: node{
				Labels:  map[string]string{"gpu": "on", "workload": "ml", "example.com/tier": "gold"},
				Taints:  map[string]string{"dedicated": "batch:NoSchedule", "example.com/spot": "PreferNoSchedule"},
				Modules: nvidia,
				Kubelet: kubelet("400m", "819Mi", "400m", "819Mi", "7%", "10%"),
			},
		},
		"ExplicitModulesAndOverrides": {
			reason: "An explicit list replaces the NVIDIA set; overrides are written as quantities.",
			spec: with(full,
				"kernelModules", []any{map[string]any{"name": "br_netfilter", "parameters": []any{"nf_conntrack_helper=0"}}, map[string]any{"name": "dummy"}},
				"kubelet", map[string]any{"systemReservedCpu": "0.5", "kubeReservedMemory": "1Gi", "evictionHardMemory": "500Mi", "evictionSoftMemory": "1Gi"}),
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
				spec := with(tc.spec, "version", version.kubernetes, "talos", map[string]any{"version": version.talos})
				r := renderPool(t, spec)
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
