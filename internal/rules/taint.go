package rules

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TaintEffects are the effects a node taint may have, as the chart admits
// them (kubernetes-nodes templates/talos-reconcile-job.yaml@27f0283, "must
// be NoSchedule, PreferNoSchedule or NoExecute").
var TaintEffects = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}

// TaintEffect checks a taint's effect.
func TaintEffect(path *field.Path, effect string) field.ErrorList {
	if effect == "" {
		return field.ErrorList{field.Required(path, "set the taint's effect: NoSchedule, PreferNoSchedule or NoExecute")}
	}
	if !slices.Contains(TaintEffects, effect) {
		return field.ErrorList{field.NotSupported(path, Quoted(effect), TaintEffects)}
	}
	return nil
}
