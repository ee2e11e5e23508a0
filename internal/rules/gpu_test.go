package rules

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestGPUName(t *testing.T) {
	cases := map[string]struct {
		reason string
		name   string
		ok     bool
	}{
		"NVIDIA":   {"A vendor-prefixed resource.", "nvidia.com/GB202_RTX_PRO_6000", true},
		"AMD":      {"Another vendor.", "amd.com/gpu", true},
		"Missing":  {"A GPU needs a name.", "", false},
		"Spaces":   {"Not a resource name.", "nvidia.com/RTX 4090", false},
		"TwoSlash": {"One prefix at most.", "a/b/c", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := len(GPUName(field.NewPath("spec", "gpus").Index(0).Child("name"), tc.name)) == 0; got != tc.ok {
				t.Errorf("%s\nGPUName(%q) ok = %t, want %t", tc.reason, tc.name, got, tc.ok)
			}
		})
	}
}
