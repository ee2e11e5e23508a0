package nodepool

import (
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/compose/composetest"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/nodepool/emit"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/nodepool/render"
	"github.com/cozystack/function-worker-image/internal/poolspec"
)

// earlierRelease rewrites the observed state as if an earlier release had
// rendered the running templates differently for the same request: each
// template gets another spec and so another name, keeps its request record,
// and the MachineDeployment runs on it. It returns the running names.
func earlierRelease(t *testing.T, obs map[resource.Name]resource.ObservedComposed) (kmt, tct string) {
	t.Helper()
	out := map[resource.Name]resource.ObservedComposed{}
	renamed := map[string]string{}
	for n, o := range obs {
		u := o.Resource.DeepCopy()
		switch {
		case strings.HasPrefix(string(n), read.PrefixMachineTemplate):
			// An earlier rendering without the VM's eviction strategy.
			spec := u.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["virtualMachineTemplate"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			delete(spec, "evictionStrategy")
			earlierRendering(u)
			kmt = u.GetName() + "-old"
			renamed[u.GetName()] = kmt
			u.SetName(kmt)
			n = read.MachineTemplateResource(kmt)
		case strings.HasPrefix(string(n), read.PrefixBootstrapTemplate):
			earlierRendering(u)
			tct = u.GetName() + "-old"
			renamed[u.GetName()] = tct
			u.SetName(tct)
			n = read.BootstrapTemplateResource(tct)
		}
		out[n] = resource.ObservedComposed{Resource: u}
	}
	md := out[read.ResourceMachineDeployment].Resource
	for _, path := range [][]string{{"spec", "template", "spec", "infrastructureRef", "name"}, {"spec", "template", "spec", "bootstrap", "configRef", "name"}} {
		was, _, _ := unstructuredString(md, path...)
		if err := md.SetValue(strings.Join(path, "."), renamed[was]); err != nil {
			t.Fatal(err)
		}
	}
	clear(obs)
	for n, o := range out {
		obs[n] = o
	}
	return kmt, tct
}

// earlierRendering marks a template as rendered by the revision before this
// one (this release counts as one more than RenderingRevision: see
// asNextRevision).
func earlierRendering(u *composed.Unstructured) {
	a := u.GetAnnotations()
	a[pool.AnnRendering] = strconv.Itoa(render.Rendering)
	u.SetAnnotations(a)
}

// asNextRevision makes the code under test a release that renders one
// revision later than the templates earlierRendering marks.
func asNextRevision(t *testing.T) {
	was := render.Rendering
	render.Rendering++
	t.Cleanup(func() { render.Rendering = was })
}

func unstructuredString(u *composed.Unstructured, path ...string) (string, bool, error) {
	v, err := u.GetString(strings.Join(path, "."))
	return v, err == nil, err
}

// deployedOn is the template names the desired MachineDeployment points at.
func deployedOn(t *testing.T, out compose.Output) (kmt, tct string) {
	t.Helper()
	d, ok := out.Resources[read.ResourceMachineDeployment]
	if !ok {
		t.Fatalf("no MachineDeployment composed; resources: %v", summarize(out).Resources)
	}
	kmt, _ = d.Resource.GetString("spec.template.spec.infrastructureRef.name")
	tct, _ = d.Resource.GetString("spec.template.spec.bootstrap.configRef.name")
	return kmt, tct
}

// renderingStatus is RenderingCurrent as "<status>/<reason>".
func renderingStatus(out compose.Output) string {
	c := conditionOf(out, emit.ConditionRenderingCurrent)
	return string(c.Status) + "/" + c.Reason
}

// TestARunningPoolRollsOnlyWhenItsRequestChanges: templates an earlier
// release rendered for the request the pool still makes are kept, whatever
// this release renders; a change of what the pool asks for, or a revision
// bump, rolls onto this release's rendering; a change that enters only the
// MachineDeployment keeps the templates.
func TestARunningPoolRollsOnlyWhenItsRequestChanges(t *testing.T) {
	base := map[string]any{"osImage": builtin(), "replicas": int64(2)}
	with := func(extra map[string]any) map[string]any {
		s := map[string]any{}
		for k, v := range base {
			s[k] = v
		}
		for k, v := range extra {
			s[k] = v
		}
		return s
	}
	w := succeeded
	cases := map[string]struct {
		reason string
		spec   map[string]any
		input  *v1beta1.Input
		// kept: the deployment stays on the earlier release's templates.
		kept      bool
		condition string
		// machineLabel is a label the MachineDeployment's Machines must
		// carry, "key=value".
		machineLabel string
	}{
		"SameRequest": {
			reason: "Nothing the pool asks for changed: an earlier rendering keeps running, and the condition says how to take this one.",
			spec:   base, kept: true, condition: "False/" + emit.ReasonKeptFromEarlierRelease,
		},
		"ReplicasChanged": {
			reason: "A scale enters the MachineDeployment only.",
			spec:   with(map[string]any{"replicas": int64(5)}), kept: true, condition: "False/" + emit.ReasonKeptFromEarlierRelease,
		},
		"HealthCheckAndRolloutChanged": {
			reason: "The MachineHealthCheck and the rollout strategy are no template's.",
			spec:   with(map[string]any{"healthCheck": map[string]any{"maxUnhealthy": "1"}, "rollout": map[string]any{"maxSurge": "1"}}),
			kept:   true, condition: "False/" + emit.ReasonKeptFromEarlierRelease,
		},
		"DiskSizeChanged": {
			reason: "The owner asked for another disk: the pool rolls onto this release's rendering.",
			spec:   with(map[string]any{"diskSize": "30Gi"}), condition: "True/" + emit.ReasonRenderedByThisRelease,
		},
		"LabelsChanged": {
			reason: "Node labels are in the Talos config the owner asked for.",
			spec:   with(map[string]any{"labels": map[string]any{"tier": "web"}}), condition: "True/" + emit.ReasonRenderedByThisRelease,
		},
		"SyncedLabelChanged": {
			reason: "A label Cluster API syncs from the Machine to the Node changes on the MachineDeployment, in place.",
			spec:   with(map[string]any{"labels": map[string]any{"node.cluster.x-k8s.io/tier": "web"}}), kept: true,
			condition: "False/" + emit.ReasonKeptFromEarlierRelease, machineLabel: "node.cluster.x-k8s.io/tier=web",
		},
		"LabelSyncedByTheManagersPattern": {
			reason: "A label the Input says the Cluster API manager syncs (--additional-sync-machine-labels) too.",
			spec:   with(map[string]any{"labels": map[string]any{"example.com/tier": "web"}}),
			input:  &v1beta1.Input{ClusterAPI: v1beta1.ClusterAPIOptions{SyncMachineLabels: []string{`^example\.com/`}}},
			kept:   true, condition: "False/" + emit.ReasonKeptFromEarlierRelease, machineLabel: "example.com/tier=web",
		},
		"PoolRevisionBumped": {
			reason: "spec.templateRevision takes this release's rendering for one pool.",
			spec:   with(map[string]any{"templateRevision": int64(1)}), condition: "True/" + emit.ReasonRenderedByThisRelease,
		},
		"InputRevisionBumped": {
			reason: "The Input's templateRevision takes it for every pool.",
			spec:   base, input: &v1beta1.Input{TemplateRevision: 1}, condition: "True/" + emit.ReasonRenderedByThisRelease,
		},
		"InputTemplateValueChanged": {
			reason: "An Input value that enters the templates (the image platform) is part of what the pool asks for.",
			spec:   base, input: &v1beta1.Input{Image: v1beta1.ImageOptions{Platform: "metal"}}, condition: "True/" + emit.ReasonRenderedByThisRelease,
		},
		"InputPollingChanged": {
			reason: "An Input value that enters no template (polling) is not.",
			spec:   base, input: &v1beta1.Input{ClonePreflight: v1beta1.ClonePreflightOptions{AllowHostAssistedCopy: true}}, kept: true, condition: "False/" + emit.ReasonKeptFromEarlierRelease,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obs := composeOnce(t, base, w, mdReady(2))
			oldKMT, oldTCT := earlierRelease(t, obs)
			asNextRevision(t)
			r := request(t, nodePoolXR(tc.spec), w, obs)
			if tc.input != nil {
				cfg, err := config.FromInput(tc.input, r.Config.SteadyTTL)
				if err != nil {
					t.Fatal(err)
				}
				r.Config = cfg
			}
			out := composetest.Run(Mode{}, r).Output
			if out.Fatal != nil {
				t.Fatalf("%s\nunexpected fatal: %v", tc.reason, out.Fatal)
			}
			kmt, tct := deployedOn(t, out)
			if got := kmt == oldKMT && tct == oldTCT; got != tc.kept {
				t.Errorf("%s\ndeployment on %s, %s; kept %t, want %t", tc.reason, kmt, tct, got, tc.kept)
			}
			if got := renderingStatus(out); got != tc.condition {
				t.Errorf("%s\nRenderingCurrent = %s, want %s", tc.reason, got, tc.condition)
			}
			if tc.machineLabel != "" {
				k, v, _ := strings.Cut(tc.machineLabel, "=")
				got, _ := out.Resources[read.ResourceMachineDeployment].Resource.GetStringObject("spec.template.metadata.labels")
				if got[k] != v {
					t.Errorf("%s\nMachine labels %v, want %s", tc.reason, got, tc.machineLabel)
				}
			}
			// Whatever is kept or rolled, the running templates stay
			// composed while the deployment still runs on them.
			for _, n := range []resource.Name{read.MachineTemplateResource(oldKMT), read.BootstrapTemplateResource(oldTCT)} {
				if _, ok := out.Resources[n]; !ok {
					t.Errorf("%s\nrunning template %s dropped", tc.reason, n)
				}
			}
			if tc.kept {
				if got := len(summarize(out).Resources); got != len(obs) {
					t.Errorf("%s\nkept pool composes %d resources, want the %d it runs: %v", tc.reason, got, len(obs), summarize(out).Resources)
				}
			}
		})
	}
}

// TestAKeptPoolIsStableAndWarnsOnce: the kept state is a fixed point (the
// next reconcile composes the same) and the Warning is a transition.
func TestAKeptPoolIsStableAndWarnsOnce(t *testing.T) {
	spec := map[string]any{"osImage": builtin()}
	w := succeeded
	obs := composeOnce(t, spec, w, mdReady(1))
	earlierRelease(t, obs)
	asNextRevision(t)
	first := composetest.Run(Mode{}, request(t, nodePoolXR(spec), w, obs)).Output
	xr := withStatus(nodePoolXR(spec), map[string]any{"conditions": conditionsOf(first)})
	second := composetest.Run(Mode{}, request(t, xr, w, observedFrom(first.Resources, mdReady(1)))).Output
	if got := renderingStatus(first); got != "False/"+emit.ReasonKeptFromEarlierRelease {
		t.Fatalf("first reconcile does not report the kept rendering:\n%s", outputYAML(t, first))
	}
	xr = withStatus(nodePoolXR(spec), map[string]any{"conditions": conditionsOf(second)})
	third := composetest.Run(Mode{}, request(t, xr, w, observedFrom(second.Resources, mdReady(1)))).Output
	if diff := cmp.Diff(outputYAML(t, second), outputYAML(t, third)); diff != "" {
		t.Errorf("a kept pool is not a fixed point (-second, +third):\n%s", diff)
	}
	warned := func(out compose.Output) bool {
		for _, r := range out.Results {
			if r.Reason == emit.ReasonKeptFromEarlierRelease {
				return true
			}
		}
		return false
	}
	if !warned(first) || warned(second) {
		t.Errorf("the Warning is a transition: first %t (want true), second %t (want false)", warned(first), warned(second))
	}
}

func conditionsOf(out compose.Output) []any {
	var cs []any
	for _, c := range out.Conditions {
		cs = append(cs, map[string]any{"type": c.Type, "status": string(c.Status), "reason": c.Reason, "message": c.Message})
	}
	return cs
}

// TestAnUnrecordedTemplateIsStampedNotRolled: a template an earlier release
// rendered before requests were recorded, under the name this release gives
// it, is stamped in place: the same name, so nothing rolls.
func TestAnUnrecordedTemplateIsStampedNotRolled(t *testing.T) {
	spec := map[string]any{"osImage": builtin()}
	w := succeeded
	obs := composeOnce(t, spec, w, func(n resource.Name, u *composed.Unstructured) {
		mdReady(1)(n, u)
		a := u.GetAnnotations()
		delete(a, pool.AnnAsk)
		u.SetAnnotations(a)
	})
	wantKMT, wantTCT := "", ""
	if md := obs[read.ResourceMachineDeployment].Resource; md != nil {
		wantKMT, _ = md.GetString("spec.template.spec.infrastructureRef.name")
		wantTCT, _ = md.GetString("spec.template.spec.bootstrap.configRef.name")
	}
	out := composetest.Run(Mode{}, request(t, nodePoolXR(spec), w, obs)).Output
	kmt, tct := deployedOn(t, out)
	if kmt != wantKMT || tct != wantTCT {
		t.Errorf("deployment moved from %s, %s to %s, %s", wantKMT, wantTCT, kmt, tct)
	}
	for _, n := range []resource.Name{read.MachineTemplateResource(kmt), read.BootstrapTemplateResource(tct)} {
		if out.Resources[n].Resource.GetAnnotations()[pool.AnnAsk] == "" {
			t.Errorf("%s is not stamped with its request", n)
		}
	}
}

// specKeys are the JSON names of a struct's fields, inline ones flattened.
func specKeys(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" && (strings.Contains(opts, "inline") || f.Anonymous) {
			out = append(out, specKeys(f.Type)...)
			continue
		}
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// TestRequestClassifiesEverySpecField: every XNodePool spec field either
// enters a template (so it is part of the request) or enters only the
// MachineDeployment and health check (deploymentOnly). A new field must be
// put on one side here, or a change of it would be silently kept or would
// roll without reason.
func TestRequestClassifiesEverySpecField(t *testing.T) {
	template := []string{
		"architecture", "bootstrap", "clusterName", "disk", "diskSize", "ephemeralStorage", "goldenNamespace", "gpus", "instanceType",
		"kernelModules", "kubelet", "labels", "logSerialConsole", "osImage", "podCpuLimit", "podCpuRequest", "poolName",
		"resources", "roles", "storageClass", "taints", "talos", "templateRevision", "version",
	}
	got := specKeys(reflect.TypeFor[v1alpha1.NodePoolSpec]())
	want := append(append([]string(nil), template...), render.DeploymentOnly...)
	sort.Strings(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("classify every spec field as template or deploymentOnly (-classified, +spec):\n%s", diff)
	}
}

// TestRequestedCoversTheTemplateInputs: every Input field is classified as
// entering a pool's templates (config.Requested) or not.
func TestRequestedCoversTheTemplateInputs(t *testing.T) {
	// snapshotGoldens decides what a NEW template's disk restores from,
	// like the golden's readiness, and so is no part of the request:
	// turning it on or off rolls no pool (snapshot.go). So does
	// clonePreflight.hostAssistedCopy, whether it copies (copy.go).
	// goldenNamespaces only says which golden namespaces a pool may name.
	notTemplates := []string{"apiVersion", "kind", "metadata", "mode", "supportMatrix", "cloneRBAC", "usages", "clonePreflight", "cloneHealth", "cloneBudget", "snapshotGoldens", "polling", "clusterAPI", "goldenNamespaces"}
	requested := specKeys(reflect.TypeFor[config.Requested]())
	// Requested flattens storage.diskSize; the Input holds it in storage,
	// whose other fields size the goldens, not a pool.
	for i, k := range requested {
		if k == "diskSize" {
			requested[i] = "storage"
		}
	}
	want := append(append([]string(nil), notTemplates...), requested...)
	sort.Strings(want)
	got := specKeys(reflect.TypeFor[v1beta1.Input]())
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("classify every Input field (-classified, +Input):\n%s", diff)
	}
}

// TestRequestOf: the request is a pure function of what the pool asks for;
// the node's size and the Kubernetes release enter the Talos config's only.
func TestRequestOf(t *testing.T) {
	spec := func(mutate func(*v1alpha1.NodePoolSpec)) v1alpha1.NodePoolSpec {
		s := v1alpha1.NodePoolSpec{ClusterName: "demo", Version: "v1.35"}
		if mutate != nil {
			mutate(&s)
		}
		return s
	}
	three := int32(3)
	requestOf := func(spec v1alpha1.NodePoolSpec, in config.Requested, class string, facts *render.BootstrapFacts) (string, error) {
		rs, err := render.AskSpecOf(spec, poolspec.SplitLabels(spec.Labels, nil).Machine, "amd64")
		if err != nil {
			return "", err
		}
		return render.AskOf(rs, in, class, facts)
	}
	facts := &render.BootstrapFacts{Size: poolspec.NodeSize{MilliCPU: 2000, MemoryBytes: 4 << 30}, MachineVersion: "v1.35.6"}
	base, err := requestOf(spec(nil), config.Requested{}, "replicated", facts)
	if err != nil {
		t.Fatal(err)
	}
	machine, err := requestOf(spec(nil), config.Requested{}, "replicated", nil)
	if err != nil {
		t.Fatal(err)
	}
	if machine == base {
		t.Errorf("the machine template's request %s equals the Talos config's: the facts do not count", machine)
	}
	cases := map[string]struct {
		spec  v1alpha1.NodePoolSpec
		in    config.Requested
		class string
		facts *render.BootstrapFacts
		same  bool
	}{
		"Again":               {spec: spec(nil), class: "replicated", facts: facts, same: true},
		"Replicas":            {spec: spec(func(s *v1alpha1.NodePoolSpec) { s.Replicas = &three }), class: "replicated", facts: facts, same: true},
		"SizeOfResourcesPool": {spec: spec(nil), class: "replicated", facts: &render.BootstrapFacts{Size: poolspec.NodeSize{MilliCPU: 8000}, MachineVersion: "v1.35.6"}, same: true},
		"SizeOfInstanceType":  {spec: spec(func(s *v1alpha1.NodePoolSpec) { s.InstanceType = "u1.large" }), class: "replicated", facts: facts},
		"DiskSize":            {spec: spec(func(s *v1alpha1.NodePoolSpec) { s.DiskSize = "30Gi" }), class: "replicated", facts: facts},
		"Class":               {spec: spec(nil), class: "local", facts: facts},
		"MachineVersion":      {spec: spec(nil), class: "replicated", facts: &render.BootstrapFacts{Size: facts.Size, MachineVersion: "v1.35.7"}},
		"InputTalos":          {spec: spec(nil), in: config.Requested{Talos: v1beta1.TalosDefaults{Version: "v1.12.0"}}, class: "replicated", facts: facts},
		"InputRevision":       {spec: spec(nil), in: config.Requested{TemplateRevision: 1}, class: "replicated", facts: facts},
		"PoolRevision":        {spec: spec(func(s *v1alpha1.NodePoolSpec) { s.TemplateRevision = 1 }), class: "replicated", facts: facts},
		"NodeLabel":           {spec: spec(func(s *v1alpha1.NodePoolSpec) { s.Labels = map[string]string{"tier": "web"} }), class: "replicated", facts: facts},
		"SyncedLabel":         {spec: spec(func(s *v1alpha1.NodePoolSpec) { s.Labels = map[string]string{"node.cluster.x-k8s.io/tier": "web"} }), class: "replicated", facts: facts, same: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := requestOf(tc.spec, tc.in, tc.class, tc.facts)
			if err != nil {
				t.Fatal(err)
			}
			if (got == base) != tc.same {
				b, _ := json.Marshal(tc.spec)
				t.Errorf("request of %s = %s, base %s; same %t, want %t", b, got, base, got == base, tc.same)
			}
		})
	}
}

// TestAnUnrecordedTemplateOfAnEarlierRenderingIsKept: an HTTP pool that a
// release before request records composed runs a template without the
// usePopulator annotation (rendering 1). Its spec still renders that
// template at rendering 1, so the pool keeps it, recorded with rendering 1,
// and RenderingCurrent names it; a change the owner makes rolls it onto this
// release's rendering, annotation and all. A clone never carries the
// annotation, at any rendering.
func TestAnUnrecordedTemplateOfAnEarlierRenderingIsKept(t *testing.T) {
	// Play the release that brought the legacy import, whatever revision
	// this one is, so that the test keeps checking that step.
	was := render.Rendering
	t.Cleanup(func() { render.Rendering = was })
	base := map[string]any{"osImage": map[string]any{"factory": map[string]any{}}, "replicas": int64(2)}
	w := succeeded
	render.Rendering = render.FirstRendering
	obs := composeOnce(t, base, w, func(n resource.Name, u *composed.Unstructured) {
		mdReady(2)(n, u)
		a := u.GetAnnotations()
		delete(a, pool.AnnAsk)
		delete(a, pool.AnnRendering)
		u.SetAnnotations(a)
	})
	render.Rendering = render.RenderingLegacyImport
	md := obs[read.ResourceMachineDeployment].Resource
	oldKMT, _ := md.GetString("spec.template.spec.infrastructureRef.name")
	cases := map[string]struct {
		reason    string
		spec      map[string]any
		kept      bool
		condition string
		populator string
	}{
		"SameRequest": {"Nothing the pool asks for changed: the earlier rendering keeps running.", base, true, "False/" + emit.ReasonKeptFromEarlierRelease, ""},
		"DiskSizeChanged": {"The owner asked for another disk: the pool rolls onto this release's rendering, which imports on CDI's legacy path.",
			map[string]any{"osImage": base["osImage"], "replicas": int64(2), "diskSize": "30Gi"}, false, "True/" + emit.ReasonRenderedByThisRelease, "false"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out := composetest.Run(Mode{}, request(t, nodePoolXR(tc.spec), w, obs)).Output
			if out.Fatal != nil {
				t.Fatalf("%s\nunexpected fatal: %v", tc.reason, out.Fatal)
			}
			kmt, _ := deployedOn(t, out)
			if got := kmt == oldKMT; got != tc.kept {
				t.Errorf("%s\ndeployment on %s; kept %t, want %t", tc.reason, kmt, got, tc.kept)
			}
			if got := renderingStatus(out); got != tc.condition {
				t.Errorf("%s\nRenderingCurrent = %s, want %s", tc.reason, got, tc.condition)
			}
			u := out.Resources[read.MachineTemplateResource(kmt)].Resource
			wantRendering := strconv.Itoa(render.RenderingLegacyImport)
			if tc.kept {
				wantRendering = strconv.Itoa(render.FirstRendering)
			}
			if a := u.GetAnnotations(); a[pool.AnnAsk] == "" || a[pool.AnnRendering] != wantRendering {
				t.Errorf("%s\n%s records request %q and rendering %q, want a request and rendering %s", tc.reason, kmt, a[pool.AnnAsk], a[pool.AnnRendering], wantRendering)
			}
			dvts, _ := u.GetValue("spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates")
			got, _ := dvts.([]any)[0].(map[string]any)["metadata"].(map[string]any)["annotations"].(map[string]any)["cdi.kubevirt.io/storage.usePopulator"].(string)
			if got != tc.populator {
				t.Errorf("%s\nworker disk usePopulator %q, want %q", tc.reason, got, tc.populator)
			}
		})
	}
	clone := composetest.Run(Mode{}, request(t, nodePoolXR(map[string]any{"osImage": builtin()}), w, nil)).Output
	if strings.Contains(string(outputYAML(t, clone)), "usePopulator") {
		t.Errorf("a clone pool's templates carry usePopulator, which would take CDI off its clone populator:\n%s", outputYAML(t, clone))
	}
}

// firstRelease rewrites the observed state as the first release (664b136)
// left a pool: templates without a request or rendering record, rendered
// without what later renderings add (the VM's pod network, the kubelet
// reservations) and with the metal installer, under other names, and the
// MachineDeployment on them. It returns the running names.
func firstRelease(t *testing.T, obs map[resource.Name]resource.ObservedComposed) (kmt, tct string) {
	t.Helper()
	out := map[resource.Name]resource.ObservedComposed{}
	renamed := map[string]string{}
	for n, o := range obs {
		u := o.Resource.DeepCopy()
		a := u.GetAnnotations()
		switch {
		case strings.HasPrefix(string(n), read.PrefixMachineTemplate):
			vm, _ := u.GetValue("spec.template.spec.virtualMachineTemplate.spec.template.spec")
			delete(vm.(map[string]any), "networks")
			kmt = u.GetName() + "-first"
			renamed[u.GetName()] = kmt
			u.SetName(kmt)
			n = read.MachineTemplateResource(kmt)
		case strings.HasPrefix(string(n), read.PrefixBootstrapTemplate):
			patches, _ := u.GetValue("spec.template.spec.strategicPatches")
			install := strings.Replace(patches.([]any)[0].(string), "openstack-installer", "installer", 1)
			if err := u.SetValue("spec.template.spec.strategicPatches", []any{install}); err != nil {
				t.Fatal(err)
			}
			tct = u.GetName() + "-first"
			renamed[u.GetName()] = tct
			u.SetName(tct)
			n = read.BootstrapTemplateResource(tct)
		}
		delete(a, pool.AnnAsk)
		delete(a, pool.AnnRendering)
		u.SetAnnotations(a)
		out[n] = resource.ObservedComposed{Resource: u}
	}
	md := out[read.ResourceMachineDeployment].Resource
	for _, path := range []string{"spec.template.spec.infrastructureRef.name", "spec.template.spec.bootstrap.configRef.name"} {
		was, _ := md.GetString(path)
		if err := md.SetValue(path, renamed[was]); err != nil {
			t.Fatal(err)
		}
	}
	clear(obs)
	for n, o := range out {
		obs[n] = o
	}
	return kmt, tct
}

// TestAFirstReleasePoolIsKeptUntilItsOwnerAsks: a pool the first release
// made runs templates without a request record that no rendering this code
// has reproduces. While what this release renders for the pool differs only
// by what later renderings add or render another way (decide.
// UnrecordedDiffs), the running templates are kept as the pool's current
// ask, recorded with it, and RenderingCurrent names them; the next
// reconcile keeps them by their record. A change the owner makes rolls the
// pool onto this release's rendering.
func TestAFirstReleasePoolIsKeptUntilItsOwnerAsks(t *testing.T) {
	base := map[string]any{"osImage": map[string]any{"factory": map[string]any{}}, "replicas": int64(2)}
	w := succeeded
	obs := composeOnce(t, base, w, mdReady(2))
	oldKMT, oldTCT := firstRelease(t, obs)
	cases := map[string]struct {
		reason    string
		spec      map[string]any
		kept      bool
		condition string
	}{
		"SameSpec": {"Nothing the pool asks for changed: both running templates are kept, and RenderingCurrent says so.",
			base, true, "False/" + emit.ReasonKeptFromEarlierRelease},
		"DiskSizeChanged": {"The owner asked for another disk: the pool rolls onto this release's templates, the Talos config too.",
			map[string]any{"osImage": base["osImage"], "replicas": int64(2), "diskSize": "30Gi"}, false, "True/" + emit.ReasonRenderedByThisRelease},
		"TalosVersionChanged": {"The owner asked for another Talos release: the disk and the installer differ, the pool rolls.",
			map[string]any{"osImage": map[string]any{"factory": map[string]any{"version": "v1.13.5"}}, "replicas": int64(2)}, false, "True/" + emit.ReasonRenderedByThisRelease},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out := composetest.Run(Mode{}, request(t, nodePoolXR(tc.spec), w, obs)).Output
			if out.Fatal != nil {
				t.Fatalf("%s\nunexpected fatal: %v", tc.reason, out.Fatal)
			}
			kmt, tct := deployedOn(t, out)
			if got := kmt == oldKMT && tct == oldTCT; got != tc.kept {
				t.Errorf("%s\ndeployment on %s, %s (was %s, %s); kept %t, want %t", tc.reason, kmt, tct, oldKMT, oldTCT, got, tc.kept)
			}
			if !tc.kept && (kmt == oldKMT || tct == oldTCT) {
				t.Errorf("%s\nthe pool rolls, yet keeps a template of the first release: %s, %s", tc.reason, kmt, tct)
			}
			if got := renderingStatus(out); got != tc.condition {
				t.Errorf("%s\nRenderingCurrent = %s, want %s", tc.reason, got, tc.condition)
			}
			wantRendering := strconv.Itoa(render.Rendering)
			if tc.kept {
				wantRendering = strconv.Itoa(render.FirstRendering)
			}
			for _, n := range []resource.Name{read.MachineTemplateResource(kmt), read.BootstrapTemplateResource(tct)} {
				if a := out.Resources[n].Resource.GetAnnotations(); a[pool.AnnAsk] == "" || a[pool.AnnRendering] != wantRendering {
					t.Errorf("%s\n%s records request %q and rendering %q, want a request and rendering %s", tc.reason, n, a[pool.AnnAsk], a[pool.AnnRendering], wantRendering)
				}
			}
			if !tc.kept {
				return
			}
			next := composetest.Run(Mode{}, request(t, nodePoolXR(tc.spec), w, observedFrom(out.Resources, mdReady(2)))).Output
			if diff := cmp.Diff(outputYAML(t, out), outputYAML(t, next)); diff != "" {
				t.Errorf("a kept first-release pool is not a fixed point (-first, +next):\n%s", diff)
			}
		})
	}
}
