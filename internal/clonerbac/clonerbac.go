// Package clonerbac is the one definition of the clone permission: the RBAC
// the catalog composes so that tenant VMs may clone the goldens, and the
// check a node pool runs to know whether that permission is already in place
// for its VMs before it lets its first worker be created.
//
// What is checked is what CDI checks. A DataVolume whose source is a PVC in
// another namespace is authorized by a SubjectAccessReview for create on
// cdi.kubevirt.io datavolumes/source, in the source namespace, with the
// resource name of the source PVC (CDI API module,
// pkg/apis/core/v1beta1/authorize_utils.go). For a VM's dataVolumeTemplates
// KubeVirt's virt-controller asks it as the VM's service account, with the
// groups system:serviceaccounts and system:serviceaccounts:<namespace>
// (kubevirt pkg/virt-controller/watch/vm/vm.go, authorizeDataVolume), and a
// refusal is an UnauthorizedDataVolumeCreate event and a retry later.
package clonerbac

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	rbacvalidation "k8s.io/component-helpers/auth/rbac/validation"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/internal/labels"
)

// Resource is the subresource CDI authorizes a cross-namespace clone on.
var Resource = "datavolumes/" + cdiv1.DataVolumeCloneSourceSubresource

// Service-account groups the API server gives every service account
// (k8s.io/apiserver pkg/authentication/serviceaccount/util.go).
const (
	allServiceAccountsGroup = "system:serviceaccounts"
	namespaceGroupPrefix    = "system:serviceaccounts:"
)

// Name names the ClusterRole and the RoleBinding of a catalog. It carries the
// catalog's name so that two catalogs never fight over one object.
func Name(catalog string) string { return "workerimage-clone-" + catalog }

// objectLabels mark the clone RBAC so that node pools can select it.
func objectLabels() map[string]string {
	return map[string]string{labels.ManagedBy: labels.ManagedByValue, labels.CloneRBAC: "true"}
}

// Role is the catalog's ClusterRole: create on datavolumes/source, limited
// to the goldens by name. With no goldens it has no rule at all: a rule with
// no resourceNames would allow cloning any PVC of the golden namespace.
func Role(catalog string, goldens []string) *rbacv1.ClusterRole {
	cr := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: Name(catalog), Labels: objectLabels()},
	}
	if len(goldens) == 0 {
		// An empty list, not none: the desired role says it grants nothing,
		// so that a rule it granted before is taken away.
		cr.Rules = []rbacv1.PolicyRule{}
		return cr
	}
	names := slices.Clone(goldens)
	slices.Sort(names)
	cr.Rules = []rbacv1.PolicyRule{{
		APIGroups:     []string{cdiv1.SchemeGroupVersion.Group},
		Resources:     []string{Resource},
		Verbs:         []string{"create"},
		ResourceNames: slices.Compact(names),
	}}
	return cr
}

// Binding binds the catalog's ClusterRole in the golden namespace to the
// given subjects, in the order given.
func Binding(catalog, goldenNamespace string, subjects []rbacv1.Subject) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: Name(catalog), Namespace: goldenNamespace, Labels: objectLabels()},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: Name(catalog)},
		Subjects:   subjects,
	}
}

// VMServiceAccounts are the subjects for the VM service account serviceAccount
// of each namespace, sorted by namespace: least privilege, since KubeVirt
// asks as that account and no other.
func VMServiceAccounts(serviceAccount string, namespaces []string) []rbacv1.Subject {
	ns := slices.Clone(namespaces)
	slices.Sort(ns)
	ns = slices.Compact(ns)
	out := make([]rbacv1.Subject, 0, len(ns))
	for _, n := range ns {
		out = append(out, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: n})
	}
	return out
}

// AllServiceAccounts is the subject of every service account of the cluster,
// the explicit AllServiceAccounts scope.
func AllServiceAccounts() []rbacv1.Subject {
	return []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: allServiceAccountsGroup}}
}

// Allows reports whether the RoleBindings of the golden namespace, with the
// ClusterRoles they refer to, let service account serviceAccount of
// namespace clone PVC golden: the SubjectAccessReview CDI sends, evaluated
// the way the RBAC authorizer does (subjects as in k8s.io/kubernetes
// pkg/registry/rbac/validation/rule.go appliesToUser; rules with
// k8s.io/component-helpers auth/rbac/validation Covers). Bindings outside
// goldenNamespace and bindings of a namespaced Role are not read: the
// function composes neither.
func Allows(bindings []rbacv1.RoleBinding, roles []rbacv1.ClusterRole, goldenNamespace, namespace, serviceAccount, golden string) bool {
	want := []rbacv1.PolicyRule{{
		APIGroups:     []string{cdiv1.SchemeGroupVersion.Group},
		Resources:     []string{Resource},
		Verbs:         []string{"create"},
		ResourceNames: []string{golden},
	}}
	for _, rb := range bindings {
		if rb.Namespace != goldenNamespace || rb.DeletionTimestamp != nil {
			continue
		}
		if rb.RoleRef.Kind != "ClusterRole" || !slices.ContainsFunc(rb.Subjects, func(s rbacv1.Subject) bool {
			return appliesTo(s, namespace, serviceAccount)
		}) {
			continue
		}
		for _, cr := range roles {
			if cr.Name != rb.RoleRef.Name {
				continue
			}
			if ok, _ := rbacvalidation.Covers(cr.Rules, want); ok {
				return true
			}
		}
	}
	return false
}

// appliesTo reports whether a binding subject matches the review CDI sends:
// user system:serviceaccount:<ns>:<name> with exactly the groups
// system:serviceaccounts and system:serviceaccounts:<ns>
// (CanServiceAccountClonePVC in authorize_utils.go); a User subject of that
// exact name matches too. CDI also accepts create on pods of the same name
// in the golden namespace; the function never grants that, so it is not
// looked for.
func appliesTo(s rbacv1.Subject, namespace, serviceAccount string) bool {
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		return s.Name == serviceAccount && s.Namespace == namespace
	case rbacv1.GroupKind:
		return s.Name == allServiceAccountsGroup || s.Name == namespaceGroupPrefix+namespace
	case rbacv1.UserKind:
		return s.Name == "system:serviceaccount:"+namespace+":"+serviceAccount
	}
	return false
}
