// Package required builds the required-resource selectors of a mode and reads
// back what Crossplane fetched for them. It tells "not fetched yet" from
// "fetched, not found": a mode must never act on a resource it has not been
// given yet, because Crossplane only fetches after the first response.
package required

import (
	"github.com/pkg/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
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

// Fetch reads every selector's result from the request. It returns false when
// any selector has not been resolved yet: the caller must then return its
// requirements and decide nothing.
func Fetch(req *fnv1.RunFunctionRequest, sel Selectors) (Resolved, bool, error) {
	out := make(Resolved, len(sel))
	complete := true
	for name := range sel {
		items, ok, err := request.GetRequiredResource(req, name)
		if err != nil {
			return nil, false, errors.Wrapf(err, "cannot read required resources %q", name)
		}
		if !ok {
			complete = false
			continue
		}
		objs := make([]*unstructured.Unstructured, 0, len(items))
		for _, it := range items {
			if it.Resource != nil {
				objs = append(objs, it.Resource)
			}
		}
		out[name] = objs
	}
	return out, complete, nil
}

// Requirements wraps selectors for a response. Protobuf maps are serialised in
// key order, so equal selectors give byte-identical requirements.
func Requirements(sel Selectors) *fnv1.Requirements {
	if len(sel) == 0 {
		return nil
	}
	return &fnv1.Requirements{Resources: sel}
}
