package catalog

import (
	"maps"
	"slices"
	"sort"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/internal/clonerbac"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/observed"
	"github.com/cozystack/function-worker-image/internal/required"
)

// Which goldens are pinned, and from which namespaces, at fleet scale.
//
// Reading every template that clones a golden costs the catalog's request
// about 5 KB per pool as the API server serves it (managedFields, Cluster
// API's owner reference): a catalog pinned by about 800 pools no longer
// fits the 4 MiB a function accepts by default, and then it stops
// reconciling altogether (docs/performance.md, "The catalog at fleet
// scale"). With Usages on, the catalog reads no template:
//
//   - Whether a golden is pinned is the crossplane.io/in-use label Crossplane's
//     usage controller keeps on it while any Usage names it, and every
//     template that clones it has one (nodepool usage.go). It is on the
//     golden itself, which the catalog observes anyway.
//   - Which namespaces may clone is the catalog's own RoleBinding: its
//     subjects are what it bound so far. A pool whose VM service account
//     may not clone its golden asks, with a label on its Usage of the
//     golden (labels.CloneGrantRequest); the catalog reads only those, so
//     what it reads grows with the pools waiting for a grant.
//   - A bound namespace is dropped once no template in it clones one of the
//     catalog's goldens. Each call checks a window of grantCheckWindow bound
//     namespaces, in name order from where the previous call stopped
//     (status.cloneGrants.checkFrom), reading the function's templates of
//     those namespaces alone (its managed-by label), and their golden label,
//     which every clone template has carried since the first recorded
//     release (testdata/releases), so a pool not reconciled since an upgrade
//     is still seen; a namespace left without pins loses its grant within
//     about (bound namespaces / grantCheckWindow) reconciles.
//
// With Usages off, the catalog reads the templates as before: there is no
// Usage to read, and the request grows with the fleet.

// Requirement key prefixes of the grant requests and the namespace checks.
const (
	grantsKeyPrefix = "grants-"
	checkKeyPrefix  = "check-"
)

// grantCheckWindow is how many bound namespaces one call checks: each
// costs the request the function's templates in it (~6 KB each as served),
// so that a catalog bound to 2,000 namespaces of five pools each reads
// ~240 KB of them per call, in eight requirements.
const grantCheckWindow = 8

// usageAPIVersion and kindUsage are the pools' Usages.
const (
	usageAPIVersion = clonerbac.UsageAPIVersion
	kindUsage       = clonerbac.KindUsage
)

// grantsPlan is how the catalog learns its pins on this call.
type grantsPlan struct {
	// ByUsages is true when pins come from Usages (Usages on), false when
	// from the templates.
	ByUsages bool
	// Namespaces is true when the scope binds pinning namespaces.
	Namespaces bool
	// Bound are the namespaces the observed RoleBinding binds, sorted.
	Bound []string
	// Window are the bound namespaces checked on this call, and Next where
	// the next call starts.
	Window []string
	Next   string
}

// planGrants decides from the observed RoleBinding and the previous status
// alone, so that every call of a reconcile asks the same.
func planGrants(byUsages, namespaces bool, rb *rbacv1.RoleBinding, checkFrom string) grantsPlan {
	g := grantsPlan{ByUsages: byUsages, Namespaces: namespaces}
	if !byUsages || !namespaces {
		return g
	}
	g.Bound = boundNamespaces(rb)
	g.Window, g.Next = checkWindow(g.Bound, checkFrom, grantCheckWindow)
	return g
}

// boundNamespaces are the namespaces of the service accounts rb binds,
// whatever their name: a changed cloneRBAC.serviceAccountName re-binds the
// same namespaces.
func boundNamespaces(rb *rbacv1.RoleBinding) []string {
	if rb == nil {
		return nil
	}
	set := map[string]bool{}
	for _, s := range rb.Subjects {
		if s.Kind == rbacv1.ServiceAccountKind && s.Namespace != "" {
			set[s.Namespace] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// checkWindow takes up to n of sorted, starting at the first not before
// from and wrapping around; next is the one after the window, "" when the
// window ends the list.
func checkWindow(sorted []string, from string, n int) (window []string, next string) {
	if len(sorted) == 0 {
		return nil, ""
	}
	start := sort.SearchStrings(sorted, from)
	if start == len(sorted) {
		start = 0
	}
	for i := 0; i < min(n, len(sorted)); i++ {
		window = append(window, sorted[(start+i)%len(sorted)])
	}
	if end := start + len(window); end < len(sorted) {
		next = sorted[end]
	}
	return window, next
}

// selectors are the requirements of this plan for the goldens (key name
// to label hash): each golden's grant requests, and the templates of each
// namespace of the window that clone it.
func (g grantsPlan) selectors(goldens map[string]string) required.Selectors {
	sel := required.Selectors{}
	if !g.ByUsages || !g.Namespaces {
		return sel
	}
	for name, hash := range goldens {
		sel[grantsKeyPrefix+name] = required.ByLabels(usageAPIVersion, kindUsage, "", map[string]string{labels.CloneGrantRequest: hash})
	}
	// One requirement per namespace, whatever the catalog's size: the
	// function's templates there, told apart by their golden label.
	for _, ns := range g.Window {
		sel[checkKeyPrefix+ns] = required.ByLabels(observed.InfraAPIVersion, observed.KindKubevirtMachineTemplate, ns, map[string]string{labels.ManagedBy: labels.ManagedByValue})
	}
	return sel
}

// namespaces decides the namespaces to bind from what the plan read (the
// goldens by key name, to their label hash): the bound ones, less those of
// the window where no template clones one of the goldens, and those asking.
func (g grantsPlan) namespaces(goldens map[string]string, got required.Resolved) []string {
	hashes := map[string]bool{}
	for _, hash := range goldens {
		hashes[hash] = true
	}
	set := map[string]bool{}
	for _, ns := range g.Bound {
		set[ns] = true
	}
	for _, ns := range g.Window {
		if !slices.ContainsFunc(namespaced(got[checkKeyPrefix+ns], ns), func(u *unstructured.Unstructured) bool { return hashes[u.GetLabels()[labels.Golden]] }) {
			delete(set, ns)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(goldens)) {
		for _, u := range namespaced(got[grantsKeyPrefix+name], "") {
			set[u.GetNamespace()] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// namespaced are the namespaced objects of items, in namespace when it is
// set (crossplane render ignores a requirement's namespace).
func namespaced(items []*unstructured.Unstructured, namespace string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, u := range items {
		if u.GetNamespace() == "" || (namespace != "" && u.GetNamespace() != namespace) {
			continue
		}
		out = append(out, u)
	}
	return out
}
