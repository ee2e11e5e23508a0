package nodepool

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/compose/composetest"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/render"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

func TestWithGPUs(t *testing.T) {
	vmi := kubevirtv1.VirtualMachineInstanceSpec{}
	render.WithGPUs(&vmi, []v1alpha1.GPU{{Name: "nvidia.com/GH200"}, {Name: "nvidia.com/AD102GL_L40S"}})
	want := []kubevirtv1.GPU{{Name: "gpu1", DeviceName: "nvidia.com/GH200"}, {Name: "gpu2", DeviceName: "nvidia.com/AD102GL_L40S"}}
	if diff := cmp.Diff(want, vmi.Domain.Devices.GPUs); diff != "" {
		t.Errorf("GPUs are named gpu1, gpu2, ... as the chart names them (nodegroup.yaml:143-150@69da032)\n-want, +got:\n%s", diff)
	}
	none := kubevirtv1.VirtualMachineInstanceSpec{}
	render.WithGPUs(&none, nil)
	if none.Domain.Devices.GPUs != nil {
		t.Errorf("a pool without GPUs renders no gpus list (its template name must not change)")
	}
}

// TestReservationsFromTheInstanceType: the instance type is read and sizes
// the reservations; while it is missing the pool holds and drops nothing;
// reservations it cannot carry are fatal.
func TestReservationsFromTheInstanceType(t *testing.T) {
	large := instancetype("u1.2xlarge", 8, "32Gi")
	cases := map[string]struct {
		reason string
		spec   map[string]any
		world  worldFixture
		has    string
		hasNot string
		held   bool
		fatal  string
		// existing composes the pool first with the default world, then
		// observes what it composed.
		existing bool
	}{
		"SizedByTheInstanceType": {
			reason: "5% of 32Gi is clamped to 1Gi; 5% of 8 cores is 400m.",
			spec:   map[string]any{"instanceType": "u1.2xlarge"},
			world:  worldFixture{instancetypes: []*unstructuredT{large}},
			has:    "      kubeReserved:\n        cpu: 400m\n        memory: 1Gi\n",
		},
		"SizedByResources": {
			reason: "resources size the node; no instance type is read.",
			spec:   map[string]any{"resources": map[string]any{"cpu": "4", "memory": "8Gi"}},
			world:  worldFixture{instancetypes: []*unstructuredT{}},
			has:    "      kubeReserved:\n        cpu: 200m\n        memory: 409Mi\n",
		},
		"MissingInstanceTypeHolds": {
			reason: "Without the instance type nothing is composed and the pool says why.",
			spec:   map[string]any{"instanceType": "u1.2xlarge"},
			world:  worldFixture{instancetypes: []*unstructuredT{}},
			held:   true,
		},
		"EmptyKernelModulesAsWritten": {
			reason: "kernelModules: [] in the composite opts a GPU pool out of the NVIDIA modules.",
			spec:   map[string]any{"gpus": []any{map[string]any{"name": "nvidia.com/GH200"}}, "kernelModules": []any{}},
			has:    "gpu: \"on\"",
			hasNot: "kernel:",
		},
		"ExistingPoolKeepsEverythingWhileItsInstanceTypeIsGone": {
			reason:   "A pool whose instance type disappears keeps every resource it composed.",
			spec:     map[string]any{},
			world:    worldFixture{instancetypes: []*unstructuredT{}},
			existing: true,
			held:     true,
		},
		"InstanceTypeTooSmallForTheOverrides": {
			reason: "The chart's guard, against the instance type's memory.",
			spec:   map[string]any{"kubelet": map[string]any{"systemReservedMemory": "2Gi", "kubeReservedMemory": "2Gi"}},
			fatal:  "reserves too much memory",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var obs map[resource.Name]resource.ObservedComposed
			if tc.existing {
				first := composetest.Run(Mode{}, request(t, nodePoolXR(tc.spec), worldFixture{}, nil)).Output
				if first.Fatal != nil || len(first.Resources) == 0 {
					t.Fatalf("the first render composed nothing: %v", first.Fatal)
				}
				obs = observedFrom(first.Resources, nil)
			}
			out := composetest.Run(Mode{}, request(t, nodePoolXR(tc.spec), tc.world, obs)).Output
			if tc.fatal != "" {
				if out.Fatal == nil || !strings.Contains(out.Fatal.Error(), tc.fatal) {
					t.Fatalf("%s\nwant a fatal containing %q, got %v", tc.reason, tc.fatal, out.Fatal)
				}
				return
			}
			if out.Fatal != nil {
				t.Fatalf("%s\nunexpected fatal: %v", tc.reason, out.Fatal)
			}
			if tc.held {
				if len(out.Resources) != len(obs) {
					t.Errorf("%s\nheld pool composed %d resources, observed %d", tc.reason, len(out.Resources), len(obs))
				}
				for n := range obs {
					if _, kept := out.Resources[n]; !kept {
						t.Errorf("%s\nheld pool dropped %s", tc.reason, n)
					}
				}
				gate, _ := out.Status["gate"].(*v1alpha1.Gate)
				if gate == nil || gate.Reason != decide.ReasonInstanceTypeMissing {
					t.Errorf("%s\nwant gate reason %s, got %+v", tc.reason, decide.ReasonInstanceTypeMissing, gate)
				}
				return
			}
			var patches string
			for _, d := range out.Resources {
				if d.Resource.GetKind() == talosconfig.KindTalosConfigTemplate {
					ps, _, _ := unstructured.NestedStringSlice(d.Resource.Object, "spec", "template", "spec", "strategicPatches")
					patches = strings.Join(ps, "---\n")
				}
			}
			if !strings.Contains(patches, tc.has) {
				t.Errorf("%s\nthe patches lack\n%s\ngot:\n%s", tc.reason, tc.has, patches)
			}
			if tc.hasNot != "" && strings.Contains(patches, tc.hasNot) {
				t.Errorf("%s\nthe patches carry %q:\n%s", tc.reason, tc.hasNot, patches)
			}
		})
	}
}
