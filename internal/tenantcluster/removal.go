package tenantcluster

import (
	"fmt"
	"sort"
	"strings"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/labels"
)

// Removing a pool that left spec.nodePools.
//
// Leaving its XNodePool out of the desired state at once would not remove
// its workers: Crossplane would delete the XNodePool, the XNodePool's
// deletion guard (a Usage by its MachineDeployment) would refuse it, and a
// refused delete aborts this whole composition, garbage collection running
// before any apply (internal/controller/apiextensions/composite/
// composition_functions.go, Crossplane v2.2.0). So the cluster first keeps
// the XNodePool as it is, with annotation workerimage.cozystack.io/teardown
// set: the pool deletes its MachineDeployment, waits for Cluster API to
// remove its Machines, then releases everything else and reports
// Deletion=True, reason Released (nodepool teardown.go). Only then, and once
// Crossplane's usage controller has taken the in-use label off, is the
// XNodePool left out, and its delete goes through.

// removal is one pool on its way out.
type removal struct {
	Name resource.Name
	// Pool is the XNodePool's name.
	Pool string
	// Started is true on the call that first asks the pool to go.
	Started bool
	// Detail says where its removal is.
	Detail string
}

// removePools adds to into every readable observed XNodePool that into does
// not hold and that has not finished its teardown, re-emitted as observed
// with the teardown annotation. Released ones are left out, so Crossplane
// deletes them. It returns every pool on its way out, in name order.
func removePools(obs compose.Observed, into map[resource.Name]*resource.DesiredComposed) []removal {
	var out []removal
	for _, n := range obs.Names() {
		if _, kept := into[n]; kept || obs.Unreadable(n) {
			continue
		}
		if _, _, ours := owns(n); !ours {
			continue
		}
		u := obs.Resources[n]
		r := removal{Name: n, Pool: u.GetName(), Started: u.GetAnnotations()[labels.AnnTeardown] != "true"}
		released, detail := teardownState(obs, n)
		r.Detail = detail
		out = append(out, r)
		if released {
			continue
		}
		d := compose.Kept(u, resource.ReadyTrue)
		a := d.Resource.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[labels.AnnTeardown] = "true"
		d.Resource.SetAnnotations(a)
		into[n] = d
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// teardownState reads an XNodePool's Deletion condition: released once it
// reports Released and no Usage guards it any more (the in-use label gone).
func teardownState(obs compose.Observed, n resource.Name) (released bool, detail string) {
	u := obs.Resources[n]
	s, err := compose.StatusOf[nodePoolStatus](&u.Unstructured)
	if err != nil {
		return false, fmt.Sprintf("its status cannot be read (%v)", err)
	}
	c, ok := compose.ConditionOf(s.Conditions, v1alpha1.ConditionDeletion)
	switch {
	case !ok || c.Status != "True":
		return false, "asked to remove its workers"
	case c.Reason == v1alpha1.ReasonReleased && u.GetLabels()[labels.InUse] == "true":
		return false, "released; waiting for Crossplane to lift its deletion guard"
	case c.Reason == v1alpha1.ReasonReleased:
		return true, "released; its XNodePool is deleted now"
	default:
		return false, "its workers are draining"
	}
}

// withRemovals adds the pools on their way out to the NodePoolsReady
// message. They do not make the cluster unready: it has what its spec asks.
func withRemovals(c compose.Condition, rs []removal) compose.Condition {
	if len(rs) == 0 {
		return c
	}
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%s (%s)", r.Pool, r.Detail))
	}
	c.Message += fmt.Sprintf(" Removing %d node pool(s) that left spec.nodePools: %s.", len(rs), strings.Join(parts, "; "))
	return c
}

// removalResults is one event per pool whose removal starts on this call.
func removalResults(rs []removal) []compose.Result {
	var out []compose.Result
	for _, r := range rs {
		if r.Started {
			out = append(out, compose.Result{Severity: compose.SeverityNormal, Reason: "NodePoolRemoving",
				Message: fmt.Sprintf("XNodePool %s left spec.nodePools: its workers are drained and its objects deleted, then the XNodePool itself.", r.Pool)})
		}
	}
	return out
}
