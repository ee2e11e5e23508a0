package required

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

func TestFetch(t *testing.T) {
	sel := Selectors{
		"golden": ByName("cdi.kubevirt.io/v1beta1", "DataVolume", "cozy-public", "g"),
		"pins":   ByLabels("infrastructure.cluster.x-k8s.io/v1alpha1", "KubevirtMachineTemplate", "", map[string]string{"a": "b"}),
	}
	dv := &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"cdi.kubevirt.io/v1beta1","kind":"DataVolume","metadata":{"name":"g","namespace":"cozy-public"}}`)}
	cases := map[string]struct {
		reason       string
		required     map[string]*fnv1.Resources
		raw          map[string]bool
		wantComplete bool
		wantNames    map[string][]string
		wantRaw      map[string][]string
	}{
		"FirstCallHasNothingFetched": {
			reason:       "Before Crossplane fetched anything the mode must decide nothing.",
			wantComplete: false,
			wantNames:    map[string][]string{},
		},
		"OneSelectorStillMissing": {
			reason:       "Every selector must be resolved, not just some.",
			required:     map[string]*fnv1.Resources{"golden": {Items: []*fnv1.Resource{dv}}},
			wantComplete: false,
			wantNames:    map[string][]string{"golden": {"g"}},
		},
		"FetchedButNotFoundIsAnEmptyResult": {
			reason:       "A resolved selector that matched nothing is known absence, not 'not yet'.",
			required:     map[string]*fnv1.Resources{"golden": {}, "pins": {}},
			wantComplete: true,
			wantNames:    map[string][]string{"golden": {}, "pins": {}},
		},
		"RawSelectorsStayOnTheWire": {
			reason:       "A selector read from the wire is returned as the request's own Structs, and not converted.",
			required:     map[string]*fnv1.Resources{"golden": {Items: []*fnv1.Resource{dv}}, "pins": {}},
			raw:          map[string]bool{"golden": true},
			wantComplete: true,
			wantNames:    map[string][]string{"pins": {}},
			wantRaw:      map[string][]string{"golden": {"g"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, raw, complete, err := Fetch(&fnv1.RunFunctionRequest{RequiredResources: tc.required}, sel, tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			names := map[string][]string{}
			for k, objs := range got {
				names[k] = []string{}
				for _, o := range objs {
					names[k] = append(names[k], o.GetName())
				}
			}
			rawNames := map[string][]string{}
			for k, structs := range raw {
				rawNames[k] = []string{}
				for _, s := range structs {
					rawNames[k] = append(rawNames[k], s.GetFields()["metadata"].GetStructValue().GetFields()["name"].GetStringValue())
				}
				if len(structs) > 0 && structs[0] != tc.required[k].GetItems()[0].GetResource() {
					t.Errorf("%s\nraw %q is a copy of the request's Struct", tc.reason, k)
				}
			}
			if diff := cmp.Diff(tc.wantRaw, rawNames, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nraw: -want, +got:\n%s", tc.reason, diff)
			}
			if complete != tc.wantComplete {
				t.Errorf("%s\ncomplete = %v, want %v", tc.reason, complete, tc.wantComplete)
			}
			if diff := cmp.Diff(tc.wantNames, names, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRequirementsOfNoSelectorsIsNil(t *testing.T) {
	if got := Requirements(nil); got != nil {
		t.Errorf("a mode that needs nothing must not send an empty requirements message: %v", got)
	}
}
