package poolspec

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/rules"
)

// MinNodeStartupTimeout is the least nodeStartupTimeout Cluster API's
// MachineHealthCheck webhook admits (internal/webhooks/machinehealthcheck.go
// minNodeStartupTimeoutSeconds in sigs.k8s.io/cluster-api v1.11.4; 0, which
// disables the check, is not offered here).
const MinNodeStartupTimeout = 30 * time.Second

// replicaBoundsAsWritten checks minReplicas and maxReplicas as the JSON
// numbers they are, like replicas, before int32 narrows them; it returns
// the paths it reported for the decoder to skip.
func replicaBoundsAsWritten(root *field.Path, raw map[string]any) (field.ErrorList, []string) {
	var errs field.ErrorList
	var skip []string
	for _, k := range []string{"minReplicas", "maxReplicas"} {
		if e := rules.Replicas(root.Child(k), raw[k]); len(e) > 0 {
			errs = append(errs, e...)
			skip = append(skip, root.Child(k).String())
		}
	}
	return errs, skip
}

// CAPI checks the pool's Cluster API knobs at root: the autoscaler bounds
// (which exclude a fixed replicas, the autoscaler owning the count), the
// provision time of an autoscaled pool, the MachineHealthCheck and the
// rollout. The durations take the kubernetes-nodes chart's positiveDuration
// guard (_helpers.tpl:174-180 at cozystack/cozystack@69da032).
func CAPI(root *field.Path, s v1alpha1.PoolShape) field.ErrorList {
	var errs field.ErrorList
	autoscaled := s.MinReplicas != nil || s.MaxReplicas != nil
	if s.Replicas != nil && autoscaled {
		errs = append(errs, field.Invalid(root.Child("replicas"), *s.Replicas, "cannot be set together with minReplicas/maxReplicas: an autoscaled pool's worker count belongs to the cluster-autoscaler; remove replicas, or remove minReplicas and maxReplicas for a fixed count"))
	}
	if s.MinReplicas != nil {
		errs = append(errs, rules.Replicas(root.Child("minReplicas"), int64(*s.MinReplicas))...)
		if s.MaxReplicas == nil {
			errs = append(errs, field.Required(root.Child("maxReplicas"), "an autoscaled pool needs its ceiling too; set maxReplicas"))
		}
	}
	if s.MaxReplicas != nil {
		errs = append(errs, rules.Replicas(root.Child("maxReplicas"), int64(*s.MaxReplicas))...)
		switch {
		case *s.MaxReplicas < 1:
			errs = append(errs, field.Invalid(root.Child("maxReplicas"), *s.MaxReplicas, "must be at least 1: an autoscaled pool that can never have a worker is a pool with replicas: 0"))
		case s.MinReplicas != nil && *s.MinReplicas > *s.MaxReplicas:
			errs = append(errs, field.Invalid(root.Child("minReplicas"), *s.MinReplicas, fmt.Sprintf("is above maxReplicas %d; set minReplicas at most maxReplicas", *s.MaxReplicas)))
		}
	}
	if s.MaxNodeProvisionTime != "" {
		path := root.Child("maxNodeProvisionTime")
		if !autoscaled {
			errs = append(errs, field.Invalid(path, rules.Quoted(s.MaxNodeProvisionTime), "applies to an autoscaled pool only; set minReplicas/maxReplicas, or remove it"))
		}
		_, e := rules.PositiveDuration(path, s.MaxNodeProvisionTime, 0)
		errs = append(errs, e...)
	}
	if hc := s.HealthCheck; hc != nil {
		path := root.Child("healthCheck")
		if hc.MaxUnhealthy != "" {
			_, e := rules.CountOrPercent(path.Child("maxUnhealthy"), hc.MaxUnhealthy)
			errs = append(errs, e...)
		}
		for _, d := range []struct {
			name, v string
			least   time.Duration
		}{
			{"nodeStartupTimeout", hc.NodeStartupTimeout, MinNodeStartupTimeout},
			{"readyUnknownTimeout", hc.ReadyUnknownTimeout, 0},
			{"readyFalseTimeout", hc.ReadyFalseTimeout, 0},
		} {
			if d.v != "" {
				_, e := rules.PositiveDuration(path.Child(d.name), d.v, d.least)
				errs = append(errs, e...)
			}
		}
	}
	if r := s.Rollout; r != nil {
		path := root.Child("rollout")
		var surge, unavailable string
		if r.MaxSurge != "" {
			v, e := rules.CountOrPercent(path.Child("maxSurge"), r.MaxSurge)
			errs, surge = append(errs, e...), v.String()
		}
		if r.MaxUnavailable != "" {
			v, e := rules.CountOrPercent(path.Child("maxUnavailable"), r.MaxUnavailable)
			errs, unavailable = append(errs, e...), v.String()
		}
		// Cluster API refuses a rolling update that can neither add nor
		// remove a worker (MachineDeployment webhook); say it here, where
		// the values were written.
		if isZero(surge) && isZero(unavailable) {
			errs = append(errs, field.Invalid(path, field.OmitValueType{}, "sets both maxSurge and maxUnavailable to zero, so a roll could never replace a worker; let one of them be above zero"))
		}
	}
	return errs
}

func isZero(v string) bool { return v == "0" || v == "0%" }
