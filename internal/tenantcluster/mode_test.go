package tenantcluster

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/compose/composetest"
	"github.com/cozystack/function-worker-image/internal/matrix"

	"github.com/google/go-cmp/cmp"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/defaults"
)

const schematic = "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"

// talosJSON is the cluster's resolved Talos defaults when it sets none. No
// installerRepository: each XNodePool derives its own installer.
const talosJSON = `{"version":"v1.13.6","schematicID":"` + schematic + `","imageFactoryURL":"https://factory.talos.dev"}`

func TestCompose(t *testing.T) {
	cases := map[string]struct {
		reason   string
		xr       string
		observed map[resource.Name]string
		want     func(t *testing.T) compose.Output
	}{
		"ThreePoolsComposeOneXNodePoolEach": {
			reason: "Each pool becomes an XNodePool named <cluster>-<pool> with the cluster's defaults filled in; none is ready before it is observed.",
			xr: `{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XTenantCluster","metadata":{"name":"acme","namespace":"tenant-acme"},
				"spec":{"storageClass":"replicated","nodePools":{
					"http":{"replicas":2},
					"builtin":{"replicas":3,"osImage":{"builtin":{}}},
					"factory":{"instanceType":"u1.large","storageClass":"local","osImage":{"factory":{"imageFactoryURL":"https://factory.internal"}}}}}}`,
			want: func(t *testing.T) compose.Output {
				return compose.Output{
					Resources: map[resource.Name]*resource.DesiredComposed{
						"nodepool-builtin": newDesired(t, resource.ReadyFalse, `{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XNodePool","metadata":{"name":"acme-builtin"},
							"spec":{"clusterName":"acme","poolName":"builtin","version":"v1.35","goldenNamespace":"cozy-public","talos":`+talosJSON+`,
							"replicas":3,"storageClass":"replicated","osImage":{"builtin":{}}}}`),
						"nodepool-factory": newDesired(t, resource.ReadyFalse, `{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XNodePool","metadata":{"name":"acme-factory"},
							"spec":{"clusterName":"acme","poolName":"factory","version":"v1.35","goldenNamespace":"cozy-public","talos":`+talosJSON+`,
							"instanceType":"u1.large","storageClass":"local","osImage":{"factory":{"imageFactoryURL":"https://factory.internal"}}}}`),
						"nodepool-http": newDesired(t, resource.ReadyFalse, `{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XNodePool","metadata":{"name":"acme-http"},
							"spec":{"clusterName":"acme","poolName":"http","version":"v1.35","goldenNamespace":"cozy-public","talos":`+talosJSON+`,
							"replicas":2,"storageClass":"replicated"}}`),
					},
					Status: map[string]any{"pools": map[string]v1alpha1.PoolStatus{"builtin": {}, "factory": {}, "http": {}}},
					Conditions: []compose.Condition{
						{Type: matrix.ConditionType, Status: compose.StatusTrue, Reason: matrix.ReasonSupported, Message: "Talos v1.13.6 supports Kubernetes v1.35."},
						{Type: TypeNodePoolsReady, Status: compose.StatusFalse, Reason: ReasonPoolsNotReady,
							Message: "3 of 3 node pools are not ready: builtin (not created yet); factory (not created yet); http (not created yet)."},
					},
				}
			},
		},
		"ObservedPoolsAreSummarised": {
			reason: "Each pool's image, source type, template, gate and readiness come back from its XNodePool; the pool that just became ready is an event.",
			xr: `{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XTenantCluster","metadata":{"name":"acme","namespace":"tenant-acme"},
				"spec":{"nodePools":{"workers":{"osImage":{"builtin":{}}},"gpu":{"osImage":{"builtin":{}}}}},
				"status":{"pools":{"workers":{"ready":false},"gpu":{"ready":false}}}}`,
			observed: map[resource.Name]string{
				"nodepool-workers": `{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XNodePool","metadata":{"name":"acme-workers"},"status":{
					"image":{"schematicID":"` + schematic + `","version":"v1.13.6","sourceType":"Clone","golden":"cozy-public/talos-worker-` + schematic + `-v1.13.6"},
					"template":"acme-workers-0123456789abcdef","gate":{"state":"Open"},"replicas":1,"readyReplicas":1,
					"conditions":[{"type":"Ready","status":"True","reason":"Available"}]}}`,
				"nodepool-gpu": `{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XNodePool","metadata":{"name":"acme-gpu"},"status":{
					"image":{"schematicID":"` + schematic + `","version":"v1.13.6","sourceType":"Clone","golden":"cozy-public/talos-worker-` + schematic + `-v1.13.6"},
					"gate":{"state":"Held","reason":"GoldenImporting","message":"Golden is importing."},
					"conditions":[{"type":"Ready","status":"False","reason":"Creating"}]}}`,
			},
			want: func(t *testing.T) compose.Output {
				img := &v1alpha1.NodePoolImage{SourceType: "Clone", SchematicID: schematic, Version: "v1.13.6", Golden: "cozy-public/talos-worker-" + schematic + "-v1.13.6"}
				return compose.Output{
					Resources: map[resource.Name]*resource.DesiredComposed{
						"nodepool-gpu": newDesired(t, resource.ReadyFalse, `{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XNodePool","metadata":{"name":"acme-gpu"},
							"spec":{"clusterName":"acme","poolName":"gpu","version":"v1.35","goldenNamespace":"cozy-public","talos":`+talosJSON+`,"osImage":{"builtin":{}}}}`),
						"nodepool-workers": newDesired(t, resource.ReadyTrue, `{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XNodePool","metadata":{"name":"acme-workers"},
							"spec":{"clusterName":"acme","poolName":"workers","version":"v1.35","goldenNamespace":"cozy-public","talos":`+talosJSON+`,"osImage":{"builtin":{}}}}`),
					},
					Status: map[string]any{"pools": map[string]v1alpha1.PoolStatus{
						"gpu":     {Image: img, SourceType: "Clone", Gate: &v1alpha1.Gate{State: "Held", Reason: "GoldenImporting", Message: "Golden is importing."}},
						"workers": {Image: img, SourceType: "Clone", Template: "acme-workers-0123456789abcdef", Ready: true, Gate: &v1alpha1.Gate{State: "Open"}},
					}},
					Conditions: []compose.Condition{
						{Type: matrix.ConditionType, Status: compose.StatusTrue, Reason: matrix.ReasonSupported, Message: "Talos v1.13.6 supports Kubernetes v1.35."},
						{Type: TypeNodePoolsReady, Status: compose.StatusFalse, Reason: ReasonPoolsNotReady,
							Message: "1 of 2 node pools are not ready: gpu (change held: GoldenImporting)."},
					},
					Results: []compose.Result{{Severity: compose.SeverityNormal, Reason: "NodePoolReady", Message: "Node pool workers is ready."}},
				}
			},
		},
		"MatrixViolationIsFatal": {
			reason: "A known-bad Talos/Kubernetes pairing stops the pipeline, naming the cluster and the remedy.",
			xr:     `{"kind":"XTenantCluster","metadata":{"name":"acme","namespace":"tenant-acme"},"spec":{"version":"v1.35","talos":{"version":"v1.11.2"},"nodePools":{"workers":{}}}}`,
			want: func(*testing.T) compose.Output {
				return compose.Output{Fatal: errors.New("XTenantCluster \"tenant-acme/acme\": Kubernetes v1.35 is not supported by Talos v1.11.2 (Talos v1.11 supports v1.29, v1.30, v1.31, v1.32, v1.33, v1.34). Bump the tenant cluster's version or set talos.version explicitly.")}
			},
		},
		"InvalidPoolNameIsFatal": {
			reason: "Every problem is named in one fatal, cluster first.",
			xr:     `{"kind":"XTenantCluster","metadata":{"name":"acme","namespace":"tenant-acme"},"spec":{"version":"1.35","nodePools":{"GPU":{}}}}`,
			want: func(*testing.T) compose.Output {
				return compose.Output{Fatal: errors.New(`XTenantCluster "tenant-acme/acme": spec.version: Invalid value: "1.35": is not a Kubernetes minor such as v1.35; write vMAJOR.MINOR without leading zeros, Talos picks the patch; spec.nodePools[GPU]: Invalid value: "GPU": is not a pool name (a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')); rename the pool: lowercase letters, digits and '-', starting and ending with a letter or digit, as its name becomes part of the XNodePool and MachineDeployment names`)}
			},
		},
		"WrongTypeIsFatal": {
			reason: "A field of the wrong type is named with its pool.",
			xr:     `{"kind":"XTenantCluster","metadata":{"name":"acme","namespace":"tenant-acme"},"spec":{"nodePools":{"workers":{"replicas":"3"}}}}`,
			want: func(*testing.T) compose.Output {
				return compose.Output{Fatal: errors.New(`XTenantCluster "tenant-acme/acme": spec.nodePools[workers].replicas: Invalid value: "3": is a string, but must be an integer; fix the field's type in the composite`)}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := composetest.Run(Mode{}, request(t, tc.xr, tc.observed)).Output
			if diff := cmp.Diff(tc.want(t), got, equateErrorMessages); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestUnchangedPoolsRenderByteIdentically changes one pool and checks that
// every other pool's XNodePool serialises to the same bytes: a spurious diff
// there would be applied to a pool nobody touched.
func TestUnchangedPoolsRenderByteIdentically(t *testing.T) {
	before := composetest.Run(Mode{}, request(t, `{"kind":"XTenantCluster","metadata":{"name":"acme"},"spec":{"nodePools":{
		"a":{"replicas":1},"b":{"replicas":2,"osImage":{"builtin":{}}},"c":{"diskSize":"40Gi"}}}}`, nil)).Output
	after := composetest.Run(Mode{}, request(t, `{"kind":"XTenantCluster","metadata":{"name":"acme"},"spec":{"nodePools":{
		"a":{"replicas":1},"b":{"replicas":5,"osImage":{"factory":{}}},"c":{"diskSize":"40Gi"}}}}`, nil)).Output
	for _, name := range []resource.Name{"nodepool-a", "nodepool-c"} {
		if diff := cmp.Diff(renderJSON(t, before, name), renderJSON(t, after, name)); diff != "" {
			t.Errorf("%s changed although only pool b did\n-want, +got:\n%s", name, diff)
		}
	}
	if renderJSON(t, before, "nodepool-b") == renderJSON(t, after, "nodepool-b") {
		t.Errorf("nodepool-b did not change although its spec did")
	}
}

// TestRemovingAPoolRemovesOnlyIt drops one pool from the spec while all three
// are observed. The dropped pool is removed in two steps: kept with the
// teardown annotation until it reports Released (its workers drained, its
// deletion guard gone), then left out, so that Crossplane deletes it. The
// other pools render exactly as before throughout.
func TestRemovingAPoolRemovesOnlyIt(t *testing.T) {
	pool := func(name, extra string) string {
		// extra is metadata before the name, in JSON's sorted key order.
		return `{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XNodePool","metadata":{` + extra + `"name":"` + name + `"}`
	}
	withStatus := func(meta, reason string) string {
		return pool("acme-b", meta) + `,"status":{"conditions":[{"type":"Deletion","status":"True","reason":"` + reason + `"}]}}`
	}
	asked := `"annotations":{"workerimage.cozystack.io/teardown":"true"},`
	cases := map[string]struct {
		reason string
		b      string
		// wantB is the desired pool b, "" for none.
		wantB  string
		events int
	}{
		"AskedToGoFirst": {
			reason: "A pool that just left spec.nodePools is kept as observed with the teardown annotation, and one event says its removal started.",
			b:      pool("acme-b", "") + "}",
			wantB:  pool("acme-b", asked) + "}",
			events: 1,
		},
		"KeptWhileItsWorkersDrain": {
			reason: "A pool that reports DrainingWorkers is kept; no new event.",
			b:      withStatus(asked, "DrainingWorkers"),
			wantB:  pool("acme-b", asked) + "}",
		},
		"KeptWhileItsGuardStands": {
			reason: "A released pool that still carries Crossplane's in-use label would have its delete refused, which aborts the cluster's composition: it is kept until the label goes, without re-applying the label, which is the usage controller's to remove.",
			b:      withStatus(asked+`"labels":{"crossplane.io/in-use":"true"},`, "Released"),
			wantB:  pool("acme-b", asked) + "}",
		},
		"DeletedOnceReleased": {
			reason: "A released pool without the in-use label is left out: Crossplane deletes it, and nothing refuses.",
			b:      withStatus(asked, "Released"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			observed := map[resource.Name]string{
				"nodepool-a": pool("acme-a", "") + "}",
				"nodepool-b": tc.b,
				"nodepool-c": pool("acme-c", "") + "}",
			}
			before := composetest.Run(Mode{}, request(t, `{"kind":"XTenantCluster","metadata":{"name":"acme"},"spec":{"nodePools":{"a":{},"b":{},"c":{}}}}`, observed)).Output
			after := composetest.Run(Mode{}, request(t, `{"kind":"XTenantCluster","metadata":{"name":"acme"},"spec":{"nodePools":{"a":{},"c":{}}}}`, observed)).Output
			if after.Fatal != nil {
				t.Fatal(after.Fatal)
			}
			want := []resource.Name{"nodepool-a", "nodepool-c"}
			if tc.wantB != "" {
				want = []resource.Name{"nodepool-a", "nodepool-b", "nodepool-c"}
			}
			got := make([]resource.Name, 0, len(after.Resources))
			for name := range after.Resources {
				got = append(got, name)
			}
			slices.Sort(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\ndesired resources after removing pool b\n-want, +got:\n%s", tc.reason, diff)
			}
			if tc.wantB != "" {
				if diff := cmp.Diff(tc.wantB, renderJSON(t, after, "nodepool-b")); diff != "" {
					t.Errorf("%s\npool b\n-want, +got:\n%s", tc.reason, diff)
				}
			}
			for _, name := range []resource.Name{"nodepool-a", "nodepool-c"} {
				if diff := cmp.Diff(renderJSON(t, before, name), renderJSON(t, after, name)); diff != "" {
					t.Errorf("%s\n%s changed although only pool b was removed\n-want, +got:\n%s", tc.reason, name, diff)
				}
			}
			if _, ok := after.Status["pools"].(map[string]v1alpha1.PoolStatus)["b"]; ok {
				t.Errorf("%s\nstatus.pools still reports the removed pool b", tc.reason)
			}
			removal := 0
			for _, r := range after.Results {
				if r.Reason == "NodePoolRemoving" {
					removal++
				}
			}
			if removal != tc.events {
				t.Errorf("%s\n%d NodePoolRemoving events, want %d: %+v", tc.reason, removal, tc.events, after.Results)
			}
		})
	}
}

// TestClusterWithoutVersionComposesTheInputDefault: an XRD without a default
// for spec.version (the shipped one defaults it to v1.35, others exist) must
// not compose XNodePools without a version; the Input's Kubernetes version,
// itself defaulted from internal/defaults, fills it like every other default.
func TestClusterWithoutVersionComposesTheInputDefault(t *testing.T) {
	cases := map[string]struct {
		reason  string
		version string // the Input's talos.kubernetesVersion, resolved
	}{
		"BuiltinDefault": {reason: "An Input that sets nothing gives the default of internal/defaults.", version: defaults.KubernetesVersion},
		"InputOverride":  {reason: "An Input that sets the version gives that version.", version: "v1.34"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := request(t, `{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XTenantCluster","metadata":{"name":"acme","namespace":"tenant-acme"},
				"spec":{"nodePools":{"workers":{"replicas":2}}}}`, nil)
			r.Config.KubernetesVersion = tc.version
			want := compose.Output{
				Resources: map[resource.Name]*resource.DesiredComposed{
					"nodepool-workers": newDesired(t, resource.ReadyFalse, `{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XNodePool","metadata":{"name":"acme-workers"},
						"spec":{"clusterName":"acme","poolName":"workers","version":"`+tc.version+`","goldenNamespace":"cozy-public","talos":`+talosJSON+`,"replicas":2}}`),
				},
				Status: map[string]any{"pools": map[string]v1alpha1.PoolStatus{"workers": {}}},
				Conditions: []compose.Condition{
					{Type: matrix.ConditionType, Status: compose.StatusTrue, Reason: matrix.ReasonSupported, Message: "Talos v1.13.6 supports Kubernetes " + tc.version + "."},
					{Type: TypeNodePoolsReady, Status: compose.StatusFalse, Reason: ReasonPoolsNotReady,
						Message: "1 of 1 node pools are not ready: workers (not created yet)."},
				},
			}
			got := composetest.Run(Mode{}, r).Output
			if diff := cmp.Diff(want, got, equateErrorMessages); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestSameRequestSameOutput guards determinism: map iteration must never leak
// into names, messages or order. Each Compose ranges the pool map afresh, and
// Go randomises that order per range, so repeating the same request is what
// exposes a leak. The whole Output is compared, fatal included: an error has
// no exported fields, so serialising the Output (as this test once did)
// turned every fatal into {} and could not see its message change.
func TestSameRequestSameOutput(t *testing.T) {
	cases := map[string]struct {
		reason   string
		xr       string
		observed map[resource.Name]string
		fatal    bool // whether the case must take the fatal path
	}{
		"ManyPoolsSomeObserved": {
			reason: "Desired XNodePools, the NodePoolsReady message listing the pools and the ready events all come from the pool map.",
			xr: `{"kind":"XTenantCluster","metadata":{"name":"acme","namespace":"tenant-acme"},"spec":{"nodePools":{"e":{},"d":{},"c":{},"b":{},"a":{}}},
				"status":{"pools":{"a":{"ready":false},"b":{"ready":false},"c":{"ready":false}}}}`,
			observed: map[resource.Name]string{
				"nodepool-a": `{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XNodePool","metadata":{"name":"acme-a"},"status":{"conditions":[{"type":"Ready","status":"True","reason":"Available"}]}}`,
				"nodepool-b": `{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XNodePool","metadata":{"name":"acme-b"},"status":{"conditions":[{"type":"Ready","status":"True","reason":"Available"}]}}`,
				"nodepool-c": `{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XNodePool","metadata":{"name":"acme-c"},"status":{"conditions":[{"type":"Ready","status":"False","reason":"Creating"}]}}`,
			},
		},
		"ManyInvalidPoolsAreOneFatal": {
			reason: "One fatal names every bad pool; their order must not follow the pool map.",
			xr: `{"kind":"XTenantCluster","metadata":{"name":"acme","namespace":"tenant-acme"},"spec":{"nodePools":{
				"E":{},"D":{},"C":{"diskSize":"big"},"B":{},"A":{"storageClass":"Not_A_Class"}}}}`,
			fatal: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			first := composetest.Run(Mode{}, request(t, tc.xr, tc.observed)).Output
			if (first.Fatal != nil) != tc.fatal {
				t.Fatalf("%s\nfatal = %v, want fatal: %v", tc.reason, first.Fatal, tc.fatal)
			}
			for range 50 {
				again := composetest.Run(Mode{}, request(t, tc.xr, tc.observed)).Output
				if diff := cmp.Diff(first, again, equateErrorMessages); diff != "" {
					t.Fatalf("%s\nCompose is not deterministic\n-first, +again:\n%s", tc.reason, diff)
				}
			}
		})
	}
}

func TestRequirementsAskForNothing(t *testing.T) {
	res := composetest.Run(Mode{}, request(t, `{"kind":"XTenantCluster","metadata":{"name":"acme"},"spec":{"nodePools":{"a":{}}}}`, nil))
	if got, err := res.Requirements, res.Err; err != nil || got != nil {
		t.Errorf("Requirements: want no selectors and no error, got %v, %v", got, err)
	}
}

func request(t testing.TB, xr string, observed map[resource.Name]string) composetest.Request {
	t.Helper()
	r := compose.Request{Config: defaultConfig(t), Composite: newXR(t, xr), Observed: map[resource.Name]resource.ObservedComposed{}}
	for name, js := range observed {
		r.Observed[name] = newObserved(t, js)
	}
	return composetest.Request{Request: r}
}

func renderJSON(t *testing.T, out compose.Output, name resource.Name) string {
	t.Helper()
	dc, ok := out.Resources[name]
	if !ok {
		t.Fatalf("%s is not composed", name)
	}
	b, err := json.Marshal(dc.Resource.Object)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
