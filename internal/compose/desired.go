package compose

import (
	"encoding/json"
	"fmt"

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

// DropEmpty removes empty objects and lists, depth first. encoding/json
// keeps an empty omitempty struct as {}, which server-side apply reads as an
// opinion; a mode asks for this only when no empty value it renders means
// something (an XNodePool's osImage {builtin: {}} and a ClusterRole's rules
// [] do).
func DropEmpty() Option { return func(s *shape) { s.dropEmpty = true } }

// KeepEmpty exempts from DropEmpty an empty object under one of keys,
// anywhere, whose presence is the meaning (KubeVirt's interface bridge: {}
// and network pod: {}).
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

// DropZero removes the field at path when it holds its type's zero value:
// some API types lack omitempty, and a desired false or "" would claim an
// opinion the function does not have.
func DropZero(path ...string) Option {
	return func(s *shape) { s.dropZero = append(s.dropZero, path) }
}

// Canonical is v as it is applied: encoded with encoding/json, decoded into
// the plain values unstructured objects hold (int64s, float64s for
// fractions), then shaped by opts. encoding/json's order is fixed, so the
// same v gives the same bytes and a content hash covers exactly what is
// applied.
func Canonical(v any, opts ...Option) (map[string]any, error) {
	var s shape
	for _, o := range opts {
		o(&s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("cannot encode %T: %w", v, err)
	}
	m := map[string]any{}
	if err := k8sjson.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("cannot decode %T as an object: %w", v, err)
	}
	for _, path := range s.dropZero {
		dropZero(m, path)
	}
	if s.dropEmpty {
		prune(m, s.keepEmpty)
	}
	return m, nil
}

// ToDesired is every mode's serialiser of typed objects into desired
// composed resources: Canonical without status, with apiVersion and kind
// from the object, else composed.Scheme.
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
			return nil, fmt.Errorf("%T has no apiVersion and kind", obj)
		}
		gvks, _, err := composed.Scheme.ObjectKinds(ro)
		if err != nil || len(gvks) == 0 {
			return nil, fmt.Errorf("%T has no apiVersion and kind, and its type is not registered", obj)
		}
		c.SetAPIVersion(gvks[0].GroupVersion().String())
		c.SetKind(gvks[0].Kind)
	}
	return c, nil
}

// dropZero removes the field at path when it holds a zero bool, string or number.
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
