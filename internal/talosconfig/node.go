package talosconfig

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/poolspec"
	"github.com/cozystack/function-worker-image/internal/rules"
	"github.com/cozystack/function-worker-image/internal/yamlenc"
)

// The node patch, after kubernetes-nodes templates/talos-reconcile-job.yaml
// @27f0283,@c1ea547 and _talosconfigtemplate.tpl:64-107,170-193@4206b9a. It
// depends on the resolved Node alone, not on generateType, so a Join base
// config gets the same patch.

const (
	// labelGPUOn is the value of the gpu label on a GPU pool's nodes.
	labelGPUOn = "on"
	// NVIDIAPrefix marks the GPUs that get the NVIDIA kernel modules.
	NVIDIAPrefix = "nvidia.com/"
)

// nvidiaModules is the chart's module set for an nvidia.com GPU pool, in the
// order Talos must load them: nvidia first, the others depend on it
// (kubernetes-nodes templates/_helpers.tpl:112-150@c1ea547). The parameter
// is what the gpu-operator's driver container applies on other OSes.
var nvidiaModules = []KernelModule{
	{Name: "nvidia", Parameters: []string{"NVreg_NvLinkDisable=1"}},
	{Name: "nvidia_uvm"},
	{Name: "nvidia_drm"},
	{Name: "nvidia_modeset"},
}

// Node is what a pool's spec resolves to in the machine config.
type Node struct {
	Labels        map[string]string
	Taints        map[string]string
	KernelModules []KernelModule
	Reserved      poolspec.Reserved
}

// KernelModule is a machine.kernel.modules entry
// (pkg/machinery/config/types/v1alpha1 KernelModuleConfig).
type KernelModule struct {
	Name       string   `json:"name"`
	Parameters []string `json:"parameters,omitempty"`
}

// ResolveNode resolves a pool's node config: the labels Talos writes
// (labels.Node; Cluster API puts labels.Machine on the Node) plus gpu=on on a
// GPU pool, taints as Talos writes them (value:effect, or the effect), and
// kernel modules as written, even [], else the NVIDIA set on nvidia.com GPUs.
func ResolveNode(spec v1alpha1.PoolShape, labels poolspec.NodeLabels, reserved poolspec.Reserved) Node {
	nc := Node{Reserved: reserved}
	if len(labels.Node) > 0 || len(spec.GPUs) > 0 {
		nc.Labels = maps.Clone(labels.Node)
		if nc.Labels == nil {
			nc.Labels = map[string]string{}
		}
		if len(spec.GPUs) > 0 {
			// HAMi's device plugin DaemonSet selects gpu=on nodes; without
			// the label no GPU is offered to the tenant
			// (talos-reconcile-job.yaml:285-295@c1ea547).
			nc.Labels[rules.LabelGPU] = labelGPUOn
		}
	}
	for _, t := range spec.Taints {
		if nc.Taints == nil {
			nc.Taints = map[string]string{}
		}
		v := t.Effect
		if t.Value != "" {
			v = t.Value + ":" + t.Effect
		}
		nc.Taints[t.Key] = v
	}
	if spec.KernelModules != nil {
		for _, m := range *spec.KernelModules {
			nc.KernelModules = append(nc.KernelModules, KernelModule{Name: m.Name, Parameters: m.Parameters})
		}
		return nc
	}
	if slices.ContainsFunc(spec.GPUs, func(g v1alpha1.GPU) bool { return strings.HasPrefix(g.Name, NVIDIAPrefix) }) {
		nc.KernelModules = slices.Clone(nvidiaModules)
	}
	return nc
}

// NodePatch is the node config as one v1alpha1 strategic merge patch. The
// kubelet reservations are always set (the chart reserves on every pool);
// evictions other than memory.available are the chart's fixed values
// (talos-reconcile-job.yaml:311-329@27f0283).
func NodePatch(nc Node) (string, error) {
	r := nc.Reserved
	machine := map[string]any{
		"kubelet": map[string]any{"extraConfig": map[string]any{
			"systemReserved": map[string]string{"cpu": r.SystemCPU.String(), "memory": r.SystemMemory.String()},
			"kubeReserved":   map[string]string{"cpu": r.KubeCPU.String(), "memory": r.KubeMemory.String()},
			"evictionHard": map[string]string{
				"memory.available": r.EvictionHard.Text, "nodefs.available": "10%", "imagefs.available": "15%", "nodefs.inodesFree": "5%",
			},
			"evictionSoft": map[string]string{
				"memory.available": r.EvictionSoft.Text, "nodefs.available": "15%", "imagefs.available": "20%",
			},
			"evictionSoftGracePeriod": map[string]string{
				"memory.available": "1m30s", "nodefs.available": "1m30s", "imagefs.available": "1m30s",
			},
			"evictionMinimumReclaim": map[string]string{"memory.available": "256Mi"},
		}},
	}
	if len(nc.Labels) > 0 {
		machine["nodeLabels"] = nc.Labels
	}
	if len(nc.Taints) > 0 {
		machine["nodeTaints"] = nc.Taints
	}
	if len(nc.KernelModules) > 0 {
		machine["kernel"] = map[string]any{"modules": nc.KernelModules}
	}
	b, err := yamlenc.Marshal(map[string]any{"machine": machine})
	if err != nil {
		return "", fmt.Errorf("cannot render the Talos node config patch: %w", err)
	}
	return string(b), nil
}
