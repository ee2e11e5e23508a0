package rules

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestKubernetesVersions(t *testing.T) {
	cases := map[string]struct {
		reason      string
		v           string
		minor, pool bool
	}{
		"Minor":            {reason: "A minor is what a cluster names.", v: "v1.35", minor: true, pool: true},
		"Release":          {reason: "A pool may name a release; a cluster may not.", v: "v1.35.2", pool: true},
		"ZeroMinor":        {reason: "0 itself is a number.", v: "v1.0", minor: true, pool: true},
		"LeadingZero":      {reason: "v1.035 is not how Kubernetes names a minor.", v: "v1.035"},
		"LeadingZeroPatch": {reason: "Nor v1.35.02 a release.", v: "v1.35.02"},
		"JunkSuffix":       {reason: "A junk suffix once passed the Input's prefix check and broke every pool.", v: "v1.35junk"},
		"EmptyPart":        {reason: "An empty number is no number.", v: "v1."},
		"NoV":              {reason: "Kubernetes versions start with v.", v: "1.35"},
		"TenDigits":        {reason: "Ten digits could overflow where versions are compared.", v: "v1.1234567890"},
		"NineDigits":       {reason: "Nine digits always fit.", v: "v1.123456789", minor: true, pool: true},
		"PreRelease":       {reason: "A pre-release is not a version a pool runs.", v: "v1.35.0-rc.1"},
		"Whitespace":       {reason: "Surrounding space is not trimmed silently.", v: " v1.35"},
		"Empty":            {reason: "Empty is not a version; callers default before checking.", v: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := len(KubernetesMinor(field.NewPath("spec", "version"), tc.v)) == 0; got != tc.minor {
				t.Errorf("%s\nKubernetesMinor(%q) ok = %t, want %t", tc.reason, tc.v, got, tc.minor)
			}
			if got := len(KubernetesVersion(field.NewPath("spec", "version"), tc.v)) == 0; got != tc.pool {
				t.Errorf("%s\nKubernetesVersion(%q) ok = %t, want %t", tc.reason, tc.v, got, tc.pool)
			}
		})
	}
}

func TestErrorsNameThePathAndTheValue(t *testing.T) {
	got := KubernetesMinor(field.NewPath("spec", "nodePools").Key("gpu").Child("version"), "v1.35junk").ToAggregate().Error()
	want := `spec.nodePools[gpu].version: Invalid value: "v1.35junk": is not a Kubernetes minor such as v1.35`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the error names the path and the bad value\n-want, +got:\n%s", diff)
	}
}

func TestQuotedValuesAreShortAndValidUTF8(t *testing.T) {
	long := "v1." + strings.Repeat("é", 100)
	errs := KubernetesMinor(field.NewPath("spec", "version"), long)
	msg := errs.ToAggregate().Error()
	if !utf8.ValidString(msg) {
		t.Fatalf("a quoted value is cut on a rune boundary: %q", msg)
	}
	if len(msg) > 200 {
		t.Errorf("a quoted value is bounded, got %d bytes: %s", len(msg), msg)
	}
}
