// Package nodepool composes an XNodePool: the content-named
// KubevirtMachineTemplate and TalosConfigTemplate of a Talos worker pool and
// the MachineDeployment that points at both. It decides in a fixed order:
// resolve the osImage (resolve.go), check the support matrix
// (supportmatrix.go), pick the disk source from the spec alone, gate a new
// clone template on its golden's readiness, StorageClass and size (gate.go),
// and report clone health (health.go); then it renders (render.go) and emits
// the plan (emit.go) in one place.
package nodepool

import (
	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/required"
)

// Mode is the node-pool mode.
type Mode struct{}

// Requirements implements compose.Mode. The golden is located by the
// resolved osImage. An invalid spec is fatal here already: asking for a
// golden named after invalid values would only ask for nothing.
func (Mode) Requirements(r compose.Request) (required.Selectors, error) {
	p, spec, err := readPool(r.Composite)
	if err != nil {
		return nil, err
	}
	sel := selectors(p, resolveOSImage(spec, r.Config), instanceTypeOf(spec.PoolShape), r.Config)
	if v1alpha1.BootstrapModeOf(spec.Bootstrap) == v1alpha1.BootstrapJoin {
		addJoinSelectors(sel, joinRefsOf(p, r.Config.Join))
	}
	return sel, nil
}

// Compose implements compose.Mode: read what the pool composed and last
// reported, decide, write.
func (Mode) Compose(r compose.Request) compose.Output {
	obs := readComposed(r.Observed, r.Config.ClusterAPIVersion)
	prev := compose.PreviousStatus[previous](r.Composite)

	pl, err := decide(r, obs)
	if err != nil {
		return compose.Output{Fatal: err}
	}

	out, err := emit(pl, prev, r.Config)
	if err != nil {
		return compose.Output{Fatal: err}
	}
	return out
}
