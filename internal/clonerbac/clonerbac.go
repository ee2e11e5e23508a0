// Package clonerbac is the one definition of the clone permission: the RBAC
// the catalog composes so tenant VMs may clone the goldens, and the check a
// node pool runs before its first worker is created.
//
// It checks what CDI checks: a cross-namespace PVC source needs create on
// cdi.kubevirt.io datavolumes/source for the source PVC's name, in its
// namespace (CDI API pkg/apis/core/v1beta1/authorize_utils.go), which
// KubeVirt asks as the VM's service account (kubevirt
// pkg/virt-controller/watch/vm/vm.go authorizeDataVolume); a refusal is an
// UnauthorizedDataVolumeCreate event and a retry later.
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

// Name names a catalog's ClusterRole and RoleBinding, so two catalogs never
// share one.
func Name(catalog string) string { return "workerimage-clone-" + catalog }

// objectLabels mark the clone RBAC so that node pools can select it.
func objectLabels() map[string]string {
	return map[string]string{labels.ManagedBy: labels.ManagedByValue, labels.CloneRBAC: "true"}
}

// Role is the catalog's ClusterRole: create on datavolumes/source for the
// goldens by name, and no rule without goldens (a rule with no
// resourceNames would allow cloning any PVC).
func Role(catalog string, goldens []string) *rbacv1.ClusterRole {
	cr := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: Name(catalog), Labels: objectLabels()},
	}
	if len(goldens) == 0 {
		// Empty, not nil, so a rule granted before is taken away.
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

// VMServiceAccounts are the subjects for serviceAccount in each namespace,
// sorted: least privilege, since KubeVirt asks as that account only.
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

// Allows reports whether the golden namespace's RoleBindings of ClusterRoles
// let serviceAccount of namespace clone PVC golden, evaluating CDI's
// SubjectAccessReview as the RBAC authorizer does (k8s.io/kubernetes
// pkg/registry/rbac/validation/rule.go appliesToUser; k8s.io/component-helpers
// auth/rbac/validation Covers). Other bindings are not the function's.
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

// appliesTo reports whether a binding subject matches the review CDI sends
// (authorize_utils.go CanServiceAccountClonePVC): the service account, a
// User of its name, or its groups. CDI's alternative, create on pods, is
// never granted by the function, so not looked for.
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
