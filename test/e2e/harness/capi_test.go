package harness

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestCAPIManifestsConvert reads Cluster API's webhook configurations and
// CRDs from its module and checks what the harness relies on: the
// MachineDeployment, MachineSet and MachineHealthCheck webhooks exist and
// become loopback urls with the upstream paths, and every multi-version
// CRD of its groups converts through /convert while keeping its storage
// version.
func TestCAPIManifestsConvert(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED in -short mode: reads Cluster API's module through the Go module proxy")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	hooks, err := CAPIWebhookConfigurations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := URLClientConfigs(hooks, "https://127.0.0.1:9443", []byte("ca")); err != nil {
		t.Fatal(err)
	}
	urls := map[string]string{}
	for _, h := range hooks {
		if !strings.HasPrefix(h.GetName(), "capi-") {
			t.Errorf("webhook configuration %s is not named with config/default's capi- prefix", h.GetName())
		}
		ws, _, _ := unstructured.NestedSlice(h.Object, "webhooks")
		for _, w := range ws {
			m := w.(map[string]any)
			u, _, _ := unstructured.NestedString(m, "clientConfig", "url")
			urls[m["name"].(string)] = u
		}
	}
	for name, want := range map[string]string{
		"default.machinedeployment.cluster.x-k8s.io":     "https://127.0.0.1:9443/mutate-cluster-x-k8s-io-v1beta2-machinedeployment",
		CAPIValidationWebhook:                            "https://127.0.0.1:9443/validate-cluster-x-k8s-io-v1beta2-machinedeployment",
		"validation.machineset.cluster.x-k8s.io":         "https://127.0.0.1:9443/validate-cluster-x-k8s-io-v1beta2-machineset",
		"validation.machinehealthcheck.cluster.x-k8s.io": "https://127.0.0.1:9443/validate-cluster-x-k8s-io-v1beta2-machinehealthcheck",
	} {
		if diff := cmp.Diff(want, urls[name]); diff != "" {
			t.Errorf("url of webhook %s (-want +got):\n%s", name, diff)
		}
	}

	crds, err := UpstreamCRDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := &CAPI{WebhookURL: "https://127.0.0.1:9443", CABundle: []byte("ca")}
	if n := c.ConvertByWebhook(crds); n < 6 {
		t.Errorf("ConvertByWebhook converted %d CRDs, want at least Cluster, Machine, MachineSet, MachineDeployment, MachineHealthCheck, MachinePool", n)
	}
	LabelProviderContracts(crds)
	for _, o := range crds {
		g, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		switch o.GetName() {
		case "machinedeployments.cluster.x-k8s.io":
			if u, _, _ := unstructured.NestedString(o.Object, "spec", "conversion", "webhook", "clientConfig", "url"); u != "https://127.0.0.1:9443/convert" {
				t.Errorf("%s converts at %q, want the manager's /convert", o.GetName(), u)
			}
			vs, _, _ := unstructured.NestedSlice(o.Object, "spec", "versions")
			for _, v := range vs {
				m := v.(map[string]any)
				if m["storage"] == true && m["name"] != "v1beta2" {
					t.Errorf("%s stores %v, want upstream's v1beta2", o.GetName(), m["name"])
				}
			}
		case "kubevirtmachinetemplates.infrastructure.cluster.x-k8s.io", "kubevirtmachines.infrastructure.cluster.x-k8s.io":
			if got := o.GetLabels()["cluster.x-k8s.io/v1beta1"]; got != "v1alpha1" {
				t.Errorf("%s (group %s) has contract label %q, want v1alpha1 as CAPK's kustomization sets", o.GetName(), g, got)
			}
		}
	}
}
