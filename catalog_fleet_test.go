package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
	"sigs.k8s.io/yaml"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

// A catalog pinned by a fleet: what its request weighs when the pins are
// read from templates (Usages off, and every release before the fleet-scale
// catalog) and when they are not (Usages on: catalog/grants.go). The pools'
// objects take the shape the API server serves them in: what the function
// composes (example/nodepool/scenarios/builtin-golden-succeeded), plus the
// uid, resourceVersion, generation and creationTimestamp the API server
// sets, Crossplane's controller reference and composite labels, Cluster
// API's owner reference on the template (the MachineDeployment's cluster),
// and managedFields: Crossplane's server-side apply entry, whose fieldsV1
// is the set of every field it applied (structured-merge-diff computes it
// as the API server does), and Cluster API's update of the owner
// references.

const fleetExample = "example/nodepool/scenarios/builtin-golden-succeeded/expected.yaml"

// composedOf reads the first object of kind from the example's output.
func composedOf(t testing.TB, kind string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(fleetExample)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		u := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &u); err != nil || u["kind"] != kind {
			continue
		}
		return u
	}
	t.Fatalf("%s has no %s", fleetExample, kind)
	return nil
}

// served gives a composed object the metadata the API server, Crossplane
// and Cluster API add.
func served(t testing.TB, composed map[string]any, ns, name string, i int, capiOwner bool) *structpb.Struct {
	t.Helper()
	u := &unstructured.Unstructured{Object: runtimeCopy(composed)}
	applied := appliedFields(t, composed)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetUID(types.UID(typesUID(i)))
	u.SetResourceVersion(fmt.Sprint(1000000 + i))
	u.SetGeneration(1)
	u.Object["metadata"].(map[string]any)["creationTimestamp"] = "2026-12-03T10:00:00Z"
	l := u.GetLabels()
	l["crossplane.io/composite"] = name[:len(name)-11]
	u.SetLabels(l)
	owners := []any{map[string]any{"apiVersion": "workerimage.cozystack.io/v1alpha1", "kind": "XNodePool", "name": name[:len(name)-11], "uid": typesUID(i + 1), "controller": true, "blockOwnerDeletion": true}}
	mf := []any{map[string]any{"manager": "apiextensions.crossplane.io/composed/" + typesUID(i+1), "operation": "Apply", "apiVersion": u.GetAPIVersion(), "time": "2026-12-03T10:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": jsonAny(t, applied)}}
	if capiOwner {
		owners = append(owners, map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "name": "demo", "uid": typesUID(i + 2)})
		mf = append(mf, map[string]any{"manager": "manager", "operation": "Update", "apiVersion": u.GetAPIVersion(), "time": "2026-12-03T10:00:01Z", "fieldsType": "FieldsV1",
			"fieldsV1": map[string]any{"f:metadata": map[string]any{"f:ownerReferences": map[string]any{".": map[string]any{}, fmt.Sprintf(`k:{"uid":"%s"}`, typesUID(i+2)): map[string]any{}}}}})
	}
	u.Object["metadata"].(map[string]any)["ownerReferences"] = owners
	u.Object["metadata"].(map[string]any)["managedFields"] = mf
	s, err := structpb.NewStruct(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// appliedCache holds each composed kind's applied field set: the same for
// every object of the kind, the names aside.
var appliedCache = map[string][]byte{}

func appliedFields(t testing.TB, composed map[string]any) []byte {
	t.Helper()
	kind, _ := composed["kind"].(string)
	if b, ok := appliedCache[kind]; ok {
		return b
	}
	b, err := fieldpath.SetFromValue(value.NewValueInterface(composed)).ToJSON()
	if err != nil {
		t.Fatal(err)
	}
	appliedCache[kind] = b
	return b
}

func runtimeCopy(m map[string]any) map[string]any {
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}

func typesUID(i int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i) }

func jsonAny(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// fleetCatalogRequest is the settled catalog request of a catalog of one
// golden pinned by pools pools spread over namespaces namespaces, every
// namespace bound; with usages, what grants.go asks (the Usages asking for
// a grant: none, settled), else every pinning template.
func fleetCatalogRequest(t testing.TB, pools, namespaces int, usages bool) *fnv1.RunFunctionRequest {
	t.Helper()
	kmt := composedOf(t, "KubevirtMachineTemplate")
	golden := goldenA
	input := `{"apiVersion":"workerimage.fn.crossplane.io/v1beta1","kind":"Input"}`
	if !usages {
		input = `{"apiVersion":"workerimage.fn.crossplane.io/v1beta1","kind":"Input","usages":{"enabled":false}}`
	}
	subjects := make([]any, 0, namespaces)
	for n := range namespaces {
		subjects = append(subjects, map[string]any{"kind": "ServiceAccount", "name": "default", "namespace": fmt.Sprintf("tenant-%05d", n)})
	}
	rb := resource.MustStructJSON(roleBindingJSON(""))
	rb.Fields["subjects"] = structpb.NewListValue(mustList(t, subjects))
	req := &fnv1.RunFunctionRequest{
		Input: resource.MustStructJSON(input),
		Observed: &fnv1.State{
			Composite: catalogXR(`{"images":[{"schematicID":"` + sidA + `","version":"v1.13.6"}]}`),
			Resources: map[string]*fnv1.Resource{
				"golden-" + golden:  inUse(observedGolden(golden, sidA, "v1.13.6", urlA, "6Gi", "")),
				"clone-rolebinding": {Resource: rb},
			},
		},
		// The imported golden's class and its profile decide its snapshot
		// (internal/catalog/snapshot.go): here a class without one.
		RequiredResources: withSnapshotReads(map[string]*fnv1.Resources{}),
	}
	if !usages {
		items := make([]*fnv1.Resource, 0, pools)
		for i := range pools {
			items = append(items, &fnv1.Resource{Resource: served(t, kmt, fmt.Sprintf("tenant-%05d", i%namespaces), fmt.Sprintf("c%05d-md0-0123456789", i), 3*i, true)})
		}
		req.RequiredResources["pins-"+golden] = &fnv1.Resources{Items: items}
		return req
	}
	req.RequiredResources["grants-"+golden] = &fnv1.Resources{}
	return req
}

func mustList(t testing.TB, v []any) *structpb.ListValue {
	t.Helper()
	l, err := structpb.NewList(v)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestCatalogRequestAtFleetScale states what a catalog's request weighs
// with its pins read from templates and from Usages, and holds the
// fleet-scale catalog to the bound: pinned by 10,000 pools, its
// request stays under 1 MiB. It logs the figures docs/performance.md
// ("The catalog at fleet scale") quotes.
func TestCatalogRequestAtFleetScale(t *testing.T) {
	f := benchFunction()
	for _, c := range []struct{ pools, namespaces int }{{100, 20}, {500, 100}, {1000, 200}, {2000, 400}, {10000, 2000}, {10000, 10000}} {
		// Reading templates is linear in the pools: measured up to 1,000,
		// well past where it stops fitting.
		byTemplates := "-"
		if c.pools <= 1000 {
			byTemplates = fmt.Sprint(proto.Size(fleetCatalogRequest(t, c.pools, c.namespaces, false)))
		}
		req := fleetCatalogRequest(t, c.pools, c.namespaces, true)
		byUsages := proto.Size(req)
		t.Logf("%6d pools in %5d namespaces: request %9s bytes reading every pinning template (Usages off), %8d bytes with Usages on", c.pools, c.namespaces, byTemplates, byUsages)
		rsp, err := f.RunFunction(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if rsp.GetRequirements() == nil || len(rsp.GetDesired().GetResources()) == 0 {
			t.Fatalf("%d pools: the catalog composed nothing: %v", c.pools, rsp.GetResults())
		}
		if c.pools == 10000 && byUsages >= 1<<20 {
			t.Errorf("a catalog pinned by %d pools in %d namespaces asks for %d bytes; the fleet-scale catalog must stay under 1 MiB", c.pools, c.namespaces, byUsages)
		}
	}
}
