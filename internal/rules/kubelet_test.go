package rules

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestKubeletReservations(t *testing.T) {
	path := field.NewPath("spec", "kubelet", "x")
	ok := func(errs field.ErrorList) bool { return len(errs) == 0 }
	mem := func(v string) bool { _, e := ReservedMemory(path, v); return ok(e) }
	cpu := func(v string) bool { _, e := ReservedCPU(path, v); return ok(e) }
	thr := func(v string) bool { _, e := EvictionThreshold(path, v); return ok(e) }
	cases := map[string]struct {
		reason string
		got    bool
		ok     bool
	}{
		// After the chart's guards (kubernetes-nodes templates/nodegroup.yaml:346-400@69da032).
		"Memory":            {"512Mi is a reservation.", mem("512Mi"), true},
		"MemoryZero":        {"The chart refuses a zero reservation.", mem("0"), false},
		"MemoryNotQuantity": {"Prose is refused.", mem("lots"), false},
		"CPUMilli":          {"100m is a reservation.", cpu("100m"), true},
		"CPUDecimal":        {"0.5 cores.", cpu("0.5"), true},
		"CPUZero":           {"The chart refuses 0m.", cpu("0m"), false},
		"CPUNegative":       {"Negative CPU.", cpu("-1"), false},
		"Percent":           {"7% of the node.", thr("7%"), true},
		"PercentFraction":   {"7.5% of the node.", thr("7.5%"), true},
		"PercentHundred":    {"100% is the bound.", thr("100%"), true},
		"PercentZero":       {"The chart refuses 0%.", thr("0%"), false},
		"PercentOver":       {"The chart refuses over 100%.", thr("101%"), false},
		"PercentExponent":   {"1e1% is not a percentage.", thr("1e1%"), false},
		"Absolute":          {"500Mi absolute.", thr("500Mi"), true},
		"AbsoluteZero":      {"A zero threshold evicts nothing.", thr("0"), false},
		"Garbage":           {"Neither.", thr("seven"), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.got != tc.ok {
				t.Errorf("%s\nok = %t, want %t", tc.reason, tc.got, tc.ok)
			}
		})
	}
}

func TestThresholdBytes(t *testing.T) {
	p, _ := EvictionThreshold(nil, "10%")
	if got := p.Bytes(1000); got != 100 {
		t.Errorf("10%% of 1000 = %v, want 100", got)
	}
	a, _ := EvictionThreshold(nil, "1Ki")
	if got := a.Bytes(1 << 30); got != 1024 {
		t.Errorf("1Ki = %v, want 1024", got)
	}
}
