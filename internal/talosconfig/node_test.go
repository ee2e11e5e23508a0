package talosconfig

import (
	"strings"
	"testing"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/poolspec"
)

// TestNodePatch re-expresses the chart's rendering tests
// (kubernetes-nodes tests/node_labels_taints_test.yaml@27f0283 and
// tests/kernel_modules_test.yaml@c1ea547) on the node patch.
func TestNodePatch(t *testing.T) {
	nvidiaGPU := []v1alpha1.GPU{{Name: "nvidia.com/GB202_RTX_PRO_6000"}}
	mods := func(m ...v1alpha1.KernelModule) *[]v1alpha1.KernelModule {
		if m == nil {
			m = []v1alpha1.KernelModule{}
		}
		return &m
	}
	const nvidia = "  kernel:\n    modules:\n    - name: nvidia\n      parameters:\n      - NVreg_NvLinkDisable=1\n    - name: nvidia_uvm\n    - name: nvidia_drm\n    - name: nvidia_modeset\n"
	cases := map[string]struct {
		reason string
		shape  v1alpha1.PoolShape
		// has are substrings the patch must carry, hasNot ones it must not.
		has, hasNot []string
	}{
		"NeitherLabelsNorTaintsByDefault": {
			reason: "renders neither nodeLabels nor nodeTaints by default, and no kernel block for a pool with neither GPUs nor kernelModules",
			hasNot: []string{"nodeLabels:", "nodeTaints:", "kernel:"},
		},
		"LabelsSorted": {
			reason: "labels land in machine.nodeLabels, sorted",
			shape:  v1alpha1.PoolShape{Labels: map[string]string{"workload": "batch", "example.com/tier": "gold"}},
			has:    []string{"  nodeLabels:\n    example.com/tier: gold\n    workload: batch\n"},
		},
		"GPUKeepsGPUOnBesideLabels": {
			reason: "a GPU pool keeps gpu=on beside its own labels",
			shape:  v1alpha1.PoolShape{GPUs: []v1alpha1.GPU{{Name: "nvidia.com/GH200"}}, Labels: map[string]string{"workload": "ml"}},
			has:    []string{"  nodeLabels:\n    gpu: \"on\"\n    workload: ml\n"},
		},
		"TaintsValueEffectOrEffect": {
			reason: "taints land in machine.nodeTaints as value:effect, or effect alone without a value",
			shape:  v1alpha1.PoolShape{Taints: []v1alpha1.Taint{{Key: "dedicated", Value: "batch", Effect: "NoSchedule"}, {Key: "example.com/spot", Effect: "PreferNoSchedule"}}},
			has:    []string{"  nodeTaints:\n    dedicated: batch:NoSchedule\n    example.com/spot: PreferNoSchedule\n"},
		},
		"NVIDIASetInOrder": {
			reason: "emits the NVIDIA module set, in dependency order, for an nvidia.com GPU pool",
			shape:  v1alpha1.PoolShape{GPUs: nvidiaGPU},
			has:    []string{nvidia},
		},
		"ExplicitListVerbatim": {
			reason: "takes an explicit kernelModules list verbatim, including parameters",
			shape:  v1alpha1.PoolShape{KernelModules: mods(v1alpha1.KernelModule{Name: "br_netfilter", Parameters: []string{"nf_conntrack_helper=0"}}, v1alpha1.KernelModule{Name: "dummy"})},
			has:    []string{"  kernel:\n    modules:\n    - name: br_netfilter\n      parameters:\n      - nf_conntrack_helper=0\n    - name: dummy\n"},
		},
		"ExplicitListReplacesNVIDIA": {
			reason: "lets an explicit list replace the NVIDIA default on a GPU pool",
			shape:  v1alpha1.PoolShape{GPUs: nvidiaGPU, KernelModules: mods(v1alpha1.KernelModule{Name: "nvidia"}, v1alpha1.KernelModule{Name: "nvidia_uvm"})},
			has:    []string{"  kernel:\n    modules:\n    - name: nvidia\n    - name: nvidia_uvm\n  kubelet:\n"},
		},
		"EmptyListOptsOut": {
			reason: "treats an explicit empty kernelModules list as an opt-out on a GPU pool",
			shape:  v1alpha1.PoolShape{GPUs: nvidiaGPU, KernelModules: mods()},
			hasNot: []string{"kernel:"},
		},
		"OtherVendorGetsNoModules": {
			reason: "does not assume NVIDIA for a GPU pool from another vendor",
			shape:  v1alpha1.PoolShape{GPUs: []v1alpha1.GPU{{Name: "amd.com/gpu"}}},
			has:    []string{"gpu: \"on\""},
			hasNot: []string{"kernel:"},
		},
		"ReservationsAlways": {
			reason: "every pool reserves for the OS and the kubelet, as the chart does",
			has:    []string{"    extraConfig:\n      evictionHard:\n        imagefs.available: 15%\n        memory.available: 7%\n", "      systemReserved:\n        cpu: 50m\n        memory: 256Mi\n"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			reserved, errs := poolspec.Reservations(nil, tc.shape.Kubelet, poolspec.NodeSize{})
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			got, err := NodePatch(ResolveNode(tc.shape, poolspec.SplitLabels(tc.shape.Labels, nil), reserved))
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.has {
				if !strings.Contains(got, s) {
					t.Errorf("%s\nthe patch lacks\n%s\ngot:\n%s", tc.reason, s, got)
				}
			}
			for _, s := range tc.hasNot {
				if strings.Contains(got, s) {
					t.Errorf("%s\nthe patch carries %q:\n%s", tc.reason, s, got)
				}
			}
		})
	}
}
