package compose

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/observed"
)

// Owns says whether the mode composes a composition-resource-name, and as
// which apiVersion and kind. Other names belong to other pipeline steps and
// pass untouched.
type Owns func(resource.Name) (apiVersion, kind string, ok bool)

// Observed is the part of the observed composed resources a mode owns, and
// the one place that decides which it keeps as they are (Keep).
type Observed struct {
	// Resources are the owned observed resources, by name.
	Resources map[resource.Name]*composed.Unstructured

	kinds      map[resource.Name][2]string
	unreadable map[resource.Name]error
}

// ReadObserved picks out the resources the mode owns; one of another kind
// than the mode composes under its name is unreadable.
func ReadObserved(obs map[resource.Name]resource.ObservedComposed, owns Owns) Observed {
	o := Observed{
		Resources:  map[resource.Name]*composed.Unstructured{},
		kinds:      map[resource.Name][2]string{},
		unreadable: map[resource.Name]error{},
	}
	for n, oc := range obs {
		apiVersion, kind, ok := owns(n)
		if !ok || oc.Resource == nil {
			continue
		}
		o.Resources[n] = oc.Resource
		o.kinds[n] = [2]string{apiVersion, kind}
		if u := oc.Resource; u.GetAPIVersion() != apiVersion || u.GetKind() != kind {
			o.unreadable[n] = fmt.Errorf("it is a %s %s, not the %s %s this function composes there", u.GetAPIVersion(), u.GetKind(), apiVersion, kind)
		}
	}
	return o
}

// Read converts the owned resource name into into, returning false when it
// is not observed or cannot be read (and then marked unreadable).
func (o Observed) Read(name resource.Name, into runtime.Object) bool {
	u, ok := o.Resources[name]
	if !ok || o.unreadable[name] != nil {
		return false
	}
	k := o.kinds[name]
	if err := observed.Into(&u.Unstructured, k[0], k[1], into); err != nil {
		o.unreadable[name] = err
		return false
	}
	return true
}

// MarkUnreadable records that the mode could not read name for why; a name
// not observed is ignored.
func (o Observed) MarkUnreadable(name resource.Name, why error) {
	if _, ok := o.Resources[name]; ok && o.unreadable[name] == nil {
		o.unreadable[name] = why
	}
}

// Unreadable reports whether name is observed and cannot be read.
func (o Observed) Unreadable(name resource.Name) bool { return o.unreadable[name] != nil }

// Problem is why name cannot be read; nil when it can, or is not observed.
func (o Observed) Problem(name resource.Name) error { return o.unreadable[name] }

// Names are the owned observed names, sorted.
func (o Observed) Names() []resource.Name {
	out := make([]resource.Name, 0, len(o.Resources))
	for n := range o.Resources {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Problems names each unreadable resource and why, sorted, for
// ObservedStateReadable.
func (o Observed) Problems() []string {
	var out []string
	for _, n := range o.Names() {
		err := o.unreadable[n]
		if err == nil {
			continue
		}
		u := o.Resources[n]
		out = append(out, fmt.Sprintf("composed resource %s (%s %s): %v", n, u.GetKind(), observed.Ref(&u.Unstructured), err))
	}
	return out
}

// Retired says whether a mode retires an owned, readable resource it left
// out of the desired state (a golden nothing pins, a template nothing
// references, a pool that left the spec).
type Retired func(resource.Name) bool

// RetireNone is the rule of a mode that holds everything back.
func RetireNone(resource.Name) bool { return false }

// RetireAll is the rule of a mode that has decided every readable resource.
func RetireAll(resource.Name) bool { return true }

// Keep re-emits as observed (AsObserved, with ready's readiness) every
// owned resource into does not hold, unless the mode retires it. Crossplane
// deletes a key left out, so this is where a gate, a hold or an unreadable
// object becomes "leave it" rather than "delete it"; an unreadable object is
// always kept, as nobody can tell what deleting it would delete.
func (o Observed) Keep(into map[resource.Name]*resource.DesiredComposed, retired Retired, ready func(resource.Name) resource.Ready) {
	for _, n := range o.Names() {
		if _, decided := into[n]; decided {
			continue
		}
		if !o.Unreadable(n) && retired(n) {
			continue
		}
		into[n] = Kept(o.Resources[n], ready(n))
	}
}

// Kept is an observed resource re-emitted as it is.
func Kept(u *composed.Unstructured, ready resource.Ready) *resource.DesiredComposed {
	return &resource.DesiredComposed{Resource: AsObserved(u), Ready: ready}
}

// keptMetadata are the metadata fields a kept resource carries. The rest
// belongs to the API server or other controllers; re-emitting it would
// claim it, or fail the apply on a stale resourceVersion.
var keptMetadata = []string{"name", "generateName", "namespace", "labels", "annotations"}

// AsObserved is an observed resource as a desired one: every top-level
// field but status, and of its metadata only keptMetadata.
// Only what is kept is copied: copying the whole object first copied its
// status and managedFields, most of an observed object, to drop them.
func AsObserved(u *composed.Unstructured) *composed.Unstructured {
	obj := make(map[string]any, len(u.Object))
	for k, v := range u.Object {
		if k == "status" {
			continue
		}
		if meta, ok := v.(map[string]any); ok && k == "metadata" {
			kept := make(map[string]any, len(keptMetadata))
			for _, f := range keptMetadata {
				if mv, ok := meta[f]; ok {
					kept[f] = runtime.DeepCopyJSONValue(mv)
				}
			}
			dropKey(kept, "labels", labels.InUse)
			dropKey(kept, "annotations", labels.AnnDeletionAttempt)
			obj[k] = kept
			continue
		}
		obj[k] = runtime.DeepCopyJSONValue(v)
	}
	return &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: obj}}
}

// dropKey removes key from the metadata map field, and the field when left
// empty. Crossplane's usage controller and webhook own the in-use label and
// deletion-attempt annotation (v2.2.0 internal/controller/protection/usage/
// reconciler.go, internal/webhook/protection/usage/handler.go); re-applying
// them would undo the controller's removal of the label.
func dropKey(meta map[string]any, field, key string) {
	m, ok := meta[field].(map[string]any)
	if !ok {
		return
	}
	if _, ok := m[key]; !ok {
		return
	}
	c := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			c[k] = v
		}
	}
	if len(c) == 0 {
		delete(meta, field)
		return
	}
	meta[field] = c
}
