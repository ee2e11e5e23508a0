package poolspec

import (
	"cmp"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/defaults"
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

// Scaling is how many workers the pool runs and who decides, and how a
// template change rolls them.
type Scaling struct {
	// Autoscaled: the cluster-autoscaler owns spec.replicas between Min and
	// Max; the function never writes it.
	Autoscaled bool
	Min, Max   int32
	// ProvisionTime goes into the autoscaler's annotation verbatim, as the
	// chart passes it (a time.Duration would print 30m as 30m0s).
	ProvisionTime string
	// MaxSurge and MaxUnavailable are the rolling update of every pool.
	MaxSurge, MaxUnavailable intstr.IntOrString
}

// HealthCheck is a pool's resolved MachineHealthCheck.
type HealthCheck struct {
	MaxUnhealthy                                               intstr.IntOrString
	NodeStartupTimeout, ReadyUnknownTimeout, ReadyFalseTimeout time.Duration
}

// CAPI checks the pool's Cluster API knobs at root: the autoscaler bounds
// (which exclude a fixed replicas, the autoscaler owning the count), the
// provision time of an autoscaled pool, the MachineHealthCheck and the
// rollout, and resolves them with the chart's defaults (values.yaml:70-80
// for the health check). The durations take the kubernetes-nodes chart's
// positiveDuration guard (_helpers.tpl:174-180), both at
// cozystack/cozystack@69da032. fixed is the pool's resolved replicas.
func CAPI(root *field.Path, s v1alpha1.PoolShape, fixed int32) (Scaling, HealthCheck, field.ErrorList) {
	var errs field.ErrorList
	sc := Scaling{Autoscaled: s.MinReplicas != nil || s.MaxReplicas != nil, MaxUnavailable: intstr.Parse(defaults.MaxUnavailable)}
	if s.Replicas != nil && sc.Autoscaled {
		errs = append(errs, field.Invalid(root.Child("replicas"), *s.Replicas, "cannot be set together with minReplicas/maxReplicas: an autoscaled pool's worker count belongs to the cluster-autoscaler; remove replicas, or remove minReplicas and maxReplicas for a fixed count"))
	}
	// The chart surges by the pool's ceiling, maxReplicas
	// (nodegroup.yaml:540-544): the whole pool may be replaced at once. A
	// fixed pool's ceiling is its count (at least 1, so that a pool scaled
	// to zero still has a valid strategy).
	sc.MaxSurge = intstr.FromInt32(max(fixed, 1))
	if sc.Autoscaled {
		sc.Min, sc.ProvisionTime = defaults.MinReplicas, cmp.Or(s.MaxNodeProvisionTime, defaults.MaxNodeProvisionTime)
	}
	if s.MinReplicas != nil {
		sc.Min = *s.MinReplicas
		errs = append(errs, rules.Replicas(root.Child("minReplicas"), int64(*s.MinReplicas))...)
		if s.MaxReplicas == nil {
			errs = append(errs, field.Required(root.Child("maxReplicas"), "an autoscaled pool needs its ceiling too; set maxReplicas"))
		}
	}
	if s.MaxReplicas != nil {
		sc.Max, sc.MaxSurge = *s.MaxReplicas, intstr.FromInt32(*s.MaxReplicas)
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
		if !sc.Autoscaled {
			errs = append(errs, field.Invalid(path, rules.Quoted(s.MaxNodeProvisionTime), "applies to an autoscaled pool only; set minReplicas/maxReplicas, or remove it"))
		}
		_, e := rules.PositiveDuration(path, s.MaxNodeProvisionTime, 0)
		errs = append(errs, e...)
	}
	hc, e := healthCheck(root.Child("healthCheck"), s.HealthCheck)
	errs = append(errs, e...)
	if r := s.Rollout; r != nil {
		path := root.Child("rollout")
		var surge, unavailable string
		if r.MaxSurge != "" {
			v, e := rules.CountOrPercent(path.Child("maxSurge"), r.MaxSurge)
			errs, surge, sc.MaxSurge = append(errs, e...), v.String(), v
		}
		if r.MaxUnavailable != "" {
			v, e := rules.CountOrPercent(path.Child("maxUnavailable"), r.MaxUnavailable)
			errs, unavailable, sc.MaxUnavailable = append(errs, e...), v.String(), v
		}
		// Cluster API refuses a rolling update that can neither add nor
		// remove a worker (MachineDeployment webhook); say it here, where
		// the values were written.
		if isZero(surge) && isZero(unavailable) {
			errs = append(errs, field.Invalid(path, field.OmitValueType{}, "sets both maxSurge and maxUnavailable to zero, so a roll could never replace a worker; let one of them be above zero"))
		}
	}
	return sc, hc, errs
}

// healthCheck checks the MachineHealthCheck knobs at path, each omitted one
// taking the chart's default.
func healthCheck(path *field.Path, hc *v1alpha1.HealthCheck) (HealthCheck, field.ErrorList) {
	if hc == nil {
		hc = &v1alpha1.HealthCheck{}
	}
	var out HealthCheck
	var errs field.ErrorList
	out.MaxUnhealthy, errs = rules.CountOrPercent(path.Child("maxUnhealthy"), cmp.Or(hc.MaxUnhealthy, defaults.MaxUnhealthy))
	for _, d := range []struct {
		name, v, def string
		least        time.Duration
		out          *time.Duration
	}{
		{"nodeStartupTimeout", hc.NodeStartupTimeout, defaults.NodeStartupTimeout, MinNodeStartupTimeout, &out.NodeStartupTimeout},
		{"readyUnknownTimeout", hc.ReadyUnknownTimeout, defaults.ReadyUnknownTimeout, 0, &out.ReadyUnknownTimeout},
		{"readyFalseTimeout", hc.ReadyFalseTimeout, defaults.ReadyFalseTimeout, 0, &out.ReadyFalseTimeout},
	} {
		var e field.ErrorList
		*d.out, e = rules.PositiveDuration(path.Child(d.name), cmp.Or(d.v, d.def), d.least)
		errs = append(errs, e...)
	}
	return out, errs
}

func isZero(v string) bool { return v == "0" || v == "0%" }
