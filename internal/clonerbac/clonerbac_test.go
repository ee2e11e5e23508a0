package clonerbac

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	goldenNS = "cozy-public"
	golden   = "talos-worker-abc-v1.13.6"
)

func TestRole(t *testing.T) {
	cases := map[string]struct {
		reason  string
		goldens []string
		want    []rbacv1.PolicyRule
	}{
		"LimitedToTheGoldensByName": {
			reason:  "The role lets VMs clone the goldens and no other PVC of the golden namespace; names are sorted and deduplicated.",
			goldens: []string{"b", "a", "b"},
			want:    []rbacv1.PolicyRule{{APIGroups: []string{"cdi.kubevirt.io"}, Resources: []string{"datavolumes/source"}, Verbs: []string{"create"}, ResourceNames: []string{"a", "b"}}},
		},
		"NoGoldensNoRule": {
			reason: "A rule without resourceNames would allow cloning every PVC of the namespace, so an empty catalog grants nothing, and says so with an empty list.",
			want:   []rbacv1.PolicyRule{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Role("default", tc.goldens)
			if diff := cmp.Diff(tc.want, got.Rules); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			if got.Name != "workerimage-clone-default" || got.Labels["workerimage.cozystack.io/clone-rbac"] != "true" {
				t.Errorf("the role must be named for its catalog and labelled for node pools to find; got %q %v", got.Name, got.Labels)
			}
		})
	}
}

func TestVMServiceAccounts(t *testing.T) {
	got := VMServiceAccounts("default", []string{"tenant-b", "tenant-a", "tenant-b"})
	want := []rbacv1.Subject{
		{Kind: "ServiceAccount", Name: "default", Namespace: "tenant-a"},
		{Kind: "ServiceAccount", Name: "default", Namespace: "tenant-b"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("one subject per pinning namespace, the VM service account only, sorted\n-want, +got:\n%s", diff)
	}
}

func TestAllows(t *testing.T) {
	role := func(names ...string) rbacv1.ClusterRole { return *Role("default", names) }
	bind := func(ns string, subjects ...rbacv1.Subject) rbacv1.RoleBinding {
		return *Binding("default", ns, subjects)
	}
	sa := func(ns, name string) rbacv1.Subject {
		return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}
	}
	group := func(name string) rbacv1.Subject {
		return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: name}
	}
	deleted := bind(goldenNS, sa("tenant-a", "default"))
	deleted.DeletionTimestamp = &metav1.Time{}
	wildcard := rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: Name("default")}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}

	cases := map[string]struct {
		reason   string
		bindings []rbacv1.RoleBinding
		roles    []rbacv1.ClusterRole
		want     bool
	}{
		"TheNamespacesVMServiceAccountIsGranted": {
			reason:   "The catalog's binding of the pool's VM service account to a role naming the golden is what CDI accepts.",
			bindings: []rbacv1.RoleBinding{bind(goldenNS, sa("tenant-a", "default"))},
			roles:    []rbacv1.ClusterRole{role(golden)},
			want:     true,
		},
		"NoBindingYet": {
			reason: "Before the catalog binds the namespace, KubeVirt's review would be refused.",
			roles:  []rbacv1.ClusterRole{role(golden)},
		},
		"AnotherNamespaceIsBound": {
			reason:   "A binding for another tenant's service account grants this one nothing.",
			bindings: []rbacv1.RoleBinding{bind(goldenNS, sa("tenant-b", "default"))},
			roles:    []rbacv1.ClusterRole{role(golden)},
		},
		"AnotherServiceAccountIsBound": {
			reason:   "KubeVirt asks as the VM's own service account only.",
			bindings: []rbacv1.RoleBinding{bind(goldenNS, sa("tenant-a", "builder"))},
			roles:    []rbacv1.ClusterRole{role(golden)},
		},
		"TheRoleDoesNotNameThisGolden": {
			reason:   "With resourceNames, a golden the catalog does not list yet is not clonable.",
			bindings: []rbacv1.RoleBinding{bind(goldenNS, sa("tenant-a", "default"))},
			roles:    []rbacv1.ClusterRole{role("talos-worker-abc-v1.12.0")},
		},
		"TheRoleIsMissing": {
			reason:   "A binding to a role that does not exist grants nothing.",
			bindings: []rbacv1.RoleBinding{bind(goldenNS, sa("tenant-a", "default"))},
		},
		"BindingInAnotherNamespace": {
			reason:   "RBAC on datavolumes/source is checked in the source (golden) namespace.",
			bindings: []rbacv1.RoleBinding{bind("tenant-a", sa("tenant-a", "default"))},
			roles:    []rbacv1.ClusterRole{role(golden)},
		},
		"NamespaceGroup": {
			reason:   "The review carries the group system:serviceaccounts:<ns>.",
			bindings: []rbacv1.RoleBinding{bind(goldenNS, group("system:serviceaccounts:tenant-a"))},
			roles:    []rbacv1.ClusterRole{role(golden)},
			want:     true,
		},
		"AllServiceAccountsGroup": {
			reason:   "The AllServiceAccounts scope binds system:serviceaccounts, which the review carries.",
			bindings: []rbacv1.RoleBinding{bind(goldenNS, AllServiceAccounts()...)},
			roles:    []rbacv1.ClusterRole{role(golden)},
			want:     true,
		},
		"AuthenticatedGroupIsNotInTheReview": {
			reason:   "CDI's review lists exactly two groups; system:authenticated is not one of them.",
			bindings: []rbacv1.RoleBinding{bind(goldenNS, group("system:authenticated"))},
			roles:    []rbacv1.ClusterRole{role(golden)},
		},
		"UserSubjectOfTheServiceAccountName": {
			reason:   "RBAC matches a User subject against the review's user name.",
			bindings: []rbacv1.RoleBinding{bind(goldenNS, rbacv1.Subject{Kind: rbacv1.UserKind, Name: "system:serviceaccount:tenant-a:default"})},
			roles:    []rbacv1.ClusterRole{role(golden)},
			want:     true,
		},
		"WildcardRoleCovers": {
			reason:   "A platform's broader role still authorizes the clone; RBAC wildcards cover it.",
			bindings: []rbacv1.RoleBinding{bind(goldenNS, sa("tenant-a", "default"))},
			roles:    []rbacv1.ClusterRole{wildcard},
			want:     true,
		},
		"BindingBeingDeleted": {
			reason:   "A binding that is being deleted is about to grant nothing.",
			bindings: []rbacv1.RoleBinding{deleted},
			roles:    []rbacv1.ClusterRole{role(golden)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Allows(tc.bindings, tc.roles, goldenNS, "tenant-a", "default", golden); got != tc.want {
				t.Errorf("%s\nAllows = %t, want %t", tc.reason, got, tc.want)
			}
		})
	}
}
