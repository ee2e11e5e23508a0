package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
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
	for _, seed := range badFieldSeeds(f) {
		f.Add(seed[0], seed[1], seed[2], seed[3])
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

// badFieldSeeds are example scenarios with one field set to a value the
// function refuses, or to one of the catalog's and the pool's newer fields
// (architectures, storage class lists, the closed-network import, a copy
// path, snapshot goldens, a golden an older chart made with spec.pvc), so
// the fuzzer starts from every refusal and every newer field, not only from
// the valid scenarios. Each is a badInput of the catalogue.
func badFieldSeeds(t testing.TB) [][4][]byte {
	t.Helper()
	scenarios := map[string]exampleScenario{}
	for _, sc := range loadExampleScenarios(t) {
		scenarios[sc.Name] = sc
	}
	long := strings.Repeat("a", 70)
	factory := func(url string) map[string]any {
		return map[string]any{"osImage": map[string]any{"factory": map[string]any{"imageFactoryURL": url}}}
	}
	const http, clone, cat = "nodepool/http-pool", "nodepool/builtin-golden-succeeded", "catalog/golden-succeeded"
	seeds := []badInput{
		// Issue 36 item 5: the bad input once let through.
		{base: http, spec: map[string]any{"diskSize": "5"}},
		{base: http, spec: map[string]any{"diskSize": "1m"}},
		{base: http, spec: map[string]any{"diskSize": "1245Mi"}},
		{base: clone, spec: map[string]any{"diskSize": "1m"}},
		{base: http, spec: factory("https://factory.talos.dev/%2e%2e/x")},
		{base: http, spec: factory("https://factory.talos.dev/%2E%2e")},
		{base: http, spec: factory("https://factory.talos.dev/%2e/x")},
		{base: http, spec: factory("https://factory.talos.dev/%252e%252e/x")},
		{base: http, spec: factory("https://factory.talos.dev/a%2fb")},
		{base: http, spec: map[string]any{"talos": map[string]any{"installerRepository": "registry.example/" + strings.Repeat("i", 200)}}},
		{base: http, spec: map[string]any{"clusterName": long[:60]}},
		{base: http, spec: map[string]any{"clusterName": long}},
		{base: http, spec: map[string]any{"talos": map[string]any{"registryMirrors": map[string]any{"docker.io": map[string]any{"endpoints": []any{"https://mirror.example/%2e%2e"}}}}}},
		{base: http, spec: map[string]any{"architecture": "arm64", "storageClass": "local"}},
		{base: "tenantcluster/pools-observed", spec: map[string]any{"talos": map[string]any{"imageFactoryURL": "https://factory.talos.dev/x/.%2e"}}},
		{base: cat, spec: map[string]any{"imageFactoryURL": "https://factory.talos.dev/%2e%2e"}},
		{base: cat, spec: map[string]any{"storage": "1m"}},
		// The catalog's and the Input's newer fields.
		{base: cat, spec: map[string]any{"storageClasses": []any{"replicated", "local"}, "storageClass": nil, "architectures": []any{"amd64", "arm64"}}},
		{base: cat, spec: map[string]any{"imageFactoryCA": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", "imageFactoryAuth": map[string]any{"secretRef": "factory-auth", "secretExtraHeaders": []any{"factory-headers"}}}},
		{base: cat, input: map[string]any{"snapshotGoldens": map[string]any{"enabled": true}, "storage": map[string]any{"diskSize": "1m"}}},
		{base: clone, input: map[string]any{"clonePreflight": map[string]any{"hostAssistedCopy": map[string]any{"storageClasses": []any{"local"}}}}},
		// A golden an older chart made with spec.pvc, kept as it lives.
		pvcGolden(t, scenarios["catalog/removed-but-pinned"]),
	}
	out := make([][4][]byte, 0, len(seeds))
	for _, b := range seeds {
		req, pool := b.request(t, scenarios)
		obs := map[string]*structpb.Struct{}
		for k, v := range req.GetObserved().GetResources() {
			obs[k] = v.GetResource()
		}
		out = append(out, [4][]byte{jsonOf(t, req.GetObserved().GetComposite().GetResource()), jsonOf(t, req.GetInput()), jsonOf(t, obs), jsonOf(t, pool)})
	}
	return out
}

// pvcGolden is sc with its first observed golden rewritten as an older
// chart made it, spec.pvc in place of spec.storage.
func pvcGolden(t testing.TB, sc exampleScenario) badInput {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(sc.Observed)) {
		o := sc.Observed[k].GetResource().AsMap()
		spec, _ := o["spec"].(map[string]any)
		if st, ok := spec["storage"]; ok && strings.HasPrefix(k, "golden-") {
			spec["pvc"] = st
			delete(spec, "storage")
			return badInput{base: sc.Name, observed: map[string]map[string]any{k: o}}
		}
	}
	t.Fatalf("fuzz seed: scenario %q observes no golden with spec.storage", sc.Name)
	return badInput{}
}
