package nodepool

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/compose/composetest"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// v1beta2Request is request with the Input asking for the v1beta2 contract.
func v1beta2Request(t *testing.T, spec map[string]any, w worldFixture, obs map[resource.Name]resource.ObservedComposed) composetest.Request {
	t.Helper()
	r := request(t, nodePoolXR(spec), w, obs)
	r.Config.ClusterAPIVersion = v1beta1.ClusterAPIV1Beta2
	return r
}

// machineSetV1beta2 is a v1beta2 MachineSet of the fixture pool: refs by
// apiGroup, kind and name.
func machineSetV1beta2(name, kmt, tct string) *unstructured.Unstructured {
	return obj(clusterapi.APIVersion(v1beta1.ClusterAPIV1Beta2), clusterapi.KindMachineSet, fxNamespace, name, map[string]any{
		"labels": map[string]any{clusterapi.LabelDeploymentName: fxCluster + "-" + fxPool},
		"spec": map[string]any{
			"clusterName": fxCluster,
			"template": map[string]any{"spec": map[string]any{
				"clusterName":       fxCluster,
				"bootstrap":         map[string]any{"configRef": map[string]any{"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": talosconfig.KindTalosConfigTemplate, "name": tct}},
				"infrastructureRef": map[string]any{"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": pool.KindKubevirtMachineTmpl, "name": kmt},
			}},
		},
	})
}

func TestClusterAPIContract(t *testing.T) {
	httpSpec := map[string]any{"osImage": map[string]any{"factory": map[string]any{}}}
	field := func(u *unstructured.Unstructured, path ...string) any {
		v, _, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
		return v
	}

	t.Run("ComposesV1beta2WithContractRefs", func(t *testing.T) {
		out := composetest.Run(Mode{}, v1beta2Request(t, map[string]any{"maxReplicas": int64(3)}, worldFixture{}, nil)).Output
		if out.Fatal != nil {
			t.Fatal(out.Fatal)
		}
		md := &out.Resources[read.ResourceMachineDeployment].Resource.Unstructured
		mhc := &out.Resources[read.ResourceMachineHealthCheck].Resource.Unstructured
		got := map[string]any{
			"md.apiVersion":  md.GetAPIVersion(),
			"md.infraRef":    field(md, "spec", "template", "spec", "infrastructureRef"),
			"md.configRef":   field(md, "spec", "template", "spec", "bootstrap", "configRef"),
			"md.maxSurge":    field(md, "spec", "rollout", "strategy", "rollingUpdate", "maxSurge"),
			"md.replicas":    field(md, "spec", "replicas"),
			"md.status":      field(md, "status"),
			"mhc.apiVersion": mhc.GetAPIVersion(),
			"mhc.startup":    field(mhc, "spec", "checks", "nodeStartupTimeoutSeconds"),
			"mhc.trigger":    field(mhc, "spec", "remediation", "triggerIf", "unhealthyLessThanOrEqualTo"),
		}
		want := map[string]any{
			"md.apiVersion":  "cluster.x-k8s.io/v1beta2",
			"md.infraRef":    map[string]any{"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": pool.KindKubevirtMachineTmpl, "name": md.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["infrastructureRef"].(map[string]any)["name"]},
			"md.configRef":   map[string]any{"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": talosconfig.KindTalosConfigTemplate, "name": md.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["bootstrap"].(map[string]any)["configRef"].(map[string]any)["name"]},
			"md.maxSurge":    int64(3),
			"md.replicas":    nil,
			"md.status":      nil,
			"mhc.apiVersion": "cluster.x-k8s.io/v1beta2",
			"mhc.startup":    int64(1200),
			"mhc.trigger":    "50%",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("-want, +got:\n%s", diff)
		}
	})

	t.Run("AsksForMachineSetsInTheContractVersion", func(t *testing.T) {
		r := v1beta2Request(t, httpSpec, worldFixture{}, nil)
		res := composetest.Run(Mode{}, r)
		sel, err := res.Requirements, res.Err
		if err != nil {
			t.Fatal(err)
		}
		if got := sel[read.ReqMachineSets].GetApiVersion(); got != "cluster.x-k8s.io/v1beta2" {
			t.Errorf("MachineSets are required as %s, want cluster.x-k8s.io/v1beta2", got)
		}
	})

	t.Run("KeepsTheTemplateAV1beta2MachineSetReferences", func(t *testing.T) {
		// The pool ran on an HTTP template; it switches to factory with
		// another schematic, and a v1beta2 MachineSet still points at the
		// old templates through the observed v1beta2 deployment.
		old := composeV1beta2(t, httpSpec)
		oldKMT, oldTCT := templatesOf(old)
		newSpec := map[string]any{"osImage": map[string]any{"factory": map[string]any{"schematicID": "abc123"}}}
		w := worldFixture{sets: []*unstructured.Unstructured{machineSetV1beta2("demo-md0-old", oldKMT, oldTCT)}}
		out := composetest.Run(Mode{}, v1beta2Request(t, newSpec, w, old)).Output
		if out.Fatal != nil {
			t.Fatal(out.Fatal)
		}
		if _, kept := out.Resources[read.MachineTemplateResource(oldKMT)]; !kept {
			t.Errorf("the old template %s a v1beta2 MachineSet references was retired", oldKMT)
		}
		if c := conditionOf(out, compose.ConditionObservedReadable); c.Status != compose.StatusTrue {
			t.Errorf("observed state unreadable: %+v", c)
		}
	})

	t.Run("ReadsAV1beta1DeploymentWhileSwitchingToV1beta2", func(t *testing.T) {
		// Composed under v1beta1, observed once more in v1beta1 after the
		// Input moved to v1beta2: readable, and written anew as v1beta2.
		obs := composeOnce(t, httpSpec, worldFixture{}, mdReady(1))
		out := composetest.Run(Mode{}, v1beta2Request(t, httpSpec, worldFixture{}, obs)).Output
		if out.Fatal != nil {
			t.Fatal(out.Fatal)
		}
		if c := conditionOf(out, compose.ConditionObservedReadable); c.Status != compose.StatusTrue {
			t.Errorf("a v1beta1 deployment is unreadable under v1beta2: %+v", c)
		}
		if got := out.Resources[read.ResourceMachineDeployment].Resource.GetAPIVersion(); got != "cluster.x-k8s.io/v1beta2" {
			t.Errorf("deployment written as %s", got)
		}
		if got := out.Resources[read.ResourceMachineDeployment].Ready; got != resource.ReadyTrue {
			t.Errorf("the ready v1beta1 deployment reads as %s", got)
		}
	})
}

func composeV1beta2(t *testing.T, spec map[string]any) map[resource.Name]resource.ObservedComposed {
	t.Helper()
	out := composetest.Run(Mode{}, v1beta2Request(t, spec, worldFixture{}, nil)).Output
	if out.Fatal != nil {
		t.Fatal(out.Fatal)
	}
	return observedFrom(out.Resources, nil)
}

func templatesOf(obs map[resource.Name]resource.ObservedComposed) (kmt, tct string) {
	for n, o := range obs {
		switch {
		case len(n) > len(read.PrefixMachineTemplate) && string(n)[:len(read.PrefixMachineTemplate)] == read.PrefixMachineTemplate:
			kmt = o.Resource.GetName()
		case len(n) > len(read.PrefixBootstrapTemplate) && string(n)[:len(read.PrefixBootstrapTemplate)] == read.PrefixBootstrapTemplate:
			tct = o.Resource.GetName()
		}
	}
	return kmt, tct
}

func conditionOf(out compose.Output, typ string) compose.Condition {
	for _, c := range out.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return compose.Condition{}
}
