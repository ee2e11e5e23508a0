package capability

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

func TestCheck(t *testing.T) {
	all := Advertised
	without := func(c fnv1.Capability) []fnv1.Capability {
		var out []fnv1.Capability
		for _, x := range all {
			if x != c {
				out = append(out, x)
			}
		}
		return out
	}
	cases := map[string]struct {
		reason      string
		meta        *fnv1.RequestMeta
		fatal, warn bool
	}{
		"NoMeta":            {reason: "A caller that sends no meta (a test, a tool) is not judged.", meta: nil},
		"NothingAdvertised": {reason: "Before v2.2 Crossplane advertised nothing: nothing can be told.", meta: &fnv1.RequestMeta{Capabilities: []fnv1.Capability{fnv1.Capability_CAPABILITY_REQUIRED_RESOURCES}}},
		"Everything":        {reason: "Crossplane v2.2 to v2.4 advertise all five (xfn.SupportedCapabilities).", meta: &fnv1.RequestMeta{Capabilities: all}},
		"NoRequiredResources": {
			reason: "Every decision reads required resources: refused.",
			meta:   &fnv1.RequestMeta{Capabilities: without(fnv1.Capability_CAPABILITY_REQUIRED_RESOURCES)}, fatal: true,
		},
		"NoConditions": {
			reason: "The function composes, but its conditions would not show: a warning.",
			meta:   &fnv1.RequestMeta{Capabilities: without(fnv1.Capability_CAPABILITY_CONDITIONS)}, warn: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := Check(tc.meta)
			if (v.Fatal != nil) != tc.fatal || (v.Warning != "") != tc.warn {
				t.Errorf("%s\nCheck = %+v, want fatal %t, warning %t", tc.reason, v, tc.fatal, tc.warn)
			}
		})
	}
}
