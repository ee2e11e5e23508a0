package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

// This file holds the guarantees every mode gives at the edge of the
// function: no decision without a composite, earlier pipeline steps pass
// through, and an observed object the function cannot read is kept and
// reported.

// earlierSteps is what earlier pipeline steps leave in the desired state: a
// composed resource of their own and the desired composite with a field, a
// status field, connection details and a readiness, plus the context.
func earlierSteps(ready fnv1.Ready) (*fnv1.State, *structpb.Struct) {
	return &fnv1.State{
			Composite: &fnv1.Resource{
				Resource:          resource.MustStructJSON(`{"spec":{"fromEarlier":"x"},"status":{"earlier":true}}`),
				ConnectionDetails: map[string][]byte{"kubeconfig": []byte("k")},
				Ready:             ready,
			},
			Resources: map[string]*fnv1.Resource{
				"from-an-earlier-step": {Resource: resource.MustStructJSON(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"earlier","namespace":"default"},"data":{"k":"v"}}`), Ready: fnv1.Ready_READY_FALSE},
			},
		},
		resource.MustStructJSON(`{"earlier.example.com/key":"value"}`)
}

func TestNoObservedCompositeIsFatalInEveryMode(t *testing.T) {
	none := "the request carries no observed composite resource: there is nothing to compose from, and composing nothing would delete every composed resource, so nothing is changed"
	observedOnly := map[string]*fnv1.Resource{"golden-x": {Resource: resource.MustStructJSON(`{"apiVersion":"cdi.kubevirt.io/v1beta1","kind":"DataVolume","metadata":{"name":"x","namespace":"cozy-public"}}`)}}
	cases := map[string]struct {
		reason   string
		observed *fnv1.State
		want     string
	}{
		"NoObservedState": {
			reason: "A request with no observed state at all decides nothing.",
			want:   none,
		},
		"ObservedResourcesButNoComposite": {
			reason:   "Observed composed resources without their composite decide nothing, and none of them is dropped.",
			observed: &fnv1.State{Resources: observedOnly},
			want:     none,
		},
		"EmptyComposite": {
			reason:   "An empty object is not a composite.",
			observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{}`)}, Resources: observedOnly},
			want:     `the observed composite resource has no kind or no name (kind "", name ""): there is nothing to compose from, and composing nothing would delete every composed resource, so nothing is changed`,
		},
		"CompositeWithoutName": {
			reason:   "A composite without a name is not one Crossplane sends.",
			observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XNodePool"}`)}},
			want:     `the observed composite resource has no kind or no name (kind "XNodePool", name ""): there is nothing to compose from, and composing nothing would delete every composed resource, so nothing is changed`,
		},
	}
	for _, mode := range []string{"", "Catalog", "TenantCluster", "NodePool"} {
		input := `{"apiVersion":"workerimage.fn.crossplane.io/v1beta1","kind":"Input"}`
		if mode != "" {
			input = `{"apiVersion":"workerimage.fn.crossplane.io/v1beta1","kind":"Input","mode":"` + mode + `"}`
		}
		for name, tc := range cases {
			t.Run(fmt.Sprintf("%s/%s", or(mode, "Inferred"), name), func(t *testing.T) {
				desired, ctx := earlierSteps(fnv1.Ready_READY_TRUE)
				req := &fnv1.RunFunctionRequest{Meta: &fnv1.RequestMeta{Tag: "t"}, Input: resource.MustStructJSON(input), Observed: tc.observed, Desired: desired, Context: ctx}
				wantDesired, wantCtx := earlierSteps(fnv1.Ready_READY_TRUE)
				want := &fnv1.RunFunctionResponse{
					Meta:    &fnv1.ResponseMeta{Tag: "t", Ttl: durationpb.New(60e9)},
					Desired: wantDesired,
					Context: wantCtx,
					Results: []*fnv1.Result{{Severity: fnv1.Severity_SEVERITY_FATAL, Target: fnv1.Target_TARGET_COMPOSITE.Enum(), Message: tc.want}},
				}
				rsp, err := newTestFunction().RunFunction(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, rsp, protocmp.Transform()); diff != "" {
					t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
				}
			})
		}
	}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// withEarlierSteps is the response base should become when earlier steps
// left desired and ctx: their composed resources next to this step's, their
// composite with this step's status fields set on it, their readiness (a
// hold may only lower it to False) and connection details, and their
// context.
func withEarlierSteps(base *fnv1.RunFunctionResponse, desired *fnv1.State, ctx *structpb.Struct) *fnv1.RunFunctionResponse {
	want := proto.CloneOf(base)
	want.Context = ctx
	if want.Desired == nil {
		want.Desired = &fnv1.State{}
	}
	if want.Desired.Resources == nil {
		want.Desired.Resources = map[string]*fnv1.Resource{}
	}
	for k, r := range desired.GetResources() {
		want.Desired.Resources[k] = r
	}
	composite := proto.CloneOf(desired.GetComposite())
	if ours := base.GetDesired().GetComposite(); ours != nil {
		status := composite.GetResource().GetFields()["status"].GetStructValue()
		for k, v := range ours.GetResource().GetFields()["status"].GetStructValue().GetFields() {
			status.Fields[k] = v
		}
		if ours.GetReady() == fnv1.Ready_READY_FALSE {
			composite.Ready = fnv1.Ready_READY_FALSE
		}
	}
	want.Desired.Composite = composite
	return want
}

// TestEarlierPipelineStepsPassThroughEveryMode runs every example scenario
// of every mode twice, alone and after earlier pipeline steps, on every path
// (the requirements-only first call, the deciding call, a gate's hold, a
// fatal), and compares the whole responses: what the earlier steps desired
// passes through untouched, and changes nothing this step decides.
func TestEarlierPipelineStepsPassThroughEveryMode(t *testing.T) {
	paths := map[string]bool{}
	for _, sc := range loadExampleScenarios(t) {
		for _, ready := range []fnv1.Ready{fnv1.Ready_READY_TRUE, fnv1.Ready_READY_FALSE} {
			t.Run(sc.Name+"/"+ready.String(), func(t *testing.T) {
				final, base := settleRequest(t, newTestFunction(), sc.firstRequest(), sc.Pool)
				first := sc.firstRequest()
				for call, req := range map[string]*fnv1.RunFunctionRequest{"first": first, "final": proto.CloneOf(final)} {
					baseRsp := base
					if call == "first" {
						var err error
						if baseRsp, err = newTestFunction().RunFunction(context.Background(), proto.CloneOf(first)); err != nil {
							t.Fatal(err)
						}
					}
					req.Desired, req.Context = earlierSteps(ready)
					rsp, err := newTestFunction().RunFunction(context.Background(), req)
					if err != nil {
						t.Fatal(err)
					}
					desired, ctx := earlierSteps(ready)
					if diff := cmp.Diff(withEarlierSteps(baseRsp, desired, ctx), rsp, protocmp.Transform()); diff != "" {
						t.Errorf("%s call: what earlier steps desired must pass through untouched, next to an unchanged decision\n-want, +got:\n%s", call, diff)
					}
					paths[pathOf(baseRsp)] = true
				}
			})
		}
	}
	for _, p := range []string{"requirements", "composed", "held", "fatal"} {
		if !paths[p] {
			t.Errorf("no example scenario exercises the %s path", p)
		}
	}
}

// pathOf names the path a response took.
func pathOf(rsp *fnv1.RunFunctionResponse) string {
	switch {
	case fatalMessage(rsp) != "":
		return "fatal"
	case rsp.GetDesired().GetComposite() == nil:
		return "requirements"
	case rsp.GetDesired().GetComposite().GetReady() == fnv1.Ready_READY_FALSE:
		return "held"
	}
	return "composed"
}

// unreadableRow is one observed object a mode cannot read.
type unreadableRow struct {
	reason string
	args   badInput
	// kept are the observed objects that must be desired exactly as given
	// (they carry no status and no server-owned metadata).
	kept []string
	// decided are the keys the mode composes anew despite what was observed.
	decided []string
}

func TestUnreadableObservedIsKeptAndReported(t *testing.T) {
	scenarios := map[string]exampleScenario{}
	for _, sc := range loadExampleScenarios(t) {
		scenarios[sc.Name] = sc
	}
	goldenA := "golden-talos-worker-" + sidReal + "-v1.13.6"
	cases := map[string]unreadableRow{
		"CatalogGoldenInTheCatalogOfTheWrongShape": {
			reason: "A golden of the catalog whose spec cannot be read is neither re-created from its entry nor checked for drift: it is kept as observed.",
			args: badInput{base: catBase, observed: map[string]map[string]any{goldenA: {"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
				"metadata": map[string]any{"name": "talos-worker-" + sidReal + "-v1.13.6", "namespace": "cozy-public"}, "spec": map[string]any{"storage": "6Gi"}}}},
			kept: []string{goldenA},
		},
		"CatalogGoldenThatLeftOfTheWrongKind": {
			reason: "An unpinned object under a golden's name that is not a DataVolume is never deleted.",
			args: badInput{base: catBase, observed: map[string]map[string]any{"golden-talos-worker-x-v1.0.0": {"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "talos-worker-x-v1.0.0", "namespace": "cozy-public"}, "data": map[string]any{"k": "v"}}}},
			kept: []string{"golden-talos-worker-x-v1.0.0"},
		},
		"CatalogRoleBindingOfTheWrongShape": {
			reason: "The clone RoleBinding is decided from the catalog alone; one that cannot be read is composed anew, and reported.",
			args: badInput{base: catBase, observed: map[string]map[string]any{"clone-rolebinding": {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
				"metadata": map[string]any{"name": "workerimage-clone-default", "namespace": "cozy-public"}, "subjects": "everyone"}}},
			decided: []string{"clone-rolebinding"},
		},
		"PoolMachineDeploymentOfTheWrongShape": {
			reason: "A MachineDeployment that cannot be read hides which templates the pool runs on: it is composed from the spec, and no template is retired.",
			args: badInput{base: poolBase, observed: map[string]map[string]any{
				"machinedeployment":                           {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment", "metadata": map[string]any{"name": "demo-md0", "namespace": "tenant-demo"}, "spec": map[string]any{"replicas": "two"}},
				"kubevirtmachinetemplate-demo-md0-0000000000": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "KubevirtMachineTemplate", "metadata": map[string]any{"name": "demo-md0-0000000000", "namespace": "tenant-demo"}},
			}},
			kept:    []string{"kubevirtmachinetemplate-demo-md0-0000000000"},
			decided: []string{"machinedeployment"},
		},
		"PoolMachineDeploymentOfTheWrongKind": {
			reason: "Another kind under the MachineDeployment's name is reported; the deployment is composed from the spec.",
			args: badInput{base: poolBase, observed: map[string]map[string]any{
				"machinedeployment": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "demo-md0", "namespace": "tenant-demo"}},
			}},
			decided: []string{"machinedeployment"},
		},
		"PoolTemplateOfTheWrongKind": {
			reason: "An object under a template's name that is not a template is never retired, referenced or not.",
			args: badInput{base: poolBase, observed: map[string]map[string]any{
				"talosconfigtemplate-demo-md0-0000000000": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "demo-md0-0000000000", "namespace": "tenant-demo"}},
			}},
			kept: []string{"talosconfigtemplate-demo-md0-0000000000"},
		},
		"ClusterPoolOfTheWrongKind": {
			reason: "Another kind under a pool's name is reported; the pool's XNodePool is composed from the spec.",
			args: badInput{base: tcBase, observed: map[string]map[string]any{
				"nodepool-gpu": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "acme-gpu", "namespace": "tenant-acme"}},
			}},
			decided: []string{"nodepool-gpu"},
		},
		"ClusterRemovedPoolOfTheWrongKind": {
			reason: "Another kind under the name of a pool that left the spec is not the cluster's to delete.",
			args: badInput{base: tcBase, observed: map[string]map[string]any{
				"nodepool-old": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "acme-old", "namespace": "tenant-acme"}},
			}},
			kept: []string{"nodepool-old"},
		},
		"ClusterPoolStatusOfTheWrongShape": {
			reason: "An XNodePool whose status cannot be read is composed from the spec, reported not ready, and reported unreadable.",
			args: badInput{base: tcBase, observed: map[string]map[string]any{
				"nodepool-gpu": {"apiVersion": "workerimage.cozystack.io/v1alpha1", "kind": "XNodePool", "metadata": map[string]any{"name": "acme-gpu", "namespace": "tenant-acme"}, "status": map[string]any{"conditions": "Ready"}},
			}},
			decided: []string{"nodepool-gpu"},
		},
	}
	wants := unreadableWants()
	printWants := os.Getenv("CATALOGUE_PRINT") == "1"
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		tc := cases[name]
		t.Run(name, func(t *testing.T) {
			req, pool := tc.args.request(t, scenarios)
			final, rsp := settleRequest(t, newTestFunction(), req, pool)
			if m := fatalMessage(rsp); m != "" {
				t.Fatalf("%s\nunexpected fatal: %s", tc.reason, m)
			}
			desired := rsp.GetDesired().GetResources()
			for _, k := range tc.kept {
				if diff := cmp.Diff(final.GetObserved().GetResources()[k].GetResource(), desired[k].GetResource(), protocmp.Transform()); diff != "" {
					t.Errorf("%s\n%s must be desired exactly as observed\n-want, +got:\n%s", tc.reason, k, diff)
				}
			}
			for _, k := range tc.decided {
				if _, ok := desired[k]; !ok {
					t.Errorf("%s\n%s must be composed", tc.reason, k)
				}
			}
			if lost := droppedOutput(final, rsp); len(lost) > 0 {
				t.Errorf("%s\nobserved composed resources dropped: %q", tc.reason, lost)
			}
			// The row's outcome is the ObservedStateReadable condition.
			got := outcome(rsp, "ObservedStateReadable")
			warned := false
			for _, r := range rsp.GetResults() {
				warned = warned || (r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING && r.GetReason() == "UnreadableObject" && "condition ObservedStateReadable=FALSE UnreadableObject: "+r.GetMessage() == got)
			}
			if printWants {
				fmt.Printf("%s\t%q\n", name, got)
			}
			if diff := cmp.Diff(wants[name], got); diff != "" {
				t.Errorf("%s\nthe unreadable object is reported, named with its problem\n-want, +got:\n%s", tc.reason, diff)
			}
			if !warned {
				t.Errorf("%s\nthe first reconcile that cannot read it emits the condition's message as a Warning", tc.reason)
			}
		})
	}
}

// unreadableWants are the rows' exact outcomes; CATALOGUE_PRINT=1 prints them.
func unreadableWants() map[string]string {
	return map[string]string{
		"CatalogGoldenInTheCatalogOfTheWrongShape": "condition ObservedStateReadable=FALSE UnreadableObject: XWorkerImageCatalog \"default\" ignores objects it cannot read: composed resource golden-talos-worker-ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515-v1.13.6 (DataVolume cozy-public/talos-worker-ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515-v1.13.6): cannot read DataVolume \"cozy-public/talos-worker-ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515-v1.13.6\": cannot restore struct from: string. None of them is deleted by this function: a composed one is kept as observed, unless the spec alone decides it. Check them with kubectl.",
		"CatalogGoldenThatLeftOfTheWrongKind":      "condition ObservedStateReadable=FALSE UnreadableObject: XWorkerImageCatalog \"default\" ignores objects it cannot read: composed resource golden-talos-worker-x-v1.0.0 (ConfigMap cozy-public/talos-worker-x-v1.0.0): it is a v1 ConfigMap, not the cdi.kubevirt.io/v1beta1 DataVolume this function composes there. None of them is deleted by this function: a composed one is kept as observed, unless the spec alone decides it. Check them with kubectl.",
		"CatalogRoleBindingOfTheWrongShape":        "condition ObservedStateReadable=FALSE UnreadableObject: XWorkerImageCatalog \"default\" ignores objects it cannot read: composed resource clone-rolebinding (RoleBinding cozy-public/workerimage-clone-default): cannot read RoleBinding \"cozy-public/workerimage-clone-default\": cannot restore slice from string. None of them is deleted by this function: a composed one is kept as observed, unless the spec alone decides it. Check them with kubectl.",
		"ClusterPoolOfTheWrongKind":                "condition ObservedStateReadable=FALSE UnreadableObject: XTenantCluster \"tenant-acme/acme\" ignores objects it cannot read: composed resource nodepool-gpu (ConfigMap tenant-acme/acme-gpu): it is a v1 ConfigMap, not the workerimage.cozystack.io/v1alpha1 XNodePool this function composes there. None of them is deleted by this function: a composed one is kept as observed, unless the spec alone decides it. Check them with kubectl.",
		"ClusterPoolStatusOfTheWrongShape":         "condition ObservedStateReadable=FALSE UnreadableObject: XTenantCluster \"tenant-acme/acme\" ignores objects it cannot read: composed resource nodepool-gpu (XNodePool acme-gpu): its status cannot be read: json: cannot unmarshal string into Go struct field nodePoolStatus.conditions of type []compose.ObservedCondition. None of them is deleted by this function: a composed one is kept as observed, unless the spec alone decides it. Check them with kubectl.",
		"ClusterRemovedPoolOfTheWrongKind":         "condition ObservedStateReadable=FALSE UnreadableObject: XTenantCluster \"tenant-acme/acme\" ignores objects it cannot read: composed resource nodepool-old (ConfigMap tenant-acme/acme-old): it is a v1 ConfigMap, not the workerimage.cozystack.io/v1alpha1 XNodePool this function composes there. None of them is deleted by this function: a composed one is kept as observed, unless the spec alone decides it. Check them with kubectl.",
		"PoolMachineDeploymentOfTheWrongKind":      "condition ObservedStateReadable=FALSE UnreadableObject: Node pool \"tenant-demo/demo-md0\" ignores objects it cannot read: composed resource machinedeployment (ConfigMap tenant-demo/demo-md0): it is a v1 ConfigMap, not the cluster.x-k8s.io/v1beta1 MachineDeployment this function composes there. None of them is deleted by this function: a composed one is kept as observed, unless the spec alone decides it. Check them with kubectl.",
		"PoolMachineDeploymentOfTheWrongShape":     "condition ObservedStateReadable=FALSE UnreadableObject: Node pool \"tenant-demo/demo-md0\" ignores objects it cannot read: composed resource machinedeployment (MachineDeployment tenant-demo/demo-md0): cannot read MachineDeployment \"tenant-demo/demo-md0\": unrecognized type: int32. None of them is deleted by this function: a composed one is kept as observed, unless the spec alone decides it. Check them with kubectl.",
		"PoolTemplateOfTheWrongKind":               "condition ObservedStateReadable=FALSE UnreadableObject: Node pool \"tenant-demo/demo-md0\" ignores objects it cannot read: composed resource talosconfigtemplate-demo-md0-0000000000 (ConfigMap tenant-demo/demo-md0-0000000000): it is a v1 ConfigMap, not the bootstrap.cluster.x-k8s.io/v1alpha3 TalosConfigTemplate this function composes there. None of them is deleted by this function: a composed one is kept as observed, unless the spec alone decides it. Check them with kubectl.",
	}
}
