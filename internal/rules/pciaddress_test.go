package rules

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestPCIAddress(t *testing.T) {
	cases := map[string]struct {
		reason string
		v      string
		ok     bool
	}{
		"Omitted":      {"Omitted takes the default.", "", true},
		"ChartDefault": {"The chart's address (nodegroup.yaml:154 @69da032).", "0000:07:00.0", true},
		"HexDigits":    {"Hex digits are lowercase.", "0000:0a:1f.7", true},
		"Uppercase":    {"One spelling, so one template hash.", "0000:0A:00.0", false},
		"NoDomain":     {"The domain is required.", "07:00.0", false},
		"Function8":    {"A PCI function is 0-7.", "0000:07:00.8", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := len(PCIAddress(field.NewPath("spec", "disk", "pciAddress"), tc.v)) == 0; got != tc.ok {
				t.Errorf("%s\nPCIAddress(%q) ok = %t, want %t", tc.reason, tc.v, got, tc.ok)
			}
		})
	}
}
