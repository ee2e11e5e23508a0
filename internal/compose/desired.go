package compose

import (
	"encoding/json"

	"github.com/pkg/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8sjson "k8s.io/apimachinery/pkg/util/json"

	"github.com/crossplane/function-sdk-go/resource/composed"
)

// Option shapes what the serialiser leaves out of an object besides its
// status. Without options every value the type encodes is kept.
type Option func(*shape)

type shape struct {
	dropEmpty bool
	keepEmpty map[string]bool
	dropZero  [][]string
}

// DropEmpty removes empty objects and lists, depth first, so that a parent
// left empty by its children goes too. encoding/json keeps an empty struct
// tagged omitempty as {}, and server-side apply reads {} as an opinion about
// the field. A mode asks for this only when nothing it renders needs an empty
// object or list to mean something: an XNodePool's osImage {builtin: {}} and
// a ClusterRole's rules [] do.
func DropEmpty() Option { return func(s *shape) { s.dropEmpty = true } }

// KeepEmpty exempts, from DropEmpty, an empty object held under one of keys,
// wherever it is: where the object's presence is the meaning, as KubeVirt's
// interface binding bridge: {} and pod network pod: {} are. Its parents are
// then not empty either.
func KeepEmpty(keys ...string) Option {
	return func(s *shape) {
		if s.keepEmpty == nil {
			s.keepEmpty = map[string]bool{}
		}
		for _, k := range keys {
			s.keepEmpty[k] = true
		}
	}
}

// DropZero removes the field at path when it holds its type's zero value.
// Some API types serialise a field without omitempty, and a desired false or
// "" would claim an opinion the function does not have.
func DropZero(path ...string) Option {
	return func(s *shape) { s.dropZero = append(s.dropZero, path) }
}

// Canonical is v as it is applied: encoded with encoding/json (omitempty
// drops false, zero and nil; omitzero drops zero timestamps), decoded into
// plain maps, lists, strings, bools, and int64s (float64s for fractions) as
// unstructured objects hold them, then shaped by opts.
// encoding/json writes map keys sorted and struct fields in declaration
// order, so the same v always gives the same map, and the map marshalled
// again the same bytes: a content hash covers exactly what is applied.
func Canonical(v any, opts ...Option) (map[string]any, error) {
	var s shape
	for _, o := range opts {
		o(&s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, errors.Wrapf(err, "cannot encode %T", v)
	}
	m := map[string]any{}
	if err := k8sjson.Unmarshal(b, &m); err != nil {
		return nil, errors.Wrapf(err, "cannot decode %T as an object", v)
	}
	for _, path := range s.dropZero {
		dropZero(m, path)
	}
	if s.dropEmpty {
		prune(m, s.keepEmpty)
	}
	return m, nil
}

// ToDesired is the one serialiser of typed objects into desired composed
// resources, for every mode: Canonical, without status (a desired object is
// intent; status is what its controllers report). apiVersion and kind are
// the object's own, else composed.Scheme's for its Go type.
func ToDesired(obj any, opts ...Option) (*composed.Unstructured, error) {
	m, err := Canonical(obj, opts...)
	if err != nil {
		return nil, err
	}
	delete(m, "status")
	c := &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: m}}
	if c.GetAPIVersion() == "" || c.GetKind() == "" {
		ro, ok := obj.(runtime.Object)
		if !ok {
			return nil, errors.Errorf("%T has no apiVersion and kind", obj)
		}
		gvks, _, err := composed.Scheme.ObjectKinds(ro)
		if err != nil || len(gvks) == 0 {
			return nil, errors.Errorf("%T has no apiVersion and kind, and its type is not registered", obj)
		}
		c.SetAPIVersion(gvks[0].GroupVersion().String())
		c.SetKind(gvks[0].Kind)
	}
	return c, nil
}

// dropZero removes the field at path from m when it holds a zero bool,
// string or number.
func dropZero(m map[string]any, path []string) {
	v, found, err := unstructured.NestedFieldNoCopy(m, path...)
	if err != nil || !found {
		return
	}
	switch x := v.(type) {
	case bool:
		if x {
			return
		}
	case string:
		if x != "" {
			return
		}
	case int64:
		if x != 0 {
			return
		}
	case float64:
		if x != 0 {
			return
		}
	default:
		return
	}
	unstructured.RemoveNestedField(m, path...)
}

// prune removes empty objects and lists, depth first, and reports whether v
// itself is left empty.
func prune(v any, keep map[string]bool) bool {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			if _, isObject := c.(map[string]any); isObject && keep[k] {
				prune(c, keep)
				continue
			}
			if prune(c, keep) {
				delete(t, k)
			}
		}
		return len(t) == 0
	case []any:
		for _, c := range t {
			prune(c, keep)
		}
		return len(t) == 0
	}
	return false
}
