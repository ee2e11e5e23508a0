package harness

import (
	"context"
	"encoding/base64"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestURLClientConfigsOfUpstreamFiles converts Crossplane's own webhook
// configuration files, as InstallCrossplaneWebhooks does, and checks that
// only the clientConfig changes: a url on loopback with the upstream path,
// the CA bundle, no service.
func TestURLClientConfigsOfUpstreamFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED in -short mode: reads Crossplane's module through the Go module proxy")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	objs, err := CrossplaneWebhookConfigurations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		before[i] = o.DeepCopy()
	}
	ca := []byte("-----BEGIN CERTIFICATE-----\ntest\n-----END CERTIFICATE-----\n")
	if err := URLClientConfigs(objs, "https://127.0.0.1:12345/", ca); err != nil {
		t.Fatal(err)
	}

	var got *unstructured.Unstructured
	for _, o := range objs {
		if o.GetName() == "crossplane-no-usages" {
			got = o
		}
	}
	if got == nil {
		t.Fatalf("no ValidatingWebhookConfiguration crossplane-no-usages among %d objects", len(objs))
	}
	whs, _, _ := unstructured.NestedSlice(got.Object, "webhooks")
	if len(whs) != 1 {
		t.Fatalf("crossplane-no-usages has %d webhooks, want 1", len(whs))
	}
	wh := whs[0].(map[string]any)
	want := map[string]any{
		"url":      "https://127.0.0.1:12345/validate-no-usages",
		"caBundle": base64.StdEncoding.EncodeToString(ca),
	}
	if diff := cmp.Diff(want, wh["clientConfig"]); diff != "" {
		t.Errorf("clientConfig of %v (-want +got):\n%s", wh["name"], diff)
	}
	if wh["name"] != UsageWebhookName || wh["failurePolicy"] != "Fail" {
		t.Errorf("webhook is %v with failurePolicy %v, want %s with Fail", wh["name"], wh["failurePolicy"], UsageWebhookName)
	}

	// Everything but the clientConfigs is the upstream file's.
	for i := range objs {
		a, b := before[i].DeepCopy(), objs[i].DeepCopy()
		for _, u := range []*unstructured.Unstructured{a, b} {
			ws, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
			for _, w := range ws {
				delete(w.(map[string]any), "clientConfig")
			}
			_ = unstructured.SetNestedSlice(u.Object, ws, "webhooks")
		}
		if diff := cmp.Diff(a.Object, b.Object); diff != "" {
			t.Errorf("%s changed beyond its clientConfigs (-upstream +converted):\n%s", objs[i].GetName(), diff)
		}
	}
}

// TestURLClientConfigsRefusesOtherShapes: a kind the initializer would not
// apply, or a webhook without a service clientConfig, is an error rather
// than a silently wrong configuration.
func TestURLClientConfigsRefusesOtherShapes(t *testing.T) {
	for name, doc := range map[string]string{
		"other kind": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
		"url already": "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: x\n" +
			"webhooks:\n- name: a.example.com\n  clientConfig:\n    url: https://example.com/\n",
	} {
		t.Run(name, func(t *testing.T) {
			if err := URLClientConfigs([]*unstructured.Unstructured{MustObject(doc)}, "https://127.0.0.1:1", []byte("ca")); err == nil {
				t.Errorf("URLClientConfigs accepted %s", name)
			}
		})
	}
}
