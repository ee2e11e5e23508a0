package nodepool

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cozystack/function-worker-image/internal/compose/composetest"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/emit"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
)

// madeElsewhere is a pool another tool made: what this pool renders, under
// other template names, with the tool's own labels on the objects and
// inside the VM template, and none of this pool's annotations. mutate
// changes each object as that tool would have rendered it differently.
func madeElsewhere(t *testing.T, spec map[string]any, w worldFixture, mutate func(*unstructured.Unstructured)) []*unstructured.Unstructured {
	t.Helper()
	out := composetest.Run(Mode{}, request(t, nodePoolXR(spec), w, nil)).Output
	if out.Fatal != nil {
		t.Fatal(out.Fatal)
	}
	helm := map[string]string{"app.kubernetes.io/managed-by": "Helm"}
	var objs []*unstructured.Unstructured
	names := map[string]string{}
	for n, d := range out.Resources {
		u := &unstructured.Unstructured{Object: d.Resource.DeepCopy().Object}
		switch {
		case strings.HasPrefix(string(n), read.PrefixMachineTemplate), strings.HasPrefix(string(n), read.PrefixBootstrapTemplate):
			names[u.GetName()] = u.GetName()[:len(u.GetName())-4] + "chrt"
			u.SetName(names[u.GetName()])
		case n != read.ResourceMachineDeployment:
			continue
		}
		u.SetLabels(helm)
		u.SetAnnotations(map[string]string{"meta.helm.sh/release-name": "demo-md0"})
		if u.GetKind() == pool.KindKubevirtMachineTmpl {
			_ = unstructured.SetNestedStringMap(u.Object, map[string]string{"apps.cozystack.io/application.kind": "Kubernetes"},
				"spec", "template", "spec", "virtualMachineTemplate", "spec", "template", "metadata", "labels")
		}
		_ = unstructured.SetNestedField(u.Object, map[string]any{"replicas": int64(1), "readyReplicas": int64(1)}, "status")
		objs = append(objs, u)
	}
	for _, u := range objs {
		if u.GetKind() == "MachineDeployment" {
			for _, path := range [][]string{{"spec", "template", "spec", "infrastructureRef", "name"}, {"spec", "template", "spec", "bootstrap", "configRef", "name"}} {
				was, _, _ := unstructured.NestedString(u.Object, path...)
				_ = unstructured.SetNestedField(u.Object, names[was], path...)
			}
		}
		if mutate != nil {
			mutate(u)
		}
	}
	return objs
}

// TestAnExistingPoolIsAdoptedWithoutARoll: a MachineDeployment of the pool's
// name that another tool made keeps running on its templates when they are
// equivalent to what the pool renders; otherwise nothing is composed and the
// pool says what differs, until its owner accepts the roll.
func TestAnExistingPoolIsAdoptedWithoutARoll(t *testing.T) {
	spec := map[string]any{"osImage": builtin()}
	cases := map[string]struct {
		reason string
		spec   map[string]any
		mutate func(*unstructured.Unstructured)
		// adopted: the deployment is composed on the existing templates;
		// held: nothing is composed; else this pool's templates are.
		adopted, held bool
		hold          string
		mentions      []string
	}{
		"Equivalent": {
			reason: "The tool's labels and annotations, on the objects and on the VMs it makes, change no worker: the pool adopts the running templates.",
			spec:   spec, adopted: true,
		},
		"DiskSizeDiffers": {
			reason: "A worker disk of another size is another worker: adopting would roll, so the pool waits for its owner.",
			spec:   spec, held: true, hold: decide.ReasonAdoptionWouldRoll,
			mutate: func(u *unstructured.Unstructured) {
				if u.GetKind() == pool.KindKubevirtMachineTmpl {
					dvts, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates")
					_ = unstructured.SetNestedField(dvts[0].(map[string]any), "30Gi", "spec", "storage", "resources", "requests", "storage")
					_ = unstructured.SetNestedSlice(u.Object, dvts, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates")
				}
			},
			mentions: []string{"dataVolumeTemplates[0].spec.storage.resources.requests.storage", `"30Gi"`, `"20Gi"`, "spec.templateRevision to 1"},
		},
		"DiskSizeDiffersAndTheRollIsAccepted": {
			reason: "templateRevision accepts the roll onto what this pool renders.",
			spec:   map[string]any{"osImage": builtin(), "templateRevision": int64(1)},
			mutate: func(u *unstructured.Unstructured) {
				if u.GetKind() == pool.KindKubevirtMachineTmpl {
					_ = unstructured.SetNestedField(u.Object, "other", "spec", "template", "spec", "virtualMachineTemplate", "spec", "runStrategy")
				}
			},
		},
		"VersionDiffers": {
			reason: "Cluster API rolls on the Machines' version too.",
			spec:   spec, held: true, hold: decide.ReasonAdoptionWouldRoll,
			mutate: func(u *unstructured.Unstructured) {
				if u.GetKind() == "MachineDeployment" {
					_ = unstructured.SetNestedField(u.Object, "v1.35.0", "spec", "template", "spec", "version")
				}
			},
			mentions: []string{`spec.template.spec.version: "v1.35.0"`},
		},
		"OwnedByAnotherController": {
			reason: "A MachineDeployment another controller owns is not this pool's to compose.",
			spec:   spec, held: true, hold: decide.ReasonDeploymentOwnedElsewhere,
			mutate: func(u *unstructured.Unstructured) {
				if u.GetKind() == "MachineDeployment" {
					yes := true
					u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "x/v1", Kind: "X", Name: "other", UID: types.UID("other-uid"), Controller: &yes}})
				}
			},
			mentions: []string{"other-uid"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := succeeded
			w.existing = madeElsewhere(t, spec, succeeded, tc.mutate)
			out := composetest.Run(Mode{}, request(t, nodePoolXR(tc.spec), w, nil)).Output
			if out.Fatal != nil {
				t.Fatalf("%s\nunexpected fatal: %v", tc.reason, out.Fatal)
			}
			wi := conditionOf(out, emit.ConditionWorkerImageReady)
			if tc.held {
				if wi.Reason != tc.hold {
					t.Fatalf("%s\nWorkerImageReady reason %s, want %s: %s", tc.reason, wi.Reason, tc.hold, wi.Message)
				}
				if len(out.Resources) != 0 {
					t.Errorf("%s\na held adoption composes nothing, got %v", tc.reason, summarize(out).Resources)
				}
				for _, m := range tc.mentions {
					if !strings.Contains(wi.Message, m) {
						t.Errorf("%s\nmessage does not mention %q: %s", tc.reason, m, wi.Message)
					}
				}
				return
			}
			kmt, tct := deployedOn(t, out)
			onExisting := strings.HasSuffix(kmt, "chrt") && strings.HasSuffix(tct, "chrt")
			if onExisting != tc.adopted {
				t.Fatalf("%s\ndeployment on %s, %s; adopted %t, want %t", tc.reason, kmt, tct, onExisting, tc.adopted)
			}
			if !tc.adopted {
				return
			}
			if got := renderingStatus(out); got != "False/"+decide.ReasonAdopted {
				t.Errorf("%s\nRenderingCurrent = %s, want False/%s", tc.reason, got, decide.ReasonAdopted)
			}
			for _, e := range w.existing {
				n := read.ResourceMachineDeployment
				switch e.GetKind() {
				case pool.KindKubevirtMachineTmpl:
					n = read.MachineTemplateResource(e.GetName())
				case "TalosConfigTemplate":
					n = read.BootstrapTemplateResource(e.GetName())
				}
				d, ok := out.Resources[n]
				if !ok {
					t.Fatalf("%s\n%s %s not composed: %v", tc.reason, e.GetKind(), e.GetName(), summarize(out).Resources)
				}
				if e.GetKind() != "MachineDeployment" {
					if diff := decide.TemplateDiffs(e.Object, d.Resource.Object, func(m map[string]any) map[string]any { return m }); len(diff) > 0 {
						t.Errorf("%s\nadopted %s changed: %v", tc.reason, e.GetName(), diff)
					}
				}
				if e.GetKind() != "MachineDeployment" && (d.Resource.GetAnnotations()["meta.helm.sh/release-name"] == "" || d.Resource.GetAnnotations()[pool.AnnAsk] == "") {
					t.Errorf("%s\nadopted %s keeps the tool's annotations and gets the pool's request: %v", tc.reason, e.GetName(), d.Resource.GetAnnotations())
				}
			}
		})
	}
}
