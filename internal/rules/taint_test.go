package rules

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestTaintEffect(t *testing.T) {
	cases := map[string]struct {
		reason string
		effect string
		ok     bool
	}{
		"NoSchedule":       {"A scheduling taint.", "NoSchedule", true},
		"PreferNoSchedule": {"A soft taint.", "PreferNoSchedule", true},
		"NoExecute":        {"An evicting taint.", "NoExecute", true},
		"Missing":          {"A taint needs an effect.", "", false},
		"Lowercase":        {"Effects are case-sensitive.", "noschedule", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := len(TaintEffect(field.NewPath("spec", "taints").Index(0).Child("effect"), tc.effect)) == 0; got != tc.ok {
				t.Errorf("%s\nTaintEffect(%q) ok = %t, want %t", tc.reason, tc.effect, got, tc.ok)
			}
		})
	}
}
