package clonerbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	protectionv1beta1 "github.com/crossplane/crossplane/apis/v2/protection/v1beta1"

	"github.com/cozystack/function-worker-image/internal/labels"
)

// Keeping the clone permission while a golden lives. A deleted catalog's
// resources go to the garbage collector with no function call (Crossplane
// v2.2.0 internal/controller/apiextensions/composite/reconciler.go,
// meta.WasDeleted). A pinned golden survives through its pool's Usage; the
// clone RBAC must too, or KubeVirt refuses the pools' VMs. So each pinned
// golden uses the RoleBinding and the RoleBinding the ClusterRole, with
// replayDeletion; the usage controller makes each Usage owned by its `by`
// object (internal/controller/protection/usage/reconciler.go).

// UsageAPIVersion and KindUsage are Crossplane's namespaced Usage.
const (
	UsageAPIVersion = "protection.crossplane.io/v1beta1"
	KindUsage       = "Usage"
)

// BindingUsageName names the Usage of a catalog's RoleBinding by one golden,
// from the golden's label hash: short and stable.
func BindingUsageName(catalog, goldenNamespace, golden string) string {
	return Name(catalog) + "-" + labels.GoldenHash(goldenNamespace, golden)
}

// BindingUsage is the Usage of the catalog's RoleBinding by the golden
// DataVolume golden, replaying its refused delete after.
func BindingUsage(catalog, goldenNamespace, golden string) *protectionv1beta1.Usage {
	return usage(BindingUsageName(catalog, goldenNamespace, golden), goldenNamespace,
		protectionv1beta1.NamespacedResource{
			APIVersion:  rbacv1.SchemeGroupVersion.String(),
			Kind:        "RoleBinding",
			ResourceRef: &protectionv1beta1.NamespacedResourceRef{Name: Name(catalog)},
		},
		protectionv1beta1.Resource{
			APIVersion:  cdiv1.SchemeGroupVersion.String(),
			Kind:        "DataVolume",
			ResourceRef: &protectionv1beta1.ResourceRef{Name: golden},
		})
}

// RoleUsage is the Usage of the catalog's ClusterRole by its RoleBinding.
//
// `of` names the empty namespace explicitly: unset, it defaults to the
// Usage's, under which Crossplane indexes it, while the webhook looks a
// cluster-scoped object's usages up under "" (v2.2.0
// internal/protection/usage/finder.go indexVal, FindUsageOf) and would allow
// the delete. The CEL rules allow this when `by` is set
// (apis/protection/v1beta1/usage_types.go).
func RoleUsage(catalog, goldenNamespace string) *protectionv1beta1.Usage {
	return usage(Name(catalog), goldenNamespace,
		protectionv1beta1.NamespacedResource{
			APIVersion:  rbacv1.SchemeGroupVersion.String(),
			Kind:        "ClusterRole",
			ResourceRef: &protectionv1beta1.NamespacedResourceRef{Name: Name(catalog), Namespace: ptr.To("")},
		},
		protectionv1beta1.Resource{
			APIVersion:  rbacv1.SchemeGroupVersion.String(),
			Kind:        "RoleBinding",
			ResourceRef: &protectionv1beta1.ResourceRef{Name: Name(catalog)},
		})
}

// usage carries no label: at ~1.2 KB per pinned golden, Usages fill the
// catalog's request, the first to near 4 MiB (docs/performance.md).
func usage(name, namespace string, of protectionv1beta1.NamespacedResource, by protectionv1beta1.Resource) *protectionv1beta1.Usage {
	return &protectionv1beta1.Usage{
		TypeMeta:   metav1.TypeMeta{APIVersion: UsageAPIVersion, Kind: KindUsage},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: protectionv1beta1.UsageSpec{
			Of:             of,
			By:             &by,
			ReplayDeletion: ptr.To(true),
		},
	}
}
