package rules

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestBootstrapRules(t *testing.T) {
	path := field.NewPath("spec", "bootstrap", "mode")
	cases := map[string]struct {
		reason string
		errs   field.ErrorList
		ok     bool
	}{
		"Generate":           {reason: "CABPT generation for TalosControlPlane clusters.", errs: BootstrapMode(path, "Generate"), ok: true},
		"Join":               {reason: "The complete config for Kamaji clusters.", errs: BootstrapMode(path, "Join"), ok: true},
		"EmptyIsGenerate":    {reason: "An XRD without the default leaves it empty.", errs: BootstrapMode(path, ""), ok: true},
		"LowercaseIsRefused": {reason: "The enum is case-sensitive; join would silently generate.", errs: BootstrapMode(path, "join")},
		"RevisionZero":       {reason: "The default.", errs: FactsRevision(path, 0), ok: true},
		"NegativeRevision":   {reason: "A counter is never negative.", errs: FactsRevision(path, -1)},
		"HugeRevision":       {reason: "Bounded as in the XRD.", errs: FactsRevision(path, MaxRevision+1)},
		"TemplateRevision":   {reason: "A bump takes the running release's rendering.", errs: TemplateRevision(path, 3), ok: true},
		"NegativeTemplate":   {reason: "Bounded below as in the XRD and the Input.", errs: TemplateRevision(path, -1)},
		"HugeTemplate":       {reason: "Bounded above as in the XRD and the Input.", errs: TemplateRevision(path, MaxRevision+1)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := len(tc.errs) == 0; got != tc.ok {
				t.Errorf("%s\nerrors = %v, want ok %t", tc.reason, tc.errs, tc.ok)
			}
		})
	}
}
