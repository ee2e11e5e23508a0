package rules

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// SupportMatrixRow checks one Input support-matrix row: a Talos minor and the
// Kubernetes minors it supports, min not above max. A row that could never
// match (a patch version, a suffix, min above max) would otherwise leave a
// Talos minor silently without support.
func SupportMatrixRow(path *field.Path, talos, minKubernetes, maxKubernetes string) field.ErrorList {
	errs := TalosMinor(path.Child("talos"), talos)
	errs = append(errs, KubernetesMinor(path.Child("minKubernetes"), minKubernetes)...)
	errs = append(errs, KubernetesMinor(path.Child("maxKubernetes"), maxKubernetes)...)
	if len(errs) > 0 {
		return errs
	}
	lo, _ := ParseMinor(minKubernetes)
	hi, _ := ParseMinor(maxKubernetes)
	if lo.Compare(hi) > 0 {
		return field.ErrorList{field.Invalid(path.Child("minKubernetes"), minKubernetes, "is above maxKubernetes "+maxKubernetes+", so the row matches no Kubernetes minor; swap them")}
	}
	return nil
}
