// Package required builds a mode's required-resource selectors and reads
// back what Crossplane fetched, telling "not fetched yet" (Crossplane
// fetches only after the first response) from "fetched, not found".
package required

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

// Selectors maps a requirement name to its selector.
type Selectors map[string]*fnv1.ResourceSelector

// ByName selects one object by name, in namespace unless it is empty.
func ByName(apiVersion, kind, namespace, name string) *fnv1.ResourceSelector {
	s := &fnv1.ResourceSelector{
		ApiVersion: apiVersion,
		Kind:       kind,
		Match:      &fnv1.ResourceSelector_MatchName{MatchName: name},
	}
	if namespace != "" {
		s.Namespace = &namespace
	}
	return s
}

// ByLabels selects objects by labels, in namespace unless it is empty (every
// namespace, or a cluster-scoped kind).
func ByLabels(apiVersion, kind, namespace string, labels map[string]string) *fnv1.ResourceSelector {
	s := &fnv1.ResourceSelector{
		ApiVersion: apiVersion,
		Kind:       kind,
		Match:      &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: labels}},
	}
	if namespace != "" {
		s.Namespace = &namespace
	}
	return s
}

// Resolved is what Crossplane returned for each selector. A name that maps to
// an empty slice was fetched and matched nothing.
type Resolved map[string][]*unstructured.Unstructured

// Raw is what Crossplane returned for the selectors a mode reads straight
// from the wire (observed.WorkerDataVolume), unconverted.
type Raw map[string][]*structpb.Struct

// Fetch reads every selector's result from the request, false while any is
// unresolved: the caller then returns its requirements and decides nothing.
func Fetch(req *fnv1.RunFunctionRequest, sel Selectors, raw map[string]bool) (Resolved, Raw, bool, error) {
	out, wire := make(Resolved, len(sel)), Raw{}
	complete := true
	got := req.GetRequiredResources()
	for name := range sel {
		rs, ok := got[name]
		if !ok {
			complete = false
			continue
		}
		items := rs.GetItems()
		if raw[name] {
			structs := make([]*structpb.Struct, 0, len(items))
			for _, it := range items {
				if s := it.GetResource(); s != nil {
					structs = append(structs, s)
				}
			}
			wire[name] = structs
			continue
		}
		objs := make([]*unstructured.Unstructured, 0, len(items))
		for _, it := range items {
			if it.GetResource() == nil {
				continue
			}
			u := &unstructured.Unstructured{}
			if err := resource.AsObject(it.GetResource(), u); err != nil {
				return nil, nil, false, fmt.Errorf("cannot read required resources %q: %w", name, err)
			}
			objs = append(objs, u)
		}
		out[name] = objs
	}
	return out, wire, complete, nil
}

// Requirements wraps selectors for a response; protobuf serialises maps in
// key order, so equal selectors give identical bytes.
func Requirements(sel Selectors) *fnv1.Requirements {
	if len(sel) == 0 {
		return nil
	}
	return &fnv1.Requirements{Resources: sel}
}

// Peek is what the request already carries under a requirement's name,
// from an earlier round of the same reconcile: nil before Crossplane has
// answered it. A call whose requirements depend on it asks anew once it
// has (a chained requirement decided in Prepare).
func Peek(req *fnv1.RunFunctionRequest, name string) []*unstructured.Unstructured {
	rs, ok := req.GetRequiredResources()[name]
	if !ok {
		return nil
	}
	out := make([]*unstructured.Unstructured, 0, len(rs.GetItems()))
	for _, it := range rs.GetItems() {
		u := &unstructured.Unstructured{}
		if it.GetResource() == nil || resource.AsObject(it.GetResource(), u) != nil {
			continue
		}
		out = append(out, u)
	}
	return out
}
