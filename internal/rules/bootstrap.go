package rules

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// BootstrapModes are a pool's Talos bootstrap modes, as the XRD's enum.
var BootstrapModes = []string{"Generate", "Join"}

// BootstrapMode checks spec.bootstrap.mode. Empty means Generate (a
// composite whose XRD carries no default). Anything else would otherwise
// silently pick Generate, which cannot join a Kamaji control plane.
func BootstrapMode(path *field.Path, v string) field.ErrorList {
	if v == "" {
		return nil
	}
	for _, m := range BootstrapModes {
		if v == m {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(path, Quoted(v), BootstrapModes)}
}

// MaxFactsRevision bounds spec.bootstrap.factsRevision, as the XRD does.
const MaxFactsRevision = 1000000000

// FactsRevision checks spec.bootstrap.factsRevision: a counter the platform
// bumps, never negative.
func FactsRevision(path *field.Path, v int64) field.ErrorList {
	if v < 0 || v > MaxFactsRevision {
		return field.ErrorList{field.Invalid(path, v, "is not a revision between 0 and 1000000000; bump it by one to roll a Join pool onto the cluster's current facts")}
	}
	return nil
}
