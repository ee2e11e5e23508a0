package catalog

import (
	"maps"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/cozystack/function-worker-image/internal/clonerbac"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/required"
)

// Which goldens are pinned, and from which namespaces, at fleet scale.
//
// Reading every template that clones a golden costs the catalog's request
// about 5.8 KB per pool as the API server serves it (managedFields, Cluster
// API's owner reference): a catalog pinned by about 720 pools no longer
// fits the 4 MiB a function accepts by default, and then it stops
// reconciling altogether (docs/performance.md, "The catalog at fleet
// scale"). With Usages on, the catalog reads no pool's template:
//
//   - Whether a golden is pinned is the crossplane.io/in-use label Crossplane's
//     usage controller keeps on it while any Usage names it, and every
//     template that clones it has one (nodepool usage.go). It is on the
//     golden itself, which the catalog observes anyway.
//   - Which namespaces may clone is the catalog's own RoleBinding: its
//     subjects are what it bound so far. A pool whose VM service account
//     may not clone its golden asks, with a label on its Usage of the
//     golden (labels.CloneGrantRequest), whenever it is about to clone; the
//     catalog reads only those, so what it reads grows with the pools
//     waiting for a grant.
//   - A namespace stays bound while any golden of the catalog is in use.
//     Telling which namespace no longer pins one would take reading its
//     templates; doing that a few namespaces per call needs a cursor in the
//     status, and on Crossplane v2.4 every status write re-runs the
//     composite (its own watch has no predicate: definition/reconciler.go),
//     so the catalog would reconcile as fast as the circuit breaker lets it.
//     Once none of its goldens is in use, no namespace pins one, and the
//     RoleBinding binds only the namespaces asking.
//
// With Usages off, the catalog reads the templates as before: there is no
// Usage to read, the request grows with the fleet, and the grants are exact.

// grantsKeyPrefix names each golden's requirement of the Usages asking for
// a clone grant.
const grantsKeyPrefix = "grants-"

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
}

// planGrants decides from the observed RoleBinding alone, so that every
// call of a reconcile asks the same.
func planGrants(byUsages, namespaces bool, rb *rbacv1.RoleBinding) grantsPlan {
	g := grantsPlan{ByUsages: byUsages, Namespaces: namespaces}
	if byUsages && namespaces {
		g.Bound = boundNamespaces(rb)
	}
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

// selectors are the requirements of this plan for the goldens (key name
// to label hash): each golden's grant requests.
func (g grantsPlan) selectors(goldens map[string]string) required.Selectors {
	sel := required.Selectors{}
	if !g.ByUsages || !g.Namespaces {
		return sel
	}
	for name, hash := range goldens {
		sel[grantsKeyPrefix+name] = required.ByLabels(usageAPIVersion, kindUsage, "", map[string]string{labels.CloneGrantRequest: hash})
	}
	return sel
}

// namespaces decides the namespaces to bind from what the plan read (the
// goldens' key names): the bound ones while any golden is in use, and those
// asking.
func (g grantsPlan) namespaces(goldens []string, anyInUse bool, got required.Resolved) []string {
	set := map[string]bool{}
	if anyInUse {
		for _, ns := range g.Bound {
			set[ns] = true
		}
	}
	for _, name := range goldens {
		for _, u := range got[grantsKeyPrefix+name] {
			if ns := u.GetNamespace(); ns != "" {
				set[ns] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}
