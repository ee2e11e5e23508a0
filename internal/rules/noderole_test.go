package rules

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestNodeRole(t *testing.T) {
	cases := map[string]struct {
		reason string
		role   string
		ok     bool
	}{
		"IngressNginx": {"The chart's documented role (values.yaml roles: [ingress-nginx]).", "ingress-nginx", true},
		"Dotted":       {"A label name may hold dots and underscores.", "gpu.large_v2", true},
		"Uppercase":    {"Label names are case-sensitive and admit capitals.", "Worker", true},
		"Longest":      {"63 characters is the label name bound.", strings.Repeat("a", 63), true},
		"Empty":        {"node-role.kubernetes.io/ alone is no key.", "", false},
		"TooLong":      {"64 characters is too long for a label name.", strings.Repeat("a", 64), false},
		"Slash":        {"A second slash makes no label key.", "a/b", false},
		"Space":        {"Spaces are not label characters.", "in gress", false},
		"TrailingDash": {"A label name ends alphanumeric.", "ingress-", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			errs := NodeRole(field.NewPath("spec", "roles").Index(0), tc.role)
			if got := len(errs) == 0; got != tc.ok {
				t.Errorf("%s\nNodeRole(%q) ok = %t, want %t (%v)", tc.reason, tc.role, got, tc.ok, errs)
			}
			if !tc.ok && !strings.Contains(errs.ToAggregate().Error(), "spec.roles[0]") {
				t.Errorf("%s\nerror does not name the field: %v", tc.reason, errs)
			}
		})
	}
}
