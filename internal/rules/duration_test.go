package rules

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestPositiveDuration(t *testing.T) {
	path := field.NewPath("spec", "x")
	cases := map[string]struct {
		reason  string
		v       string
		atLeast time.Duration
		want    time.Duration
		ok      bool
	}{
		"Minutes":         {"The chart default.", "30m", 0, 30 * time.Minute, true},
		"Compound":        {"Hours and minutes.", "1h30m", 0, 90 * time.Minute, true},
		"Canonical":       {"metav1.Duration writes 20m0s back.", "20m0s", 0, 20 * time.Minute, true},
		"ThreeSegments":   {"The canonical form of an hour.", "1h0m0s", 0, time.Hour, true},
		"BareNumber":      {"chart: 30 has no unit.", "30", 0, 0, false},
		"Negative":        {"chart: -5m is refused.", "-5m", 0, 0, false},
		"Zero":            {"The first segment must be positive.", "0s", 0, 0, false},
		"Fraction":        {"A fraction could round to zero.", "1.5m", 0, 0, false},
		"Milliseconds":    {"Only s, m, h.", "500ms", 0, 0, false},
		"FourSegments":    {"At most three.", "1h1m1s1s", 0, 0, false},
		"LeadingZero":     {"No leading zero.", "05m", 0, 0, false},
		"Overflow":        {"Six digits could overflow.", "999999h", 0, 0, false},
		"Empty":           {"Callers skip an omitted value.", "", 0, 0, false},
		"BelowFloor":      {"MachineHealthCheck's 30s floor.", "29s", 30 * time.Second, 0, false},
		"AtFloor":         {"30s is the floor itself.", "30s", 30 * time.Second, 30 * time.Second, true},
		"LargestAdmitted": {"Five digits of hours still parse.", "99999h99999m99999s", 0, 99999*time.Hour + 99999*time.Minute + 99999*time.Second, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, errs := PositiveDuration(path, tc.v, tc.atLeast)
			if ok := len(errs) == 0; ok != tc.ok {
				t.Fatalf("%s\nok = %t, want %t (%v)", tc.reason, ok, tc.ok, errs)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
			for _, e := range errs {
				if e.Field != "spec.x" || e.Type == field.ErrorTypeInternal {
					t.Errorf("%s: %v", tc.reason, e)
				}
			}
		})
	}
}
