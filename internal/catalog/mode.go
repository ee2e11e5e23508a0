package catalog

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	fresource "github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/cdistate"
	"github.com/cozystack/function-worker-image/internal/clonerbac"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/decode"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/observed"
	"github.com/cozystack/function-worker-image/internal/required"
	"github.com/cozystack/function-worker-image/internal/rules"
)

// pinsKeyPrefix names the requirement that finds a golden's pinning templates.
const pinsKeyPrefix = "pins-"

// Mode is the catalog mode.
type Mode struct{}

// planned is one golden and everything decided about it.
type planned struct {
	Golden
	// Live is the observed DataVolume, nil before it exists.
	Live *cdiv1.DataVolume
	// Raw is an observed golden the function could not read; it is kept as is.
	Raw      *unstructured.Unstructured
	PinnedBy []string
	Retiring bool
}

// decodeSpec reads the catalog's spec at the edge; a value of the wrong
// type is named by its path, such as spec.images[1].storage.
func decodeSpec(r compose.Request) (v1alpha1.WorkerImageCatalogSpec, error) {
	spec := v1alpha1.WorkerImageCatalogSpec{}
	if errs := decode.Into(r.Composite.Object["spec"], field.NewPath("spec"), &spec); len(errs) > 0 {
		return spec, fmt.Errorf("XWorkerImageCatalog %q: %s", r.Composite.GetName(), rules.Message(errs))
	}
	return spec, nil
}

// Requirements asks, for every golden the catalog lists or still composes,
// for the templates anywhere in the cluster that carry its label. They decide
// retention and who may clone.
func (Mode) Requirements(r compose.Request) (required.Selectors, error) {
	spec, err := decodeSpec(r)
	if err != nil {
		return nil, err
	}
	names := map[string]string{} // golden name -> namespace
	if goldens, err := resolveGoldens(r.Composite.GetName(), spec, r.Config); err == nil {
		for _, g := range goldens {
			names[g.Name] = g.Namespace
		}
	}
	// Observed goldens are named by their keys; reading their namespace off the
	// unstructured object avoids a typed conversion that Compose does anyway.
	for key, oc := range r.Observed {
		name, ok := strings.CutPrefix(string(key), goldenKeyPrefix)
		if !ok || oc.Resource == nil {
			continue
		}
		if _, ok := names[name]; !ok {
			names[name] = oc.Resource.GetNamespace()
		}
	}
	sel := required.Selectors{}
	for name, ns := range names {
		sel[pinsKeyPrefix+name] = required.ByLabels(observed.InfraAPIVersion, observed.KindKubevirtMachineTemplate, "", map[string]string{labels.Golden: labels.GoldenHash(ns, name)})
	}
	return sel, nil
}

// Compose validates the catalog, refuses drift, and composes each golden,
// each retiring golden and the clone RBAC.
func (Mode) Compose(r compose.Request) compose.Output {
	xrName := r.Composite.GetName()
	spec, err := decodeSpec(r)
	if err != nil {
		return compose.Output{Fatal: err}
	}
	goldens, err := resolveGoldens(xrName, spec, r.Config)
	if err != nil {
		return compose.Output{Fatal: err}
	}
	live := readLiveGoldens(r.Observed)
	if err := detectDrift(xrName, goldens, live.ByName); err != nil {
		return compose.Output{Fatal: err}
	}

	plan := planGoldens(goldens, live, r.Required)
	ns := spec.GoldenNamespace
	if ns == "" {
		ns = r.Config.GoldenNamespace
	}
	return emit(xrName, ns, plan, r)
}

// planGoldens decides which goldens are composed: every catalog entry, and
// every golden that left the catalog while a template still pins it. A golden
// that left and is pinned by nothing is retired: it is left out, which
// deletes it.
func planGoldens(goldens []Golden, live liveGoldens, req required.Resolved) []planned {
	inCatalog := map[string]bool{}
	out := make([]planned, 0, len(goldens))
	for _, g := range goldens {
		inCatalog[g.Name] = true
		out = append(out, planned{Golden: g, Live: live.ByName[g.Name], PinnedBy: pinsFrom(req[pinsKeyPrefix+g.Name])})
	}
	for name, dv := range live.ByName {
		if inCatalog[name] {
			continue
		}
		if pins := pinsFrom(req[pinsKeyPrefix+name]); len(pins) > 0 {
			out = append(out, planned{Golden: goldenFromLive(dv), Live: dv, PinnedBy: pins, Retiring: true})
		}
	}
	for name, u := range live.Unreadable {
		if inCatalog[name] {
			continue
		}
		out = append(out, planned{Golden: Golden{Index: -1, Name: name, Namespace: u.GetNamespace()}, Raw: u, PinnedBy: pinsFrom(req[pinsKeyPrefix+name]), Retiring: true})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func emit(xrName, goldenNamespace string, plan []planned, r compose.Request) compose.Output {
	out := compose.Output{Resources: map[fresource.Name]*fresource.DesiredComposed{}}
	statuses := make([]v1alpha1.GoldenStatus, 0, len(plan))
	inProgress := false
	pinning := map[string]bool{}
	for _, p := range plan {
		for _, ref := range p.PinnedBy {
			ns, _, _ := strings.Cut(ref, "/")
			pinning[ns] = true
		}
		st := statusOf(p)
		statuses = append(statuses, st)
		if !p.Retiring && p.Raw == nil {
			// A golden not created yet is on its way too: it appears on the
			// next reconcile and starts importing.
			if s := cdistate.Of(p.Live, nil); s.InProgress() || s.Kind == cdistate.Missing {
				inProgress = true
			}
		}

		var obj *composed.Unstructured
		if p.Raw != nil {
			obj = &composed.Unstructured{Unstructured: *stripped(p.Raw)}
		} else {
			c, err := compose.FromTyped(goldenDataVolume(p.Golden), []string{"spec", "finalCheckpoint"})
			if err != nil {
				return compose.Output{Fatal: fmt.Errorf("cannot compose golden DataVolume %s/%s: %w", p.Namespace, p.Name, err)}
			}
			obj = c
		}
		ready := fresource.ReadyFalse
		if st.Ready || p.Retiring {
			ready = fresource.ReadyTrue
		}
		out.Resources[goldenKey(p.Name)] = &fresource.DesiredComposed{Resource: obj, Ready: ready}
	}

	subjects := clonerbac.AllServiceAccounts()
	if r.Config.CloneRBACScope != v1beta1.CloneRBACAllServiceAccounts {
		subjects = clonerbac.VMServiceAccounts(r.Config.VMServiceAccount, slices.Collect(maps.Keys(pinning)))
	}
	goldenNames := make([]string, 0, len(plan))
	for _, p := range plan {
		goldenNames = append(goldenNames, p.Name)
	}
	binding := clonerbac.Binding(xrName, goldenNamespace, subjects)
	for key, obj := range map[fresource.Name]runtime.Object{
		keyClusterRole: clonerbac.Role(xrName, goldenNames),
		keyRoleBinding: binding,
	} {
		c, err := compose.FromTyped(obj)
		if err != nil {
			return compose.Output{Fatal: fmt.Errorf("cannot compose %s: %w", key, err)}
		}
		ready := fresource.ReadyFalse
		if _, ok := r.Observed[key]; ok {
			ready = fresource.ReadyTrue
		}
		out.Resources[key] = &fresource.DesiredComposed{Resource: c, Ready: ready}
	}
	// A pool whose namespace is not bound yet holds its MachineDeployment
	// until it is; checking again soon confirms the binding as applied.
	if !sameSubjects(r.Observed[keyRoleBinding], binding.Subjects) {
		inProgress = true
	}

	out.Status = map[string]any{"goldens": statuses}
	out.Conditions = []compose.Condition{goldensCondition(plan), retiringCondition(plan)}
	out.Results = transitions(previousStatus(r), statuses)
	if inProgress {
		out.TTL = r.Config.InProgressTTL
	}
	return out
}

func statusOf(p planned) v1alpha1.GoldenStatus {
	st := v1alpha1.GoldenStatus{
		Name:         p.Name,
		Namespace:    p.Namespace,
		SchematicID:  p.SchematicID,
		Version:      p.Version,
		Storage:      p.StorageText,
		StorageClass: p.StorageClass,
		PinnedBy:     p.PinnedBy,
		Retiring:     p.Retiring,
	}
	switch {
	case p.Raw != nil:
		st.Phase = string(cdiv1.Unknown)
	case p.Live != nil:
		st.Phase = string(p.Live.Status.Phase)
		st.Progress = string(p.Live.Status.Progress)
		st.Ready = cdistate.Of(p.Live, nil).Ready()
	}
	return st
}

// previousStatus is what the last call reported, to tell transitions from
// steady state. An unreadable status counts as none.
func previousStatus(r compose.Request) []v1alpha1.GoldenStatus {
	var prev []v1alpha1.GoldenStatus
	if err := r.Composite.GetValueInto("status.goldens", &prev); err != nil {
		return nil
	}
	return prev
}

// sameSubjects reports whether the observed RoleBinding already carries
// exactly the subjects wanted.
func sameSubjects(observed fresource.ObservedComposed, want []rbacv1.Subject) bool {
	if observed.Resource == nil {
		return false
	}
	rb := rbacv1.RoleBinding{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(observed.Resource.Object, &rb); err != nil {
		return false
	}
	if len(rb.Subjects) == 0 && len(want) == 0 {
		return true
	}
	return slices.Equal(rb.Subjects, want)
}
