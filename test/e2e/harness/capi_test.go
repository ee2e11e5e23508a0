package harness

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestCAPIManifestsConvert reads the webhook configurations and CRDs of
// Cluster API, CABPT and CAPK from their modules and checks what the
// harness relies on: the webhooks the managers serve exist and become
// loopback urls with the upstream paths, every multi-version CRD of a
// manager's groups converts through its /convert while keeping its storage
// version, and the providers' CRDs carry their contract labels.
func TestCAPIManifestsConvert(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED in -short mode: reads Cluster API's module through the Go module proxy")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	capi := &Manager{Name: "capi", Module: CAPIModule, Version: CAPIVersion, WebhookURL: "https://127.0.0.1:9443", CABundle: []byte("ca"), converts: capiConvertedGroup, webhookCount: 2}
	cabpt := &Manager{Name: "cabpt", Module: CABPTModule, Version: CABPTVersion, WebhookURL: "https://127.0.0.1:9444", CABundle: []byte("ca"), converts: map[string]bool{"bootstrap.cluster.x-k8s.io": true}, webhookCount: 1}
	capk := &Manager{Name: "capk", Module: CAPKModule, Version: CAPKVersion, WebhookURL: "https://127.0.0.1:9445", CABundle: []byte("ca"), webhookCount: 1}
	urls := map[string]string{}
	for _, m := range []*Manager{capi, cabpt, capk} {
		hooks, err := m.WebhookConfigurations(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := URLClientConfigs(hooks, m.WebhookURL, m.CABundle); err != nil {
			t.Fatal(err)
		}
		for _, h := range hooks {
			if !strings.HasPrefix(h.GetName(), m.Name+"-") {
				t.Errorf("webhook configuration %s is not named with config/default's %s- prefix", h.GetName(), m.Name)
			}
			ws, _, _ := unstructured.NestedSlice(h.Object, "webhooks")
			for _, w := range ws {
				m := w.(map[string]any)
				u, _, _ := unstructured.NestedString(m, "clientConfig", "url")
				urls[m["name"].(string)] = u
			}
		}
	}
	for name, want := range map[string]string{
		"default.machinedeployment.cluster.x-k8s.io":                         "https://127.0.0.1:9443/mutate-cluster-x-k8s-io-v1beta2-machinedeployment",
		CAPIValidationWebhook:                                                "https://127.0.0.1:9443/validate-cluster-x-k8s-io-v1beta2-machinedeployment",
		"validation.machineset.cluster.x-k8s.io":                             "https://127.0.0.1:9443/validate-cluster-x-k8s-io-v1beta2-machineset",
		"validation.machinehealthcheck.cluster.x-k8s.io":                     "https://127.0.0.1:9443/validate-cluster-x-k8s-io-v1beta2-machinehealthcheck",
		"vtalosconfig.cluster.x-k8s.io":                                      "https://127.0.0.1:9444/validate-bootstrap-cluster-x-k8s-io-v1alpha3-talosconfig",
		"vtalosconfigtemplate.cluster.x-k8s.io":                              "https://127.0.0.1:9444/validate-bootstrap-cluster-x-k8s-io-v1alpha3-talosconfigtemplate",
		"validation.kubevirtmachinetemplate.infrastructure.cluster.x-k8s.io": "https://127.0.0.1:9445/validate-infrastructure-cluster-x-k8s-io-v1alpha1-kubevirtmachinetemplate",
	} {
		if diff := cmp.Diff(want, urls[name]); diff != "" {
			t.Errorf("url of webhook %s (-want +got):\n%s", name, diff)
		}
	}

	crds, err := UpstreamCRDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := capi.ConvertByWebhook(crds); n < 6 {
		t.Errorf("ConvertByWebhook converted %d CRDs, want at least Cluster, Machine, MachineSet, MachineDeployment, MachineHealthCheck, MachinePool", n)
	}
	if n := cabpt.ConvertByWebhook(crds); n != 2 {
		t.Errorf("CABPT's ConvertByWebhook converted %d CRDs, want TalosConfig and TalosConfigTemplate", n)
	}
	if n := capk.ConvertByWebhook(crds); n != 0 {
		t.Errorf("CAPK's ConvertByWebhook converted %d CRDs, want none (one version each)", n)
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
		case "talosconfigs.bootstrap.cluster.x-k8s.io":
			if u, _, _ := unstructured.NestedString(o.Object, "spec", "conversion", "webhook", "clientConfig", "url"); u != "https://127.0.0.1:9444/convert" {
				t.Errorf("%s converts at %q, want CABPT's /convert", o.GetName(), u)
			}
			if got := o.GetLabels()["cluster.x-k8s.io/v1beta1"]; got != "v1alpha3" {
				t.Errorf("%s (group %s) has contract label %q, want v1alpha3 as CABPT's kustomization sets", o.GetName(), g, got)
			}
		case "kubevirtmachinetemplates.infrastructure.cluster.x-k8s.io", "kubevirtmachines.infrastructure.cluster.x-k8s.io", "kubevirtclusters.infrastructure.cluster.x-k8s.io":
			if got := o.GetLabels()["cluster.x-k8s.io/v1beta1"]; got != "v1alpha1" {
				t.Errorf("%s (group %s) has contract label %q, want v1alpha1 as CAPK's kustomization sets", o.GetName(), g, got)
			}
		}
	}
}

// TestKubeVirtCRDs reads the VirtualMachine and VirtualMachineInstance
// schemas from KubeVirt's module source and checks they are the structural
// schemas the kube-apiserver needs: the spec fields CAPK writes and the
// status fields it reads are there.
func TestKubeVirtCRDs(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED in -short mode: reads KubeVirt's module through the Go module proxy")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	crds, err := KubeVirtCRDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, c := range crds {
		vs, _, _ := unstructured.NestedSlice(c.Object, "spec", "versions")
		v := vs[0].(map[string]any)
		props, _, _ := unstructured.NestedMap(v, "schema", "openAPIV3Schema", "properties")
		spec, _, _ := unstructured.NestedMap(props, "spec", "properties")
		status, _, _ := unstructured.NestedMap(props, "status", "properties")
		for _, k := range []string{"dataVolumeTemplates", "runStrategy", "template", "domain", "volumes"} {
			if _, ok := spec[k]; ok {
				got[c.GetName()] = append(got[c.GetName()], "spec."+k)
			}
		}
		for _, k := range []string{"interfaces", "conditions", "printableStatus", "phase"} {
			if _, ok := status[k]; ok {
				got[c.GetName()] = append(got[c.GetName()], "status."+k)
			}
		}
	}
	want := map[string][]string{
		"virtualmachines.kubevirt.io":         {"spec.dataVolumeTemplates", "spec.runStrategy", "spec.template", "status.conditions", "status.printableStatus"},
		"virtualmachineinstances.kubevirt.io": {"spec.domain", "spec.volumes", "status.interfaces", "status.conditions", "status.phase"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("KubeVirt CRD schema fields (-want +got):\n%s", diff)
	}
}
