package nodepool

import (
	"encoding/base64"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/compose/composetest"
	"github.com/cozystack/function-worker-image/internal/fixture"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/emit"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
)

// chartPool is a pool the kubernetes-nodes chart made
// (testdata/chart/http-default.yaml, written from the chart's templates at
// cozystack/cozystack@69da032; docs/chart-adoption-facts.md), the Kamaji
// cluster's join facts that its TalosConfigTemplate embeds, and the
// XNodePool a platform writes for it ("Migrating from the kubernetes-nodes
// chart" in docs/platform.md).
func chartPool(t *testing.T, spec map[string]any, mutate func(*unstructured.Unstructured)) composetest.Request {
	t.Helper()
	b, err := os.ReadFile("testdata/chart/http-default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := fixture.DecodeObjects(b)
	if err != nil {
		t.Fatal(err)
	}
	w := missing
	for _, o := range objs {
		if mutate != nil {
			mutate(o)
		}
		if o.GetKind() == "MachineSet" {
			w.sets = append(w.sets, o)
			continue
		}
		w.existing = append(w.existing, o)
	}
	const ns = "tenant-demo"
	// The fixture's CA is a placeholder PEM block, as the chart copies it.
	ca, err := base64.StdEncoding.DecodeString("LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tClpYaGhiWEJzWlMxdWIzUXRZUzF5WldGc0xXTmxjblJwWm1sallYUmwKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=")
	if err != nil {
		t.Fatal(err)
	}
	b64 := func(m map[string]string) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			out[k] = base64.StdEncoding.EncodeToString([]byte(v))
		}
		return out
	}
	r := w.resolved()
	r[read.ReqJoinTalosSecrets] = []*unstructured.Unstructured{obj("v1", "Secret", ns, "kubernetes-demo-talos-secrets", map[string]any{"data": b64(map[string]string{
		"token": "example-machine-token", "clusterId": "example-cluster-id", "clusterSecret": "example-cluster-secret", "bootstrapToken": "abcdef.0123456789abcdef",
	})})}
	r[read.ReqJoinTalosCA] = []*unstructured.Unstructured{obj("v1", "Secret", ns, "kubernetes-demo-talos-ca", map[string]any{"data": b64(map[string]string{"tls.crt": string(ca)})})}
	r[read.ReqJoinKubernetesCA] = []*unstructured.Unstructured{obj("v1", "Secret", ns, "kubernetes-demo-ca", map[string]any{"data": b64(map[string]string{"ca.crt": string(ca)})})}
	r[read.ReqJoinAPIServer] = []*unstructured.Unstructured{obj("v1", "Service", ns, "kubernetes-demo", map[string]any{"spec": map[string]any{"clusterIP": "10.96.12.34"}})}
	r[read.ReqJoinDNS] = []*unstructured.Unstructured{obj("v1", "Service", "kube-system", "kube-dns", map[string]any{"spec": map[string]any{"clusterIP": "10.96.0.10"}})}
	r[read.ReqControlPlane] = []*unstructured.Unstructured{obj("controlplane.cluster.x-k8s.io/v1alpha1", "KamajiControlPlane", ns, "kubernetes-demo", map[string]any{"spec": map[string]any{"version": "v1.35.6"}})}
	s := map[string]any{
		"clusterName": "kubernetes-demo", "poolName": "md0", "minReplicas": int64(0), "maxReplicas": int64(10),
		"storageClass": "replicated", "osImage": map[string]any{"factory": map[string]any{}},
		"bootstrap": map[string]any{"mode": "Join"}, "talos": map[string]any{"installerRepository": "factory.talos.dev/installer"},
	}
	for k, v := range spec {
		s[k] = v
	}
	xr := nodePoolXR(s)
	xr.SetNamespace(ns)
	xr.SetName("kubernetes-demo-md0")
	return composetest.Request{Request: compose.Request{Config: testConfig(t), Composite: xr}, Required: r}
}

// withBootTimeout is the chart from cozystack/cozystack@8617ce4 on, which
// writes machine.time.bootTimeout as the function does.
func withBootTimeout(u *unstructured.Unstructured) {
	if u.GetKind() != "TalosConfigTemplate" {
		return
	}
	data, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "data")
	data = strings.Replace(data, "machine:\n", "machine:\n  time:\n    bootTimeout: 2m0s\n", 1)
	_ = unstructured.SetNestedField(u.Object, data, "spec", "template", "spec", "data")
}

// withoutKamajiOwner is the migration step that drops the
// KamajiControlPlane's controller reference from the TalosConfigTemplate.
func withoutKamajiOwner(u *unstructured.Unstructured) {
	if u.GetKind() != "TalosConfigTemplate" {
		return
	}
	var keep []metav1.OwnerReference
	for _, o := range u.GetOwnerReferences() {
		if o.Kind != "KamajiControlPlane" {
			keep = append(keep, o)
		}
	}
	u.SetOwnerReferences(keep)
}

// TestAChartPoolIsAdoptedWithoutARoll: the chart's pool, under an XNodePool
// written for it, keeps running on the chart's templates once they are
// equivalent and controlled by nobody else; each way it is not says what to
// do, and composes nothing.
func TestAChartPoolIsAdoptedWithoutARoll(t *testing.T) {
	both := func(fs ...func(*unstructured.Unstructured)) func(*unstructured.Unstructured) {
		return func(u *unstructured.Unstructured) {
			for _, f := range fs {
				f(u)
			}
		}
	}
	cases := map[string]struct {
		reason   string
		spec     map[string]any
		mutate   func(*unstructured.Unstructured)
		hold     string
		mentions []string
		adopted  bool
	}{
		"ChartBefore8617ce4": {
			reason: "The chart at 69da032 writes no boot timeout, and the function does: a new config, so adopting would roll, and the message says where.",
			hold:   decide.ReasonAdoptionWouldRoll, mutate: withoutKamajiOwner,
			mentions: []string{"kubernetes-demo-md0-b7e2d4", "machine.time", `"bootTimeout":"2m0s"`, "spec.templateRevision to 1"},
		},
		"StillControlledByKamaji": {
			reason: "Equivalent, but the KamajiControlPlane controls the TalosConfigTemplate: the pool names the owner to drop.",
			hold:   decide.ReasonTemplateOwnedElsewhere, mutate: withBootTimeout,
			mentions: []string{"KamajiControlPlane kubernetes-demo", "TalosConfigTemplate tenant-demo/kubernetes-demo-md0-b7e2d4", "ownerReferences"},
		},
		"Equivalent": {
			reason: "The chart's templates, once their controller reference is dropped, are adopted: no new template, no roll.",
			mutate: both(withBootTimeout, withoutKamajiOwner), adopted: true,
		},
		"DiskSizeDiffers": {
			reason: "A pool that asks for another disk would roll: held, naming the path.",
			spec:   map[string]any{"diskSize": "30Gi"}, mutate: both(withBootTimeout, withoutKamajiOwner),
			hold: decide.ReasonAdoptionWouldRoll, mentions: []string{"resources.requests.storage", `"30Gi"`},
		},
		"RollAccepted": {
			reason: "templateRevision accepts the roll: the pool composes its own templates.",
			spec:   map[string]any{"templateRevision": int64(1)}, mutate: withoutKamajiOwner,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := chartPool(t, tc.spec, tc.mutate)
			out := composetest.Run(Mode{}, r).Output
			if out.Fatal != nil {
				t.Fatalf("%s\nunexpected fatal: %v", tc.reason, out.Fatal)
			}
			wi := conditionOf(out, emit.ConditionWorkerImageReady)
			if tc.hold != "" {
				if wi.Reason != tc.hold || len(out.Resources) != 0 {
					t.Fatalf("%s\nWorkerImageReady %s (want %s), %d resources composed (want 0): %s", tc.reason, wi.Reason, tc.hold, len(out.Resources), wi.Message)
				}
				for _, m := range tc.mentions {
					if !strings.Contains(wi.Message, m) {
						t.Errorf("%s\nmessage does not mention %q: %s", tc.reason, m, wi.Message)
					}
				}
				return
			}
			kmt, tct := deployedOn(t, out)
			onChart := kmt == "kubernetes-demo-md0-3f9a1c" && tct == "kubernetes-demo-md0-b7e2d4"
			if onChart != tc.adopted {
				t.Fatalf("%s\ndeployment on %s, %s; on the chart's templates %t, want %t", tc.reason, kmt, tct, onChart, tc.adopted)
			}
			if !tc.adopted {
				return
			}
			if got := renderingStatus(out); got != "False/"+decide.ReasonAdopted {
				t.Errorf("%s\nRenderingCurrent = %s, want False/%s", tc.reason, got, decide.ReasonAdopted)
			}
			var templates []string
			for n := range out.Resources {
				if strings.HasPrefix(string(n), read.PrefixMachineTemplate) || strings.HasPrefix(string(n), read.PrefixBootstrapTemplate) {
					templates = append(templates, string(n))
				}
			}
			if diff := cmp.Diff([]string{read.PrefixMachineTemplate + kmt, read.PrefixBootstrapTemplate + tct}, sortedCopy(templates)); diff != "" {
				t.Errorf("%s\nan adopted pool composes the chart's templates and no other (-want, +got):\n%s", tc.reason, diff)
			}
			// Templates are immutable: what is composed is the chart's spec,
			// its config text and comments included.
			for _, e := range r.Required[read.ReqExistingMachine] {
				if diff := cmp.Diff(e.Object["spec"], out.Resources[read.MachineTemplateResource(e.GetName())].Resource.Object["spec"]); diff != "" {
					t.Errorf("%s\nadopted KubevirtMachineTemplate changed (-chart, +composed):\n%s", tc.reason, diff)
				}
			}
			for _, e := range r.Required[read.ReqExistingBootstrap] {
				if diff := cmp.Diff(e.Object["spec"], out.Resources[read.BootstrapTemplateResource(e.GetName())].Resource.Object["spec"]); diff != "" {
					t.Errorf("%s\nadopted TalosConfigTemplate changed (-chart, +composed):\n%s", tc.reason, diff)
				}
			}
			if _, ok := out.Resources[read.ResourceMachineDeployment]; !ok {
				t.Errorf("%s\nthe MachineDeployment is not composed", tc.reason)
			}
		})
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sortStrings(out)
	return out
}
