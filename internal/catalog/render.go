package catalog

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/internal/labels"
)

// goldenDataVolume is the desired golden: an HTTP import of the Talos disk
// image, bound immediately (it has no consumer to wait for), with an explicit
// size and, when one is set, class. It is built from scratch on every call so
// that the desired state carries only what the function has an opinion on.
func goldenDataVolume(g Golden) *cdiv1.DataVolume {
	dv := &cdiv1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:      g.Name,
			Namespace: g.Namespace,
			Labels: map[string]string{
				labels.Golden:    labels.GoldenHash(g.Namespace, g.Name),
				labels.ManagedBy: labels.ManagedByValue,
			},
			Annotations: map[string]string{
				labels.AnnCDIBindImmediate: "true",
				labels.AnnGolden:           labels.GoldenRef(g.Namespace, g.Name),
				labels.AnnSchematicID:      g.SchematicID,
				labels.AnnTalosVersion:     g.Version,
			},
		},
		Spec: cdiv1.DataVolumeSpec{
			Source:      &cdiv1.DataVolumeSource{HTTP: &cdiv1.DataVolumeSourceHTTP{URL: g.URL}},
			ContentType: cdiv1.DataVolumeKubeVirt,
			Storage: &cdiv1.StorageSpec{
				Resources: corev1.VolumeResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceStorage: g.Storage},
				},
			},
		},
	}
	if g.StorageClass != "" {
		class := g.StorageClass
		dv.Spec.Storage.StorageClassName = &class
	}
	return dv
}

// cloneRBACName names the ClusterRole and the RoleBinding of a catalog. It
// carries the catalog's name so that two catalogs never fight over one object.
func cloneRBACName(xrName string) string { return "workerimage-clone-" + xrName }

// cloneClusterRole grants what KubeVirt checks, as the VM's service account,
// before it creates a worker disk that clones from another namespace: create
// on the datavolumes/source subresource of the golden namespace.
func cloneClusterRole(xrName string) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{
			Name:   cloneRBACName(xrName),
			Labels: map[string]string{labels.ManagedBy: labels.ManagedByValue},
		},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{cdiv1.SchemeGroupVersion.Group},
			Resources: []string{"datavolumes/" + cdiv1.DataVolumeCloneSourceSubresource},
			Verbs:     []string{"create"},
		}},
	}
}

// cloneRoleBinding grants the clone role in the golden namespace to the
// service-account groups in groups (already sorted).
func cloneRoleBinding(xrName, namespace string, groups []string) *rbacv1.RoleBinding {
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{
			Name:      cloneRBACName(xrName),
			Namespace: namespace,
			Labels:    map[string]string{labels.ManagedBy: labels.ManagedByValue},
		},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: cloneRBACName(xrName)},
	}
	for _, g := range groups {
		rb.Subjects = append(rb.Subjects, rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: g})
	}
	return rb
}
