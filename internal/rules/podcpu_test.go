package rules

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The chart's own cases (packages/apps/kubernetes-nodes/tests/
// pod_cpu_limit_test.yaml and pod_cpu_request_test.yaml @69da032) for the
// value domain: millicores and decimals accepted, zero accepted (its pairing
// is poolspec's), negatives refused.
func TestPodCPU(t *testing.T) {
	cases := map[string]struct {
		reason string
		v      string
		ok     bool
	}{
		"Omitted":    {"Omitted means KubeVirt derives it.", "", true},
		"Whole":      {"Whole cores.", "2", true},
		"Millicores": {"1500m is 1.5 cores.", "1500m", true},
		"Decimal":    {"Decimal cores.", "1.5", true},
		"Zero":       {"Zero is a quantity a pool can mean.", "0", true},
		"Negative":   {"The API server refuses a negative quantity outright.", "-1", false},
		"Huge":       {"More than any host.", "5000", false},
		"NotANumber": {"Not a quantity.", "two", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, errs := PodCPU(field.NewPath("spec", "podCpuLimit"), tc.v)
			if got := len(errs) == 0; got != tc.ok {
				t.Errorf("%s\nPodCPU(%q) ok = %t, want %t (%v)", tc.reason, tc.v, got, tc.ok, errs)
			}
		})
	}
}
