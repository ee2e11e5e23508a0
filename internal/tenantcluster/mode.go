// Package tenantcluster composes an XTenantCluster: it checks the cluster's
// Talos/Kubernetes pairing against the support matrix and composes one
// XNodePool per node pool with the cluster's defaults filled in, then
// summarises what each pool reports back.
package tenantcluster

import (
	"errors"
	"fmt"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composite"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/required"
	"github.com/cozystack/function-worker-image/internal/rules"
)

// Mode is the tenant cluster mode.
type Mode struct{}

// Requirements implements compose.Mode. The cluster decides from its own spec
// and its observed XNodePools alone; the pools fetch what they need.
func (Mode) Requirements(_ compose.Request) (required.Selectors, error) { return nil, nil }

// Compose implements compose.Mode: validate, plan, check the matrix, emit.
func (Mode) Compose(r compose.Request) compose.Output {
	xr := r.Composite
	spec, errs := decodeSpec(xr)
	if len(errs) == 0 {
		errs = validate(xr.GetName(), spec)
	}
	if len(errs) > 0 {
		return fatal(xr, errors.New(rules.Message(errs)))
	}
	p := plan(r.Config, xr.GetName(), spec)
	if err := checkComposed(p); err != nil {
		return fatal(xr, err)
	}
	support, err := checkSupport(r.Config, p.Version, p.Talos.Version)
	if err != nil {
		return fatal(xr, err)
	}

	out := compose.Output{Resources: make(map[resource.Name]*resource.DesiredComposed, len(p.Pools))}
	reports := make(map[string]poolReport, len(p.Pools))
	statuses := make(map[string]v1alpha1.PoolStatus, len(p.Pools))
	for _, pool := range p.Pools {
		dc, err := nodePool(p.Cluster, pool)
		if err != nil {
			return fatal(xr, err)
		}
		oc, ok := r.Observed[pool.Resource]
		rep := observePool(oc, ok)
		dc.Ready = readiness(rep)
		out.Resources[pool.Resource] = dc
		reports[pool.Name] = rep
		statuses[pool.Name] = rep.Status
	}
	// A pool removed from spec.nodePools is left out of the desired state on
	// purpose: that is how Crossplane deletes its XNodePool.

	var prev previousStatus
	_ = decodeStatus(xr.UnstructuredContent(), &prev) // unreadable: treat every state as new

	out.Status = map[string]any{"pools": statuses}
	out.Conditions = []compose.Condition{support, poolsReady(p.Pools, reports)}
	out.Results = transitions(prev, p.Pools, reports, support)
	return out
}

// fatal stops the pipeline with err, prefixed by the composite it is about so
// that a message read from an event or a log names the cluster.
func fatal(xr *composite.Unstructured, err error) compose.Output {
	kind := xr.GetKind()
	if kind == "" {
		kind = v1alpha1.KindTenantCluster
	}
	ref := xr.GetName()
	if ns := xr.GetNamespace(); ns != "" {
		ref = ns + "/" + ref
	}
	return compose.Output{Fatal: fmt.Errorf("%s %q: %w", kind, ref, err)}
}
