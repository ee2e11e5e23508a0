package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// subjectAccessReview is the API the authorizer answers CDI's clone check on.
var subjectAccessReview = schema.GroupVersionKind{Group: "authorization.k8s.io", Version: "v1", Kind: "SubjectAccessReview"}

// mayClone asks the API server what CDI asks it for a VM's cloned
// DataVolume (CDI API pkg/apis/core/v1beta1/authorize_utils.go,
// CanServiceAccountClonePVC; KubeVirt's virt-controller asks as the VM's
// service account, pkg/virt-controller/watch/vm/vm.go authorizeDataVolume):
// may service account sa of namespace ns create datavolumes/source of the
// golden in the golden namespace.
func mayClone(ctx context.Context, ns, sa, golden string) error {
	res, err := cp.Resource(subjectAccessReview, "")
	if err != nil {
		return err
	}
	sar := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "authorization.k8s.io/v1",
		"kind":       "SubjectAccessReview",
		"spec": map[string]any{
			"user":   "system:serviceaccount:" + ns + ":" + sa,
			"groups": []any{"system:serviceaccounts", "system:serviceaccounts:" + ns},
			"resourceAttributes": map[string]any{
				"namespace":   goldenNamespace,
				"verb":        "create",
				"group":       "cdi.kubevirt.io",
				"resource":    "datavolumes",
				"subresource": "source",
				"name":        golden,
			},
		},
	}}
	got, err := res.Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	if allowed, _, _ := unstructured.NestedBool(got.Object, "status", "allowed"); !allowed {
		reason, _, _ := unstructured.NestedString(got.Object, "status", "reason")
		return fmt.Errorf("service account %s/%s may not clone %s/%s (reason %q)", ns, sa, goldenNamespace, golden, reason)
	}
	return nil
}

// catalogUsage is the catalog's Usage of kind `of` in the golden namespace
// whose `by` names by, or an error.
func catalogUsage(ctx context.Context, of, by string) (*unstructured.Unstructured, error) {
	us, err := cp.List(ctx, harness.Usage, goldenNamespace, "")
	if err != nil {
		return nil, err
	}
	for i := range us {
		kind, _, _ := unstructured.NestedString(us[i].Object, "spec", "of", "kind")
		name, _, _ := unstructured.NestedString(us[i].Object, "spec", "by", "resourceRef", "name")
		if kind == of && name == by {
			return &us[i], nil
		}
	}
	return nil, fmt.Errorf("no Usage of a %s by %s in %s", of, by, goldenNamespace)
}

// cloneRBAC are the kinds and namespaces of a catalog's clone RoleBinding
// and ClusterRole.
var cloneRBAC = []struct {
	gvk schema.GroupVersionKind
	ns  string
}{{harness.RoleBinding, goldenNamespace}, {harness.ClusterRole, ""}}

// rbacKept returns a check that the clone RoleBinding and ClusterRole
// exist, are not being deleted and are labelled in-use.
func rbacKept(name string) func(context.Context) error {
	return func(ctx context.Context) error {
		for _, k := range cloneRBAC {
			o, err := cp.Existing(ctx, k.gvk, k.ns, name)
			if err != nil {
				return err
			}
			if o.GetDeletionTimestamp() != nil {
				return fmt.Errorf("%s %s is being deleted", k.gvk.Kind, joinName(k.ns, name))
			}
			if o.GetLabels()[harness.InUseLabel] != "true" {
				return fmt.Errorf("%s %s is not labelled %s=true: %v", k.gvk.Kind, joinName(k.ns, name), harness.InUseLabel, o.GetLabels())
			}
		}
		return nil
	}
}

// Deleting the catalog while a pool pins one of its goldens keeps the
// golden and the clone RBAC: the catalog composed, while it lived, a Usage
// of its RoleBinding by the pinned golden and one of its ClusterRole by the
// RoleBinding, so the garbage collector's deletes of both are refused
// (recorded on each) and the pool's VM service account may still clone,
// asked as KubeVirt asks, for as long as the pool pins the golden. Once the
// pool goes the golden goes, then the RoleBinding, then the ClusterRole,
// each by Crossplane's replay of the refused delete.
func TestDeletingTheCatalogKeepsClonePermissionWhilePinned(t *testing.T) {
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	const ns, cluster, catalog = "e2e-catalog-rbac", "c20", "e2e-catalog-rbac"
	const serviceAccount = "default" // the Input's cloneRBAC.serviceAccountName default
	inNamespace(t, ns)
	sidA, sidB := schematicID("catalog-rbac-a"), schematicID("catalog-rbac-b")
	goldenA, goldenB := goldenName(sidA), goldenName(sidB)
	readyGolden(t, catalog, sidA, sidB)
	rbac := "workerimage-clone-" + catalog

	xr, kmt := builtinPool(t, ns, cluster, sidA)
	waitGoldenPinned(t, xr, kmt, goldenA)
	cp.WaitExists(t, reconcileTimeout, harness.MachineDeployment, ns, cluster+"-"+poolName)
	// The catalog protects its RBAC for the pinned golden only.
	cp.Eventually(t, reconcileTimeout, "the catalog's Usages of its clone RBAC to be enforced", allOf(rbacKept(rbac), func(ctx context.Context) error {
		for _, want := range []struct{ of, by string }{{"RoleBinding", goldenA}, {"ClusterRole", rbac}} {
			u, err := catalogUsage(ctx, want.of, want.by)
			if err != nil {
				return err
			}
			if s := harness.ConditionStatus(u, "Ready"); s != "True" {
				return fmt.Errorf("Usage %s/%s is not Ready (%q): %v", goldenNamespace, u.GetName(), s, harness.Condition(u, "Ready"))
			}
		}
		if _, err := catalogUsage(ctx, "RoleBinding", goldenB); err == nil {
			return fmt.Errorf("golden %s, which nothing pins, has a Usage of the RoleBinding", goldenB)
		}
		return mayClone(ctx, ns, serviceAccount, goldenA)
	}))

	cp.MustDelete(t, harness.WorkerImageCatalog, "", catalog)
	cp.WaitGone(t, gcTimeout, harness.WorkerImageCatalog, "", catalog)
	cp.WaitGone(t, gcTimeout, harness.DataVolume, goldenNamespace, goldenB)
	// The collector tried the RoleBinding and the ClusterRole and was
	// refused: the webhook recorded each Background delete.
	cp.Eventually(t, gcTimeout, "the garbage collector's deletes of the clone RBAC to be refused", func(ctx context.Context) error {
		for _, k := range cloneRBAC {
			o, err := cp.Existing(ctx, k.gvk, k.ns, rbac)
			if err != nil {
				return err
			}
			if got := o.GetAnnotations()[harness.DeletionAttemptAnnotation]; got != "Background" {
				return fmt.Errorf("%s %s: annotation %s=%q, want \"Background\"", k.gvk.Kind, joinName(k.ns, rbac), harness.DeletionAttemptAnnotation, got)
			}
		}
		return nil
	})
	start := time.Now()
	cp.Consistently(t, 60*time.Second, fmt.Sprintf("service account %s/%s may still clone golden %s after catalog %s is gone", ns, serviceAccount, goldenA, catalog),
		allOf(goldenKept(goldenA), rbacKept(rbac), func(ctx context.Context) error { return mayClone(ctx, ns, serviceAccount, goldenA) }))
	t.Logf("clone permission held for %s after the catalog's deletion was refused", time.Since(start).Round(time.Second))

	// The pool goes (its deletion guard defers the delete until the pool
	// has removed its MachineDeployment): its template and Usages go, the
	// golden's delete is replayed, and then the RoleBinding's and the
	// ClusterRole's.
	deletePool(t, ns, xr.GetName(), cluster+"-"+poolName)
	cp.WaitGone(t, gcTimeout, harness.KubevirtMachineTemplate, ns, kmt.GetName())
	cp.WaitGone(t, gcTimeout, harness.DataVolume, goldenNamespace, goldenA)
	cp.WaitGone(t, gcTimeout, harness.RoleBinding, goldenNamespace, rbac)
	cp.WaitGone(t, gcTimeout, harness.ClusterRole, "", rbac)
	cp.Eventually(t, reconcileTimeout, "the catalog's Usages to be gone", func(ctx context.Context) error {
		for _, want := range []struct{ of, by string }{{"RoleBinding", goldenA}, {"ClusterRole", rbac}} {
			if u, err := catalogUsage(ctx, want.of, want.by); err == nil {
				return fmt.Errorf("Usage %s/%s is still there", goldenNamespace, u.GetName())
			}
		}
		return nil
	})
	if err := mayClone(context.Background(), ns, serviceAccount, goldenA); err == nil {
		t.Errorf("service account %s/%s may still clone %s after the clone RBAC is gone", ns, serviceAccount, goldenA)
	}
	nothingRefusedIn(t, ns)
}
