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

// MaxRevision bounds every revision counter (spec.bootstrap.factsRevision,
// spec.templateRevision, the Input's templateRevision), as the XRDs do.
const MaxRevision = 1000000000

// Revision checks a revision counter a platform bumps to roll on purpose:
// never negative. fix says what a bump does.
func Revision(path *field.Path, v int64, fix string) field.ErrorList {
	if v < 0 || v > MaxRevision {
		return field.ErrorList{field.Invalid(path, v, "is not a revision between 0 and 1000000000; "+fix)}
	}
	return nil
}

// FactsRevision checks spec.bootstrap.factsRevision.
func FactsRevision(path *field.Path, v int64) field.ErrorList {
	return Revision(path, v, "bump it by one to roll a Join pool onto the cluster's current facts")
}

// TemplateRevision checks a pool's or the Input's templateRevision.
func TemplateRevision(path *field.Path, v int64) field.ErrorList {
	return Revision(path, v, "bump it by one to render the templates with the running release of the function")
}
