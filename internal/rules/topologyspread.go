package rules

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TopologySpread checks one topology spread constraint of the worker Pods at
// path with the API server's Pod rules that a typo would trip only when
// KubeVirt creates the worker's Pod, long after the template rolled: a
// positive maxSkew, a label key as topologyKey, and a known
// whenUnsatisfiable.
func TopologySpread(path *field.Path, c corev1.TopologySpreadConstraint) field.ErrorList {
	var errs field.ErrorList
	if c.MaxSkew <= 0 {
		errs = append(errs, field.Invalid(path.Child("maxSkew"), c.MaxSkew, "must be at least 1: it is how many more workers one topology domain may hold than another"))
	}
	if es := validation.IsQualifiedName(c.TopologyKey); len(es) > 0 {
		errs = append(errs, field.Invalid(path.Child("topologyKey"), Quoted(c.TopologyKey), fmt.Sprintf("is not a node label key (%s); use one such as kubernetes.io/hostname or topology.kubernetes.io/zone", es[0])))
	}
	switch c.WhenUnsatisfiable {
	case corev1.DoNotSchedule, corev1.ScheduleAnyway:
	default:
		errs = append(errs, field.NotSupported(path.Child("whenUnsatisfiable"), Quoted(string(c.WhenUnsatisfiable)), []string{string(corev1.DoNotSchedule), string(corev1.ScheduleAnyway)}))
	}
	return errs
}
