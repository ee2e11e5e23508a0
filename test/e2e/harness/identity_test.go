package harness

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestCrossplaneChartRBAC renders the chart's core RBAC from the module, for
// every supported Crossplane version, and checks what the suite relies on:
// the aggregated role, its rules in the aggregate-to role, and the binding
// of ServiceAccount crossplane in crossplane-system.
func TestCrossplaneChartRBAC(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED in -short mode: reads Crossplane's module through the Go module proxy")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	objs, err := CrossplaneChartRBAC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		byName[o.GetKind()+"/"+o.GetName()] = o
	}
	agg := byName["ClusterRole/crossplane"]
	sel, _, _ := unstructured.NestedSlice(agg.Object, "aggregationRule", "clusterRoleSelectors")
	if diff := cmp.Diff([]any{map[string]any{"matchLabels": map[string]any{aggregateLabel: "true"}}}, sel); diff != "" {
		t.Errorf("crossplane's aggregationRule (-want +got):\n%s", diff)
	}
	sys := byName["ClusterRole/crossplane:system:aggregate-to-crossplane"]
	if sys.GetLabels()[aggregateLabel] != "true" {
		t.Errorf("crossplane:system:aggregate-to-crossplane labels = %v, want %s=true", sys.GetLabels(), aggregateLabel)
	}
	if rules, _, _ := unstructured.NestedSlice(sys.Object, "rules"); len(rules) == 0 {
		t.Error("crossplane:system:aggregate-to-crossplane has no rules")
	}
	b := byName["ClusterRoleBinding/crossplane"]
	subjects, _, _ := unstructured.NestedSlice(b.Object, "subjects")
	want := []any{map[string]any{"kind": "ServiceAccount", "name": CrossplaneServiceAccount, "namespace": CrossplaneNamespace}}
	if diff := cmp.Diff(want, subjects); diff != "" {
		t.Errorf("binding subjects (-want +got):\n%s", diff)
	}
	if name, _, _ := unstructured.NestedString(b.Object, "roleRef", "name"); name != "crossplane" {
		t.Errorf("binding roleRef.name = %q, want crossplane", name)
	}
	if b.GetLabels()["app.kubernetes.io/managed-by"] != "Helm" {
		t.Errorf("binding labels = %v: the chart's labels did not render", b.GetLabels())
	}
}

func TestXRDRoles(t *testing.T) {
	xrd := MustObject(`
apiVersion: apiextensions.crossplane.io/v2
kind: CompositeResourceDefinition
metadata:
  name: xnodepools.workerimage.cozystack.io
spec:
  group: workerimage.cozystack.io
  names: {kind: XNodePool, plural: xnodepools}
`)
	got, err := XRDRoles([]*unstructured.Unstructured{xrd, MustObject("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")})
	if err != nil {
		t.Fatal(err)
	}
	want := MustObject(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: crossplane:composite:xnodepools.workerimage.cozystack.io:aggregate-to-crossplane
  labels: {rbac.crossplane.io/aggregate-to-crossplane: "true"}
rules:
- {apiGroups: [workerimage.cozystack.io], resources: [xnodepools, xnodepools/status], verbs: ["*"]}
- {apiGroups: [workerimage.cozystack.io], resources: [xnodepools/finalizers], verbs: [update]}
`)
	if len(got) != 1 {
		t.Fatalf("got %d roles, want 1", len(got))
	}
	if diff := cmp.Diff(want.Object, got[0].Object); diff != "" {
		t.Errorf("XRDRoles (-want +got):\n%s", diff)
	}
}
