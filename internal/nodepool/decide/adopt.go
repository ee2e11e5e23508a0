package decide

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/resource/composite"

	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/nodepool/render"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// decideAdoption keeps the running templates of an existing pool that are
// equivalent to what this one renders, or holds the pool while they are not
// and its owner has not accepted the roll. It runs before the gates: an
// adopted template is running, so there is nothing to wait for.
func decideAdoption(pl *Plan, e *read.Existing, xr *composite.Unstructured, revision int64) (*Hold, error) {
	if e == nil {
		return nil, nil
	}
	if owner := controllerOf(e.Deployment); owner != "" && owner != string(xr.GetUID()) {
		return &Hold{Reason: ReasonDeploymentOwnedElsewhere, Message: msgDeploymentOwnedElsewhere(pl.Pool, e, owner)}, nil
	}
	diffs := adoptionDiffs(*pl, e)
	if len(diffs) > 0 {
		if revision > 0 {
			// The owner accepted the roll onto what this pool renders.
			return nil, nil
		}
		return &Hold{Reason: ReasonAdoptionWouldRoll, Message: msgAdoptionWouldRoll(pl.Pool, e, diffs)}, nil
	}
	// An object has one controller (the API server refuses a second), and
	// the chart's TalosConfigTemplate has the KamajiControlPlane for one.
	for _, u := range []*unstructured.Unstructured{e.Machine, e.Bootstrap} {
		if o := controllerRefOf(u); o != nil && string(o.UID) != string(xr.GetUID()) {
			return &Hold{Reason: ReasonTemplateOwnedElsewhere, Message: msgTemplateOwnedElsewhere(pl.Pool, u, o)}, nil
		}
	}
	renderedMachine, renderedBootstrap := pl.MachineTemplate.Name, pl.BootstrapTemplate.Name
	machine, err := render.MachineTemplateFrom(adopted(e.Machine, pl.MachineTemplate.Desired))
	if err != nil {
		return nil, pool.Refused(pl.Pool.Ref(), err)
	}
	bootstrap, err := render.BootstrapTemplateFrom(adopted(e.Bootstrap, pl.BootstrapTemplate.Desired))
	if err != nil {
		return nil, pool.Refused(pl.Pool.Ref(), err)
	}
	pl.MachineTemplate, pl.BootstrapTemplate = machine, bootstrap
	pl.Adopted = []KeptTemplate{
		{Kind: pool.KindKubevirtMachineTmpl, Running: e.MachineName, Rendered: renderedMachine},
		{Kind: talosconfig.KindTalosConfigTemplate, Running: e.BootstrapName, Rendered: renderedBootstrap},
	}
	return nil, nil
}

// controllerOf is the uid of an object's controller, "" when it has none.
func controllerOf(u *unstructured.Unstructured) string {
	if o := controllerRefOf(u); o != nil {
		return string(o.UID)
	}
	return ""
}

func controllerRefOf(u *unstructured.Unstructured) *metav1.OwnerReference {
	for _, o := range u.GetOwnerReferences() {
		if o.Controller != nil && *o.Controller {
			return &o
		}
	}
	return nil
}

// adopted is an existing template as this pool composes it: its spec as it
// is (a template is immutable, and the running workers were made from it),
// its metadata with this pool's labels and annotations added to what is
// there (Helm's, say), so that it is found and retained as the pool's own.
func adopted(u *unstructured.Unstructured, rendered *composed.Unstructured) *composed.Unstructured {
	out := compose.AsObserved(&composed.Unstructured{Unstructured: *u.DeepCopy()})
	l := maps.Clone(out.GetLabels())
	if l == nil {
		l = map[string]string{}
	}
	maps.Copy(l, rendered.GetLabels())
	out.SetLabels(l)
	a := maps.Clone(out.GetAnnotations())
	if a == nil {
		a = map[string]string{}
	}
	maps.Copy(a, rendered.GetAnnotations())
	a[pool.AnnRendering] = "0"
	out.SetAnnotations(a)
	return out
}

// adoptionDiffs is what differs between the existing pool and what this one
// renders, as paths with both values; empty when adopting rolls nothing.
func adoptionDiffs(pl Plan, e *read.Existing) []string {
	var diffs []string
	if e.Machine == nil {
		diffs = append(diffs, fmt.Sprintf("KubevirtMachineTemplate %s, which the MachineDeployment runs on, does not exist", e.MachineName))
	} else {
		for _, d := range TemplateDiffs(e.Machine.Object, pl.MachineTemplate.Desired.Object, normalizeMachineTemplate) {
			diffs = append(diffs, "KubevirtMachineTemplate "+e.MachineName+" "+d)
		}
	}
	if e.Bootstrap == nil {
		diffs = append(diffs, fmt.Sprintf("TalosConfigTemplate %s, which the MachineDeployment runs on, does not exist", e.BootstrapName))
	} else {
		for _, d := range TemplateDiffs(e.Bootstrap.Object, pl.BootstrapTemplate.Desired.Object, normalizeBootstrapTemplate) {
			diffs = append(diffs, "TalosConfigTemplate "+e.BootstrapName+" "+d)
		}
	}
	// Cluster API also rolls on the Machines' version.
	was, _, _ := unstructured.NestedString(e.Deployment.Object, "spec", "template", "spec", "version")
	if v := pl.Shape.MachineVersion; was != v {
		diffs = append(diffs, fmt.Sprintf("MachineDeployment spec.template.spec.version: %q, this pool runs %q", was, v))
	}
	return diffs
}

// TemplateDiffs compares two templates' specs after normalize, leaf by leaf.
func TemplateDiffs(existing, rendered map[string]any, normalize func(map[string]any) map[string]any) []string {
	a, b := normalize(specOf(existing)), normalize(specOf(rendered))
	var out []string
	diffValues("spec", a, b, &out)
	return out
}

func specOf(obj map[string]any) map[string]any {
	s, _ := obj["spec"].(map[string]any)
	return asJSON(s)
}

// asJSON is v in its JSON form (maps, slices, float64, string, bool), so
// that values from YAML and from Go compare alike.
func asJSON(v map[string]any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	out := map[string]any{}
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

// maxDiffs bounds how many differences a message lists.
const maxDiffs = 8

// diffValues appends "path: existing X, rendered Y" for every leaf where a
// and b differ.
func diffValues(path string, a, b any, out *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		for _, k := range slices.Sorted(maps.Keys(mergedKeys(am, bm))) {
			diffValues(path+"."+k, am[k], bm[k], out)
		}
		return
	}
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok && len(as) == len(bs) {
		for i := range as {
			diffValues(fmt.Sprintf("%s[%d]", path, i), as[i], bs[i], out)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*out = append(*out, fmt.Sprintf("%s: is %s, this pool renders %s", path, brief(a), brief(b)))
	}
}

func mergedKeys(a, b map[string]any) map[string]bool {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return keys
}

// brief is a value as a message quotes it, cut to a line.
func brief(v any) string {
	if v == nil {
		return "absent"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// normalizeMachineTemplate drops from a KubevirtMachineTemplate spec what
// labels objects without changing the VM a worker runs: the labels and
// annotations of the VM, VMI and DataVolume templates. The running workers
// keep theirs; only new workers would get this pool's.
func normalizeMachineTemplate(spec map[string]any) map[string]any {
	vmt, _, _ := unstructured.NestedMap(spec, "template", "spec", "virtualMachineTemplate")
	if vmt == nil {
		return spec
	}
	dropLabels(vmt)
	if vm, ok := vmt["spec"].(map[string]any); ok {
		if t, ok := vm["template"].(map[string]any); ok {
			dropLabels(t)
		}
		if dvts, ok := vm["dataVolumeTemplates"].([]any); ok {
			for _, d := range dvts {
				if m, ok := d.(map[string]any); ok {
					dropLabels(m)
				}
			}
		}
	}
	_ = unstructured.SetNestedMap(spec, vmt, "template", "spec", "virtualMachineTemplate")
	return spec
}

func dropLabels(obj map[string]any) {
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		return
	}
	// The namespace of a template's object is the Machine's: CAPK creates
	// the VM in the KubevirtMachine's namespace whatever it says.
	delete(meta, "labels")
	delete(meta, "annotations")
	delete(meta, "namespace")
	if len(meta) == 0 {
		delete(obj, "metadata")
	}
}

// normalizeBootstrapTemplate compares a TalosConfigTemplate by the config
// it makes: its data (the complete config of a Join or chart pool) read as
// YAML documents, so that comments, key order and quoting do not count,
// with its strategic patches applied in order, as CABPT applies them to the
// config it generates or is given (the documents that carry a kind, such as
// RegistryMirrorConfig, are documents of their own).
func normalizeBootstrapTemplate(spec map[string]any) map[string]any {
	t, _, _ := unstructured.NestedMap(spec, "template", "spec")
	if t == nil {
		return spec
	}
	var machine map[string]any
	var docs []any
	add := func(text string) {
		for _, d := range strings.Split(text, "\n---") {
			m := map[string]any{}
			if err := yaml.Unmarshal([]byte(d), &m); err != nil {
				// Unreadable text is compared as text.
				docs = append(docs, d)
				continue
			}
			switch {
			case len(m) == 0:
			case m["kind"] != nil:
				docs = append(docs, asJSON(m))
			case machine == nil:
				machine = asJSON(m)
			default:
				mergeInto(machine, asJSON(m))
			}
		}
	}
	if data, ok := t["data"].(string); ok {
		add(data)
	}
	patches, _, _ := unstructured.NestedStringSlice(t, "strategicPatches")
	for _, p := range patches {
		add(p)
	}
	delete(t, "data")
	delete(t, "strategicPatches")
	t["config"] = map[string]any{"machineConfig": machine, "documents": docs}
	_ = unstructured.SetNestedMap(spec, t, "template", "spec")
	return spec
}

// mergeInto merges src into dst: maps key by key, a scalar replaced. A list
// on both sides is kept as the pair: Talos appends to some lists and
// replaces others, and a pair is equal only to the same pair, so no two
// different configs compare equal.
func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		switch sv := v.(type) {
		case map[string]any:
			if dm, ok := dst[k].(map[string]any); ok {
				mergeInto(dm, sv)
				continue
			}
		case []any:
			if dl, ok := dst[k].([]any); ok {
				dst[k] = map[string]any{"listMerge": map[string]any{"base": dl, "patch": sv}}
				continue
			}
		}
		dst[k] = v
	}
}
