package catalog

import (
	"fmt"
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

func TestCheckWindow(t *testing.T) {
	abc := []string{"a", "b", "c", "d", "e"}
	cases := map[string]struct {
		reason     string
		sorted     []string
		from       string
		n          int
		wantWindow []string
		wantNext   string
	}{
		"Empty":          {reason: "Nothing bound, nothing checked.", n: 2},
		"FromTheStart":   {reason: "No previous check starts at the first.", sorted: abc, n: 2, wantWindow: []string{"a", "b"}, wantNext: "c"},
		"FromTheCursor":  {reason: "The previous call's next is where this one starts.", sorted: abc, from: "c", n: 2, wantWindow: []string{"c", "d"}, wantNext: "e"},
		"GoneCursor":     {reason: "A cursor that is no longer bound starts at the next bound one.", sorted: abc, from: "bb", n: 2, wantWindow: []string{"c", "d"}, wantNext: "e"},
		"EndsTheList":    {reason: "A window that reaches the end leaves no next: the following call starts over.", sorted: abc, from: "d", n: 2, wantWindow: []string{"d", "e"}},
		"Wraps":          {reason: "A window that passes the end wraps to the start.", sorted: abc, from: "e", n: 3, wantWindow: []string{"e", "a", "b"}},
		"CursorPastAll":  {reason: "A cursor after every bound namespace starts over.", sorted: abc, from: "z", n: 2, wantWindow: []string{"a", "b"}, wantNext: "c"},
		"WindowOverList": {reason: "A window larger than the list checks each once.", sorted: abc, from: "c", n: 16, wantWindow: []string{"c", "d", "e", "a", "b"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			window, next := checkWindow(tc.sorted, tc.from, tc.n)
			if diff := cmp.Diff(tc.wantWindow, window); diff != "" || next != tc.wantNext {
				t.Errorf("%s\ncheckWindow() window -want, +got:\n%s\nnext = %q, want %q", tc.reason, diff, next, tc.wantNext)
			}
		})
	}
}

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
	goldens := map[string]string{"talos-a": "ha", "talos-b": "hb"}
	bound := func(ns ...string) *rbacv1.RoleBinding {
		rb := &rbacv1.RoleBinding{}
		for _, n := range ns {
			rb.Subjects = append(rb.Subjects, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: n})
		}
		return rb
	}
	request := func(ns string) *unstructured.Unstructured {
		return object(usageAPIVersion, kindUsage, ns, "t1-datavolume", map[string]string{labels.CloneGrantRequest: "ha"})
	}
	template := func(ns string) *unstructured.Unstructured {
		return object("infrastructure.cluster.x-k8s.io/v1alpha1", "KubevirtMachineTemplate", ns, "t1", map[string]string{labels.Golden: "hb", labels.ManagedBy: labels.ManagedByValue})
	}
	many := make([]string, 0, 12)
	for i := range 12 {
		many = append(many, fmt.Sprintf("tenant-%02d", i))
	}
	cases := map[string]struct {
		reason    string
		rb        *rbacv1.RoleBinding
		checkFrom string
		got       required.Resolved
		want      []string
	}{
		"RequestBinds": {
			reason: "A pool's Usage asking for the grant of golden A binds its namespace.",
			got:    required.Resolved{grantsKeyPrefix + "talos-a": {request("tenant-x")}},
			want:   []string{"tenant-x"},
		},
		"PinnedNamespaceStays": {
			reason: "A checked namespace where a template clones a golden of the catalog stays bound.",
			rb:     bound("tenant-a"),
			got:    required.Resolved{checkKeyPrefix + "tenant-a": {template("tenant-a")}},
			want:   []string{"tenant-a"},
		},
		"UnpinnedNamespaceGoes": {
			reason: "A checked namespace whose templates clone none of the catalog's goldens (an HTTP pool's) is unbound; one with a clone template stays.",
			rb:     bound("tenant-a", "tenant-b"),
			got:    required.Resolved{checkKeyPrefix + "tenant-a": {object("infrastructure.cluster.x-k8s.io/v1alpha1", "KubevirtMachineTemplate", "tenant-a", "http", map[string]string{labels.ManagedBy: labels.ManagedByValue})}, checkKeyPrefix + "tenant-b": {template("tenant-b")}},
			want:   []string{"tenant-b"},
		},
		"AnotherNamespacesTemplateIsNoPin": {
			reason: "crossplane render ignores a requirement's namespace: a template of another namespace does not keep this one.",
			rb:     bound("tenant-a"),
			got:    required.Resolved{checkKeyPrefix + "tenant-a": {template("tenant-z")}},
		},
		"OutsideTheWindowStays": {
			reason: "Only the window is checked: of 12 bound namespaces with no template read, the 8 checked go and the 4 others stay.",
			rb:     bound(many...),
			want:   many[8:],
		},
		"CursorMoves": {
			reason: "Starting at the cursor, the window wraps: the namespaces before the cursor it does not reach stay.",
			rb:     bound(many...), checkFrom: "tenant-06",
			want: many[2:6],
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := planGrants(true, true, tc.rb, tc.checkFrom)
			got := g.namespaces(goldens, tc.got)
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
			reason: "With Usages and pinning namespaces: each golden's grant requests and each checked namespace's Usages.",
			g:      planGrants(true, true, rb, ""),
			want:   []string{checkKeyPrefix + "tenant-a", grantsKeyPrefix + "talos-a"},
		},
		"AllServiceAccounts": {
			reason: "Binding every service account needs no namespace: nothing is read.",
			g:      planGrants(true, false, rb, ""),
		},
		"UsagesOff": {
			reason: "Without Usages the templates are read instead (mode.go).",
			g:      planGrants(false, true, rb, ""),
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
