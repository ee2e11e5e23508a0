package rules

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestCountOrPercent(t *testing.T) {
	path := field.NewPath("spec", "x")
	cases := map[string]struct {
		reason string
		v      string
		want   intstr.IntOrString
		ok     bool
	}{
		"Percent":        {"The chart default.", "50%", intstr.FromString("50%"), true},
		"ZeroPercent":    {"chart: 0% is accepted.", "0%", intstr.FromString("0%"), true},
		"HundredPercent": {"The whole pool.", "100%", intstr.FromString("100%"), true},
		"Count":          {"A count renders as a bare integer, which the webhook wants.", "1", intstr.FromInt32(1), true},
		"ZeroCount":      {"chart: 0 renders as the integer 0.", "0", intstr.FromInt32(0), true},
		"LeadingZero":    {"007 is 7.", "007", intstr.FromInt32(7), true},
		"Fraction":       {"chart: a fraction is refused.", "1.5", intstr.IntOrString{}, false},
		"FractionPct":    {"chart: 50.5% is refused.", "50.5%", intstr.IntOrString{}, false},
		"Negative":       {"chart: -1 is refused.", "-1", intstr.IntOrString{}, false},
		"Words":          {"chart: text is refused.", "half", intstr.IntOrString{}, false},
		"SpacePercent":   {"No space before %.", "50 %", intstr.IntOrString{}, false},
		"OverHundred":    {"Tighter than the chart.", "150%", intstr.IntOrString{}, false},
		"OverMaxCount":   {"More workers than a pool has.", "5000", intstr.IntOrString{}, false},
		"Empty":          {"Callers default before checking.", "", intstr.IntOrString{}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, errs := CountOrPercent(path, tc.v)
			if ok := len(errs) == 0; ok != tc.ok {
				t.Fatalf("%s\nok = %t, want %t (%v)", tc.reason, ok, tc.ok, errs)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
			for _, e := range errs {
				if e.Field != "spec.x" {
					t.Errorf("%s: the error names %q", tc.reason, e.Field)
				}
			}
		})
	}
}
