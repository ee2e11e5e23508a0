// Package tenantcluster composes an XTenantCluster: it checks the cluster's
// Talos/Kubernetes pairing against the support matrix and composes one
// XNodePool per node pool with the cluster's defaults filled in, then
// summarises what each pool reports back.
package tenantcluster

import (
	"errors"
	"fmt"

	"github.com/crossplane/function-sdk-go/resource/composite"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/observed"
	"github.com/cozystack/function-worker-image/internal/required"
	"github.com/cozystack/function-worker-image/internal/rules"
)

// Mode is the tenant cluster mode.
type Mode struct{}

// Prepare implements compose.Mode.
func (Mode) Prepare(r compose.Request) compose.Call { return call{r: r} }

// call is one call of a tenant cluster.
type call struct{ r compose.Request }

// Requirements asks for nothing: the cluster decides from its own spec and
// its observed XNodePools alone; the pools fetch what they need.
func (call) Requirements() (required.Selectors, error) { return nil, nil }

// Raw implements compose.Call: the cluster reads no requirement.
func (call) Raw() map[string]bool { return nil }

// Compose reads the spec, the observed XNodePools and the previous status;
// decides (validate, plan, check the matrix); writes one XNodePool per pool
// and the summary.
func (c call) Compose(_ required.Resolved, _ required.Raw) compose.Output {
	r := c.r
	xr := r.Composite
	spec, errs := decodeSpec(xr)
	if len(errs) == 0 {
		errs = validate(xr.GetName(), spec, r.Config)
	}
	if len(errs) > 0 {
		return fatal(xr, errors.New(rules.Message(errs)))
	}
	obs := compose.ReadObserved(r.Observed, owns)
	prev := compose.PreviousStatus[previousStatus](xr)

	p := plan(r.Config, xr.GetName(), spec)
	support, err := checkSupport(r.Config, p.Version, p.Talos.Version)
	if err != nil {
		return fatal(xr, err)
	}

	out, err := emit(xr, p, support, obs, prev)
	if err != nil {
		return fatal(xr, err)
	}
	return out
}

// fatal stops the pipeline with err, prefixed by the composite it is about so
// that a message read from an event or a log names the cluster.
func fatal(xr *composite.Unstructured, err error) compose.Output {
	return compose.Output{Fatal: fmt.Errorf("%s %q: %w", kindOf(xr), observed.Ref(&xr.Unstructured), err)}
}

// kindOf is the composite's kind, XTenantCluster unless it says otherwise.
func kindOf(xr *composite.Unstructured) string {
	if kind := xr.GetKind(); kind != "" {
		return kind
	}
	return v1alpha1.KindTenantCluster
}
