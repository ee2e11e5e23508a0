package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// FuzzRunFunction feeds RunFunction arbitrary composites, Inputs, observed
// composed resources (a JSON object: composition-resource-name to object) and
// cluster objects that requirements are resolved against (a JSON list). It is
// seeded from every example scenario (example/*/scenarios/*) and from
// testdata/fuzz/FuzzRunFunction. Each input is settled the way Crossplane
// calls the function (requirements first, then the resolved objects), and the
// final response must hold every invariant: no panic, no error return, the
// same bytes on a second run, nothing malformed composed, nothing owned and
// observed dropped without a rule retiring it.
func FuzzRunFunction(f *testing.F) {
	for _, sc := range loadExampleScenarios(f) {
		obs := map[string]*structpb.Struct{}
		for k, v := range sc.Observed {
			obs[k] = v.GetResource()
		}
		f.Add(jsonOf(f, sc.XR), jsonOf(f, sc.Input), jsonOf(f, obs), jsonOf(f, sc.Pool))
	}
	f.Fuzz(func(t *testing.T, xr, input, observed, pool []byte) {
		req, objs, ok := fuzzRequest(xr, input, observed, pool)
		if !ok {
			return
		}
		fn := newTestFunction()
		final, rsp := settleRequest(t, fn, proto.Clone(req).(*fnv1.RunFunctionRequest), objs)
		_, again := settleRequest(t, fn, proto.Clone(req).(*fnv1.RunFunctionRequest), objs)
		if !bytes.Equal(deterministicBytes(t, rsp), deterministicBytes(t, again)) {
			t.Fatalf("the same request gave two different responses:\n%v\n%v", rsp, again)
		}
		if bad := malformedOutput(final, rsp); len(bad) > 0 {
			t.Fatalf("malformed composed resources: %q", bad)
		}
		if lost := droppedOutput(final, rsp); len(lost) > 0 {
			t.Fatalf("observed composed resources dropped without a rule retiring them: %q", lost)
		}
	})
}

func jsonOf(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fuzzRequest builds the first request of a reconcile from the fuzz inputs;
// false when they are not JSON of the right shape (Crossplane only ever
// sends objects).
func fuzzRequest(xr, input, observed, pool []byte) (*fnv1.RunFunctionRequest, []*structpb.Struct, bool) {
	x, in := &structpb.Struct{}, &structpb.Struct{}
	if x.UnmarshalJSON(xr) != nil || in.UnmarshalJSON(input) != nil {
		return nil, nil, false
	}
	// The API server admitted the composite: its name and namespace are
	// valid. Anything else is not a request Crossplane can send.
	if ns := field(x, "metadata", "namespace"); ns != "" && len(validation.IsDNS1123Label(ns)) > 0 {
		return nil, nil, false
	}
	if len(validation.IsDNS1123Subdomain(field(x, "metadata", "name"))) > 0 {
		return nil, nil, false
	}
	// The API server admitted the composite: its name and namespace are
	// valid. Anything else is not a request Crossplane can send.
	if ns := field(x, "metadata", "namespace"); ns != "" && len(validation.IsDNS1123Label(ns)) > 0 {
		return nil, nil, false
	}
	if len(validation.IsDNS1123Subdomain(field(x, "metadata", "name"))) > 0 {
		return nil, nil, false
	}
	obs := map[string]*structpb.Struct{}
	if json.Unmarshal(observed, &obs) != nil {
		return nil, nil, false
	}
	var objs []*structpb.Struct
	if json.Unmarshal(pool, &objs) != nil {
		return nil, nil, false
	}
	req := &fnv1.RunFunctionRequest{
		Meta:     &fnv1.RequestMeta{Tag: "fuzz"},
		Input:    in,
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: x}, Resources: map[string]*fnv1.Resource{}},
	}
	for k, o := range obs {
		if o == nil {
			return nil, nil, false
		}
		req.Observed.Resources[k] = &fnv1.Resource{Resource: o}
	}
	for _, o := range objs {
		if o == nil {
			return nil, nil, false
		}
	}
	return req, objs, true
}
