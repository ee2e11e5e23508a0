package catalog

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/required"
)

func TestBoundNamespaces(t *testing.T) {
	rb := &rbacv1.RoleBinding{Subjects: []rbacv1.Subject{
		{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: "tenant-b"},
		{Kind: rbacv1.ServiceAccountKind, Name: "vm", Namespace: "tenant-a"},
		{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: "tenant-b"},
		{Kind: rbacv1.GroupKind, Name: "system:serviceaccounts"},
	}}
	if diff := cmp.Diff([]string{"tenant-a", "tenant-b"}, boundNamespaces(rb)); diff != "" {
		t.Errorf("boundNamespaces(): every service account's namespace once, sorted, whatever its name; groups bind no namespace (-want, +got):\n%s", diff)
	}
	if got := boundNamespaces(nil); got != nil {
		t.Errorf("boundNamespaces(nil) = %v, want none", got)
	}
}

// object is a namespaced object of kind.
func object(apiVersion, kind, ns, name string, lbls map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(lbls)
	return u
}

func TestGrantsNamespaces(t *testing.T) {
	goldens := []string{"talos-a", "talos-b"}
	bound := &rbacv1.RoleBinding{Subjects: []rbacv1.Subject{
		{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: "tenant-a"},
		{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: "tenant-b"},
	}}
	request := func(ns string) *unstructured.Unstructured {
		return object(usageAPIVersion, kindUsage, ns, "t1-datavolume", map[string]string{labels.CloneGrantRequest: "ha"})
	}
	cases := map[string]struct {
		reason   string
		rb       *rbacv1.RoleBinding
		anyInUse bool
		got      required.Resolved
		want     []string
	}{
		"RequestBinds": {
			reason: "A pool's Usage asking for the grant of golden A binds its namespace.",
			got:    required.Resolved{grantsKeyPrefix + "talos-a": {request("tenant-x")}},
			want:   []string{"tenant-x"},
		},
		"BoundStayWhileInUse": {
			reason: "What the RoleBinding binds stays while a golden is in use, and a new request adds to it.",
			rb:     bound, anyInUse: true,
			got:  required.Resolved{grantsKeyPrefix + "talos-b": {request("tenant-c")}},
			want: []string{"tenant-a", "tenant-b", "tenant-c"},
		},
		"NothingInUseUnbindsAll": {
			reason: "Once no golden of the catalog is in use no namespace pins one: only those asking stay.",
			rb:     bound,
			got:    required.Resolved{grantsKeyPrefix + "talos-a": {request("tenant-b")}},
			want:   []string{"tenant-b"},
		},
		"ClusterScopedIsNoRequest": {
			reason: "Only a namespaced Usage names a namespace to bind.",
			got:    required.Resolved{grantsKeyPrefix + "talos-a": {request("")}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := planGrants(true, true, tc.rb).namespaces(goldens, tc.anyInUse, tc.got)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nnamespaces(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestGrantsSelectors(t *testing.T) {
	hashes := map[string]string{"talos-a": "ha"}
	rb := &rbacv1.RoleBinding{Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: "tenant-a"}}}
	cases := map[string]struct {
		reason string
		g      grantsPlan
		want   []string
	}{
		"Usages": {
			reason: "With Usages and pinning namespaces: each golden's grant requests, and no pool's template.",
			g:      planGrants(true, true, rb),
			want:   []string{grantsKeyPrefix + "talos-a"},
		},
		"AllServiceAccounts": {
			reason: "Binding every service account needs no namespace: nothing is read.",
			g:      planGrants(true, false, rb),
		},
		"UsagesOff": {
			reason: "Without Usages the templates are read instead (mode.go).",
			g:      planGrants(false, true, rb),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := slices.Sorted(maps.Keys(tc.g.selectors(hashes)))
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nselectors(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
