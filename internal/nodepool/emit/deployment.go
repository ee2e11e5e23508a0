package emit

import (
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
)

// desiredReplicas is the worker count the pool reports: the fixed count, or
// for an autoscaled pool what the autoscaler last set on the observed
// MachineDeployment (its floor before there is one).
func desiredReplicas(pl decide.Plan) int32 {
	if !pl.Shape.Scaling.Autoscaled {
		return pl.Shape.Replicas
	}
	if md := pl.Observed.Deployment; md != nil && md.Spec.Replicas != nil {
		return *md.Spec.Replicas
	}
	return pl.Shape.Scaling.Min
}
