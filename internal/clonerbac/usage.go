package clonerbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	protectionv1beta1 "github.com/crossplane/crossplane/apis/v2/protection/v1beta1"

	"github.com/cozystack/function-worker-image/internal/labels"
)

// Keeping the clone permission while a golden lives.
//
// Deleting a catalog leaves its composed resources to the garbage collector
// (Crossplane v2.2.0 internal/controller/apiextensions/composite/reconciler.go,
// the meta.WasDeleted branch; functions are not called). A golden a template
// clones survives it, since the pool's Usage makes Crossplane's webhook refuse
// its delete; the clone ClusterRole and RoleBinding have to survive as long,
// or KubeVirt refuses every VM create and update of the pools that clone it.
// So the catalog composes, while it lives, a Usage of its RoleBinding by each
// golden that is pinned, and a Usage of its ClusterRole by its RoleBinding,
// all with replayDeletion. The usage controller makes each Usage owned by its
// `by` object (internal/controller/protection/usage/reconciler.go), so the
// garbage collector keeps it until that object is gone; one that is deleted
// anyway waits for its `by` object while it still carries Crossplane's
// composite label. Once the last golden is gone the RoleBinding's refused
// delete is replayed, and then the ClusterRole's.

// UsageAPIVersion and KindUsage are Crossplane's namespaced Usage.
const (
	UsageAPIVersion = "protection.crossplane.io/v1beta1"
	KindUsage       = "Usage"
)

// BindingUsageName names the Usage of a catalog's RoleBinding by one golden
// of the golden namespace: the catalog's RBAC name and the golden's label
// hash, short enough for a label-sized name and stable while the golden is.
func BindingUsageName(catalog, goldenNamespace, golden string) string {
	return Name(catalog) + "-" + labels.GoldenHash(goldenNamespace, golden)
}

// BindingUsage is the Usage, in the golden namespace, of the catalog's
// RoleBinding by the golden DataVolume golden: the binding cannot be deleted
// while the golden exists, and its refused delete is replayed after.
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

// RoleUsage is the Usage, in the golden namespace, of the catalog's
// ClusterRole by its RoleBinding: the role outlives the binding that grants
// it.
//
// The ClusterRole is cluster-scoped, so `of` names the empty namespace
// explicitly. Left unset it defaults to the Usage's own namespace, and
// Crossplane indexes the Usage under that namespace while its webhook looks
// up the usages of a deleted object under the object's own (empty) one
// (v2.2.0 internal/protection/usage/finder.go, indexVal and FindUsageOf): the
// webhook would find no usage and allow the delete, although the usage
// controller had labelled the role in use. The Usage's CEL rules allow a
// namespaced `of` whenever `by` is set (apis/protection/v1beta1/usage_types.go).
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

// usage carries no label: a catalog's request holds one Usage per pinned
// golden, about 1.2 KB each on the wire, and the catalog's request is what
// nears the 4 MiB limit first (docs/performance.md). Its name says whose it is.
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
