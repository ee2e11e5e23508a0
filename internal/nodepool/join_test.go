package nodepool

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/compose/composetest"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/emit"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/required"
)

// Secret values of the fixtures; none may ever reach a status, condition or
// result.
var joinSecretValues = []string{"abcdef.0123456789abcdef", "machine-token-value", "cluster-id-value", "cluster-secret-value"}

func pemCert(body string) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte(body)}))
}

// joinWorld is what Kamaji and cozystack's kubernetes chart publish for
// cluster demo in tenant-a; edit changes it before it is resolved.
type joinWorld struct {
	talosSecrets map[string]string
	talosCA      string
	apiServerIP  string
	cpVersion    string // "" = no control plane object
	drop         string // a requirement whose object is absent
}

func fullJoinWorld() joinWorld {
	return joinWorld{
		talosSecrets: map[string]string{"token": "machine-token-value", "clusterId": "cluster-id-value", "clusterSecret": "cluster-secret-value", "bootstrapToken": "abcdef.0123456789abcdef"},
		talosCA:      pemCert("talos-ca"),
		apiServerIP:  "10.96.12.34",
		cpVersion:    "v1.35.6",
	}
}

func (j joinWorld) resolved(w worldFixture) required.Resolved {
	b64 := func(m map[string]string) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			out[k] = base64.StdEncoding.EncodeToString([]byte(v))
		}
		return out
	}
	r := w.resolved()
	r[read.ReqJoinTalosSecrets] = []*unstructured.Unstructured{obj("v1", "Secret", fxNamespace, "demo-talos-secrets", map[string]any{"data": b64(j.talosSecrets)})}
	r[read.ReqJoinTalosCA] = []*unstructured.Unstructured{obj("v1", "Secret", fxNamespace, "demo-talos-ca", map[string]any{"data": b64(map[string]string{"tls.crt": j.talosCA})})}
	r[read.ReqJoinKubernetesCA] = []*unstructured.Unstructured{obj("v1", "Secret", fxNamespace, "demo-ca", map[string]any{"data": b64(map[string]string{"ca.crt": pemCert("kubernetes-ca")})})}
	r[read.ReqJoinAPIServer] = []*unstructured.Unstructured{obj("v1", "Service", fxNamespace, "demo", map[string]any{"spec": map[string]any{"clusterIP": j.apiServerIP}})}
	r[read.ReqJoinDNS] = []*unstructured.Unstructured{obj("v1", "Service", "kube-system", "kube-dns", map[string]any{"spec": map[string]any{"clusterIP": "10.96.0.10"}})}
	r[read.ReqControlPlane] = []*unstructured.Unstructured{}
	if j.cpVersion != "" {
		r[read.ReqControlPlane] = []*unstructured.Unstructured{obj("controlplane.cluster.x-k8s.io/v1alpha1", "KamajiControlPlane", fxNamespace, "demo", map[string]any{"spec": map[string]any{"version": j.cpVersion}})}
	}
	if j.drop != "" {
		r[j.drop] = []*unstructured.Unstructured{}
	}
	return r
}

func joinSpec(extra map[string]any) map[string]any {
	s := map[string]any{"bootstrap": map[string]any{"mode": "Join"}}
	maps.Copy(s, extra)
	return s
}

func composeJoin(t *testing.T, spec map[string]any, j joinWorld, observed map[resource.Name]resource.ObservedComposed) compose.Output {
	t.Helper()
	r := composetest.Request{Request: compose.Request{Config: testConfig(t), Composite: nodePoolXR(spec), Observed: observed}, Required: j.resolved(missing)}
	return composetest.Run(Mode{}, r).Output
}

// joinOutcome is what a Join test asserts.
type joinOutcome struct {
	// Resources are the composed names (for failure messages only).
	Resources  []string
	Deployment string // the TalosConfigTemplate the MachineDeployment points at
	Condition  string // "<type>=<status>/<reason>" of the Join condition, or WorkerImageReady when held
	Mentions   []string
}

func outcome(t *testing.T, out compose.Output, mentions ...string) joinOutcome {
	t.Helper()
	o := joinOutcome{Resources: summarize(out).Resources}
	if d, ok := out.Resources[read.ResourceMachineDeployment]; ok {
		o.Deployment, _, _ = unstructured.NestedString(d.Resource.Object, "spec", "template", "spec", "bootstrap", "configRef", "name")
	}
	for _, c := range out.Conditions {
		if c.Type == emit.ConditionJoinFactsCurrent || (c.Type == emit.ConditionWorkerImageReady && c.Status == compose.StatusFalse) {
			o.Condition = c.Type + "=" + string(c.Status) + "/" + c.Reason
			for _, m := range mentions {
				if strings.Contains(c.Message, m) {
					o.Mentions = append(o.Mentions, m)
				}
			}
		}
	}
	// No secret value in anything but the composed template.
	b, err := json.Marshal(map[string]any{"status": out.Status, "conditions": out.Conditions, "results": out.Results, "fatal": out.Fatal})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range joinSecretValues {
		if strings.Contains(string(b), v) {
			t.Errorf("a secret value reached the status, a condition or a result: %s", b)
		}
	}
	return o
}

func TestJoinRequirementsNameTheFacts(t *testing.T) {
	res := composetest.Run(Mode{}, composetest.Request{Request: compose.Request{Config: testConfig(t), Composite: nodePoolXR(joinSpec(nil))}})
	sel, err := res.Requirements, res.Err
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, n := range []string{read.ReqJoinTalosSecrets, read.ReqJoinTalosCA, read.ReqJoinKubernetesCA, read.ReqJoinAPIServer, read.ReqJoinDNS, read.ReqControlPlane} {
		s := sel[n]
		if s == nil {
			t.Fatalf("no requirement %s", n)
		}
		got[n] = s.GetKind() + " " + s.GetNamespace() + "/" + s.GetMatchName()
	}
	want := map[string]string{
		read.ReqJoinTalosSecrets: "Secret tenant-a/demo-talos-secrets",
		read.ReqJoinTalosCA:      "Secret tenant-a/demo-talos-ca",
		read.ReqJoinKubernetesCA: "Secret tenant-a/demo-ca",
		read.ReqJoinAPIServer:    "Service tenant-a/demo",
		read.ReqJoinDNS:          "Service kube-system/kube-dns",
		read.ReqControlPlane:     "KamajiControlPlane tenant-a/demo",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the Join requirements are cozystack's objects, by name (-want, +got):\n%s", diff)
	}
	res = composetest.Run(Mode{}, composetest.Request{Request: compose.Request{Config: testConfig(t), Composite: nodePoolXR(nil)}})
	gen, err := res.Requirements, res.Err
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := gen[read.ReqJoinTalosSecrets]; ok {
		t.Errorf("a Generate pool must not read the cluster's Secrets")
	}
}

func TestJoin(t *testing.T) {
	full := fullJoinWorld()
	_, joinTCT := joinNames(t, joinSpec(nil), full)
	existing := observedFrom(composeJoin(t, joinSpec(nil), full, nil).Resources, mdReady(1))
	rotated := full
	rotated.talosSecrets = maps.Clone(full.talosSecrets)
	rotated.talosSecrets["token"] = "rotated-token-value"
	readdressed := full
	readdressed.apiServerIP = "10.96.99.99"
	with := func(f func(*joinWorld)) joinWorld {
		j := full
		j.talosSecrets = maps.Clone(full.talosSecrets)
		f(&j)
		return j
	}

	cases := map[string]struct {
		reason   string
		spec     map[string]any
		world    joinWorld
		observed map[resource.Name]resource.ObservedComposed
		mentions []string
		check    func(t *testing.T, o joinOutcome)
		want     joinOutcome
	}{
		"NewPoolComposesTheJoinTemplate": {
			reason: "With every fact there, a new Join pool composes its templates and deployment and says its facts are current.",
			spec:   joinSpec(nil), world: full,
			want: joinOutcome{Deployment: joinTCT, Condition: "JoinFactsCurrent=True/FactsCurrent"},
		},
		"MissingSecretHoldsNamingIt": {
			reason: "A missing Secret holds the pool, naming the Secret; nothing is composed for a new pool.",
			spec:   joinSpec(nil), world: with(func(j *joinWorld) { j.drop = read.ReqJoinTalosSecrets }),
			mentions: []string{"Secret tenant-a/demo-talos-secrets"},
			want:     joinOutcome{Condition: "WorkerImageReady=False/JoinFactsMissing", Mentions: []string{"Secret tenant-a/demo-talos-secrets"}},
		},
		"MissingKeyHoldsNamingTheKey": {
			reason: "A Secret without the bootstrap token is as good as none.",
			spec:   joinSpec(nil), world: with(func(j *joinWorld) { delete(j.talosSecrets, "bootstrapToken") }),
			mentions: []string{"key bootstrapToken of Secret tenant-a/demo-talos-secrets"},
			want:     joinOutcome{Condition: "WorkerImageReady=False/JoinFactsMissing", Mentions: []string{"key bootstrapToken of Secret tenant-a/demo-talos-secrets"}},
		},
		"MissingServiceHoldsAnExistingPoolKeepingEverything": {
			reason: "An existing pool whose API server Service is gone keeps every resource as observed.",
			spec:   joinSpec(nil), world: with(func(j *joinWorld) { j.drop = read.ReqJoinAPIServer }), observed: existing,
			mentions: []string{"Service tenant-a/demo"},
			want:     joinOutcome{Deployment: joinTCT, Condition: "WorkerImageReady=False/JoinFactsMissing", Mentions: []string{"Service tenant-a/demo"}},
		},
		"MalformedBootstrapTokenHolds": {
			reason: "A bootstrap token the kubelet cannot use is refused by key, its value never quoted.",
			spec:   joinSpec(nil), world: with(func(j *joinWorld) { j.talosSecrets["bootstrapToken"] = "not-a-token" }),
			mentions: []string{"key bootstrapToken of Secret tenant-a/demo-talos-secrets"},
			want:     joinOutcome{Condition: "WorkerImageReady=False/JoinFactsInvalid", Mentions: []string{"key bootstrapToken of Secret tenant-a/demo-talos-secrets"}},
		},
		"CAThatIsNoCertificateHolds": {
			reason: "A Talos CA that is no PEM certificate would make a worker Talos refuses.",
			spec:   joinSpec(nil), world: with(func(j *joinWorld) { j.talosCA = "garbage" }),
			want: joinOutcome{Condition: "WorkerImageReady=False/JoinFactsInvalid"},
		},
		// cozystack parent_version_skew_test.yaml@69da032, case by case.
		"PoolAheadOfControlPlaneIsHeld": {
			reason: "Chart: fails when the pool minor is ahead of the parent apiserver minor (pool v1.35, KamajiControlPlane v1.34.9).",
			spec:   joinSpec(nil), world: with(func(j *joinWorld) { j.cpVersion = "v1.34.9" }),
			mentions: []string{"KamajiControlPlane tenant-a/demo at v1.34.9"},
			want:     joinOutcome{Condition: "WorkerImageReady=False/ControlPlaneBehind", Mentions: []string{"KamajiControlPlane tenant-a/demo at v1.34.9"}},
		},
		"PoolLaggingTheControlPlaneIsComposed": {
			reason: "Chart: renders when the pool minor lags the parent (v1.33 under v1.34.9), a supported rolling-upgrade skew.",
			spec:   joinSpec(map[string]any{"version": "v1.33"}), world: with(func(j *joinWorld) { j.cpVersion = "v1.34.9" }),
			check: composedCurrent,
		},
		"PoolEqualToTheControlPlaneIsComposed": {
			reason: "Chart: renders when the pool minor equals the parent minor (v1.34 on v1.34.9).",
			spec:   joinSpec(map[string]any{"version": "v1.34"}), world: with(func(j *joinWorld) { j.cpVersion = "v1.34.9" }),
			check: composedCurrent,
		},
		"NoControlPlaneSkipsTheGuard": {
			reason: "Chart: renders when the parent KamajiControlPlane is not present (skip branch).",
			spec:   joinSpec(nil), world: with(func(j *joinWorld) { j.cpVersion = "" }),
			check: composedCurrent,
		},
		"ControlPlaneVersionWithoutVIsRead": {
			reason: "The chart's regexFind takes v?MAJOR.MINOR; 1.34.0 is behind v1.35 too.",
			spec:   joinSpec(nil), world: with(func(j *joinWorld) { j.cpVersion = "1.34.0" }),
			want: joinOutcome{Condition: "WorkerImageReady=False/ControlPlaneBehind"},
		},
		"RotatedTokenKeepsTheRunningTemplate": {
			reason: "A rotated Secret alone must not roll every worker: the deployment stays on the running template and the condition names the changed key.",
			spec:   joinSpec(nil), world: rotated, observed: existing,
			mentions: []string{"key token of Secret tenant-a/demo-talos-secrets", "spec.bootstrap.factsRevision to 1"},
			want:     joinOutcome{Deployment: joinTCT, Condition: "JoinFactsCurrent=False/JoinFactsChanged", Mentions: []string{"key token of Secret tenant-a/demo-talos-secrets", "spec.bootstrap.factsRevision to 1"}},
		},
		"ReaddressedServiceKeepsTheRunningTemplate": {
			reason: "A new API server ClusterIP is a fact too.",
			spec:   joinSpec(nil), world: readdressed, observed: existing,
			mentions: []string{"spec.clusterIP of Service tenant-a/demo"},
			want:     joinOutcome{Deployment: joinTCT, Condition: "JoinFactsCurrent=False/JoinFactsChanged", Mentions: []string{"spec.clusterIP of Service tenant-a/demo"}},
		},
		"FactsRevisionRollsOntoTheCurrentFacts": {
			reason: "The platform asks for the roll by bumping factsRevision: a new template with the rotated token.",
			spec:   joinSpec(map[string]any{"bootstrap": map[string]any{"mode": "Join", "factsRevision": int64(1)}}), world: rotated, observed: existing,
			check: rolled(joinTCT),
		},
		"AnotherRollTakesTheCurrentFacts": {
			reason: "A change that rolls the pool anyway (its disk size) takes the current facts with it.",
			spec:   joinSpec(map[string]any{"diskSize": "30Gi"}), world: rotated, observed: existing,
			check: rolled(joinTCT),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out := composeJoin(t, tc.spec, tc.world, tc.observed)
			if out.Fatal != nil {
				t.Fatalf("%s\nunexpected fatal: %v", tc.reason, out.Fatal)
			}
			o := outcome(t, out, tc.mentions...)
			if tc.check != nil {
				tc.check(t, o)
				return
			}
			got := joinOutcome{Deployment: o.Deployment, Condition: o.Condition, Mentions: o.Mentions}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s\nresources: %v", tc.reason, diff, o.Resources)
			}
		})
	}
}

// TestPinnedFactsKeepTheDeploymentAsRendered: a pool whose facts alone
// changed keeps the MachineDeployment it had, byte for byte, autoscaler
// bounds and role labels included; only the facts are not rolled.
func TestPinnedFactsKeepTheDeploymentAsRendered(t *testing.T) {
	full := fullJoinWorld()
	rotated := full
	rotated.talosSecrets = maps.Clone(full.talosSecrets)
	rotated.talosSecrets["token"] = "rotated-token-value"
	cases := map[string]map[string]any{
		"Fixed":      joinSpec(nil),
		"Autoscaled": joinSpec(map[string]any{"minReplicas": int64(1), "maxReplicas": int64(5)}),
		"WithRoles":  joinSpec(map[string]any{"roles": []any{"ingress"}}),
	}
	for name, spec := range cases {
		t.Run(name, func(t *testing.T) {
			existing := observedFrom(composeJoin(t, spec, full, nil).Resources, mdReady(1))
			current := composeJoin(t, spec, full, existing)
			pinned := composeJoin(t, spec, rotated, existing)
			for _, out := range []compose.Output{current, pinned} {
				if out.Fatal != nil {
					t.Fatalf("unexpected fatal: %v", out.Fatal)
				}
			}
			if o := outcome(t, pinned); o.Condition != "JoinFactsCurrent=False/JoinFactsChanged" {
				t.Fatalf("want the rotated pool pinned, got condition %q", o.Condition)
			}
			want, got := current.Resources[read.ResourceMachineDeployment], pinned.Resources[read.ResourceMachineDeployment]
			if want == nil || got == nil {
				t.Fatalf("want a MachineDeployment in both calls, got %v and %v", want, got)
			}
			if diff := cmp.Diff(want.Resource.Object, got.Resource.Object); diff != "" {
				t.Errorf("a pinned pool's MachineDeployment changed with its facts (-current, +pinned):\n%s", diff)
			}
		})
	}
}

func composedCurrent(t *testing.T, o joinOutcome) {
	t.Helper()
	if o.Deployment == "" || o.Condition != "JoinFactsCurrent=True/FactsCurrent" {
		t.Errorf("want the pool composed with current facts, got deployment %q, condition %q", o.Deployment, o.Condition)
	}
}

func rolled(old string) func(t *testing.T, o joinOutcome) {
	return func(t *testing.T, o joinOutcome) {
		t.Helper()
		if o.Deployment == "" || o.Deployment == old || o.Condition != "JoinFactsCurrent=True/FactsCurrent" {
			t.Errorf("want the deployment on a new template with current facts, got %q (old %q), condition %q", o.Deployment, old, o.Condition)
		}
	}
}

func joinNames(t *testing.T, spec map[string]any, j joinWorld) (kmt, tct string) {
	t.Helper()
	out := composeJoin(t, spec, j, nil)
	if out.Fatal != nil {
		t.Fatal(out.Fatal)
	}
	for n := range out.Resources {
		s := string(n)
		switch {
		case strings.HasPrefix(s, read.PrefixMachineTemplate):
			kmt = strings.TrimPrefix(s, read.PrefixMachineTemplate)
		case strings.HasPrefix(s, read.PrefixBootstrapTemplate):
			tct = strings.TrimPrefix(s, read.PrefixBootstrapTemplate)
		}
	}
	return kmt, tct
}

func TestJoinFactsChangedIsAWarningOnce(t *testing.T) {
	full := fullJoinWorld()
	existing := observedFrom(composeJoin(t, joinSpec(nil), full, nil).Resources, mdReady(1))
	rotated := full
	rotated.talosSecrets = maps.Clone(full.talosSecrets)
	rotated.talosSecrets["clusterSecret"] = "rotated-cluster-secret"
	kmt, _ := joinNames(t, joinSpec(nil), full)
	status := func(conditions ...any) composetest.Request {
		xr := nodePoolXR(joinSpec(nil))
		xr.Object["status"] = map[string]any{"template": kmt, "gate": map[string]any{"state": decide.GateOpen}, "conditions": conditions}
		return composetest.Request{Request: compose.Request{Config: testConfig(t), Composite: xr, Observed: existing}, Required: rotated.resolved(missing)}
	}
	first := composetest.Run(Mode{}, status()).Output
	reasons := func(out compose.Output) []string {
		var rs []string
		for _, r := range out.Results {
			rs = append(rs, string(r.Severity)+"/"+r.Reason)
		}
		return rs
	}
	if diff := cmp.Diff([]string{"Warning/" + decide.ReasonJoinFactsChanged}, reasons(first)); diff != "" {
		t.Errorf("the first reconcile after a rotation warns once (-want, +got):\n%s", diff)
	}
	// The next reconcile sees the condition in the composite's status, as
	// Crossplane wrote it from the first.
	var written map[string]any
	for _, c := range first.Conditions {
		if c.Type == emit.ConditionJoinFactsCurrent {
			written = map[string]any{"type": c.Type, "status": string(c.Status), "reason": c.Reason, "message": c.Message}
		}
	}
	again := composetest.Run(Mode{}, status(written)).Output
	if diff := cmp.Diff([]string(nil), reasons(again)); diff != "" {
		t.Errorf("the condition, not an event per reconcile, carries it afterwards (-want, +got):\n%s", diff)
	}
	for _, r := range append(first.Results, again.Results...) {
		if strings.Contains(r.Message, "rotated-cluster-secret") || strings.Contains(r.Message, "cluster-secret-value") {
			t.Errorf("an event quotes a secret value: %s", r.Message)
		}
	}
}

// TestJoinPoolOutput pins the whole Output of a Join pool: the complete
// worker config as data, generateType none, the same patches as a Generate
// pool, the join-base annotation, the JoinFactsCurrent condition.
func TestJoinPoolOutput(t *testing.T) {
	checkGolden(t, "JoinPoolComposesTheCompleteWorkerConfig", outputYAML(t, composeJoin(t, joinSpec(nil), fullJoinWorld(), nil)))
}
