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
		reason string
		v      string
		minor  bool
	}{
		"Minor":            {reason: "A minor is what a cluster names.", v: "v1.35", minor: true},
		"Release":          {reason: "A release is not a minor: Talos picks the patch, for a pool as for a cluster (the XRDs agree).", v: "v1.35.2"},
		"ZeroMinor":        {reason: "0 itself is a number.", v: "v1.0", minor: true},
		"LeadingZero":      {reason: "v1.035 is not how Kubernetes names a minor.", v: "v1.035"},
		"LeadingZeroPatch": {reason: "Nor v1.35.02 a release.", v: "v1.35.02"},
		"JunkSuffix":       {reason: "A junk suffix once passed the Input's prefix check and broke every pool.", v: "v1.35junk"},
		"EmptyPart":        {reason: "An empty number is no number.", v: "v1."},
		"NoV":              {reason: "Kubernetes versions start with v.", v: "1.35"},
		"TenDigits":        {reason: "Ten digits could overflow where versions are compared.", v: "v1.1234567890"},
		"NineDigits":       {reason: "Nine digits always fit.", v: "v1.123456789", minor: true},
		"PreRelease":       {reason: "A pre-release is not a version a pool runs.", v: "v1.35.0-rc.1"},
		"Whitespace":       {reason: "Surrounding space is not trimmed silently.", v: " v1.35"},
		"Empty":            {reason: "Empty is not a version; callers default before checking.", v: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := len(KubernetesMinor(field.NewPath("spec", "version"), tc.v)) == 0; got != tc.minor {
				t.Errorf("%s\nKubernetesMinor(%q) ok = %t, want %t", tc.reason, tc.v, got, tc.minor)
			}
		})
	}
}

func TestErrorsNameThePathAndTheValue(t *testing.T) {
	got := KubernetesMinor(field.NewPath("spec", "nodePools").Key("gpu").Child("version"), "v1.35junk").ToAggregate().Error()
	want := `spec.nodePools[gpu].version: Invalid value: "v1.35junk": is not a Kubernetes minor such as v1.35; write vMAJOR.MINOR without leading zeros, Talos picks the patch`
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
	if len(msg) > 250 {
		t.Errorf("a quoted value is bounded, got %d bytes: %s", len(msg), msg)
	}
}

func TestTalosVersions(t *testing.T) {
	cases := map[string]struct {
		reason       string
		v            string
		release, row bool
	}{
		"Release":             {reason: "vMAJOR.MINOR.PATCH is a release.", v: "v1.13.6", release: true},
		"PreRelease":          {reason: "The factory publishes alphas and betas.", v: "v1.14.0-alpha.0", release: true},
		"PreReleaseAlnum":     {reason: "An identifier may mix letters and digits.", v: "v1.14.0-rc1", release: true},
		"Minor":               {reason: "A support-matrix row names a minor; the factory has no artifact for one.", v: "v1.13", row: true},
		"LeadingZeroMinor":    {reason: "v1.013.6 is not how Talos tags a release.", v: "v1.013.6"},
		"LeadingZeroRowMinor": {reason: "Nor v1.013 a row, which would never match v1.13.", v: "v1.013"},
		"LeadingZeroPreRel":   {reason: "A numeric pre-release identifier has no leading zero (semver).", v: "v1.14.0-alpha.01"},
		"EmptyPreRelPart":     {reason: "An empty identifier makes an invalid golden name.", v: "v1.0.0-rc..1"},
		"PreRelEndingInDot":   {reason: "v1.0.0-. would build an invalid golden name.", v: "v1.0.0-."},
		"EmptyPreRelease":     {reason: "A dangling hyphen.", v: "v1.0.0-"},
		"Uppercase":           {reason: "Talos tags are lowercase; uppercase breaks the golden name.", v: "v1.14.0-RC.1"},
		"BuildMetadata":       {reason: "+ cannot be part of an object name.", v: "v1.13.6+build"},
		"JunkSuffix":          {reason: "A suffix must not slip past the matrix as an unknown minor.", v: "v1.13.6junk"},
		"RowWithPatch":        {reason: "A row with a patch would never match.", v: "v1.13.6.1"},
		"NoV":                 {reason: "Talos releases carry a leading v.", v: "1.13.6"},
		"YAMLMeta":            {reason: "A YAML metacharacter must not reach a manifest.", v: "v1.13.6: x"},
		"Newline":             {reason: "A newline must not reach a config.", v: "v1.13.6\nmachine: {}"},
		"TenDigits":           {reason: "Ten digits could overflow where versions are compared.", v: "v1.1234567890.0"},
		"TooLong":             {reason: "A version is bounded by the golden name.", v: "v1.2.3-" + strings.Repeat("a", MaxVersionLength)},
		"Empty":               {reason: "Empty builds no name.", v: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := len(TalosVersion(field.NewPath("spec", "talos", "version"), tc.v)) == 0; got != tc.release {
				t.Errorf("%s\nTalosVersion(%q) ok = %t, want %t", tc.reason, tc.v, got, tc.release)
			}
			if got := len(TalosMinor(field.NewPath("supportMatrix", "entries").Index(0).Child("talos"), tc.v)) == 0; got != tc.row {
				t.Errorf("%s\nTalosMinor(%q) ok = %t, want %t", tc.reason, tc.v, got, tc.row)
			}
		})
	}
}

// TestParseVersions checks both readers of a version's minor: ParseMinor,
// of versions the rules accepted, and LeadingMinor, of a control plane's.
func TestParseVersions(t *testing.T) {
	cases := map[string]struct {
		v              string
		minor, leading string // "" when not ok
	}{
		"TalosRelease":    {"v1.13.6", "v1.13", "v1.13"},
		"TalosPreRelease": {"v1.14.0-rc.1", "v1.14", "v1.14"},
		"KubernetesMinor": {"v1.35", "v1.35", "v1.35"},
		"ReleaseShape":    {"v1.35.2", "v1.35", "v1.35"},
		"NumericCompare":  {"v1.100.0", "v1.100", "v1.100"},
		"LeadingZero":     {"v1.013.6", "", ""},
		"JunkSuffix":      {"v1.35junk", "", ""},
		"NoV":             {"1.35", "", "v1.35"},
		"DistroSuffix":    {"v1.33.2+k3s1", "", "v1.33"},
		"NoMinor":         {"v1", "", ""},
		"Empty":           {"", "", ""},
	}
	str := func(v Version, ok bool) string {
		if !ok {
			return ""
		}
		return v.String()
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := str(ParseMinor(tc.v)); got != tc.minor {
				t.Errorf("ParseMinor(%q) = %q, want %q: a version that slipped past its rule must never be compared", tc.v, got, tc.minor)
			}
			if got := str(LeadingMinor(tc.v)); got != tc.leading {
				t.Errorf("LeadingMinor(%q) = %q, want %q", tc.v, got, tc.leading)
			}
		})
	}
}

func TestVersionCompare(t *testing.T) {
	cases := map[string]struct {
		a, b Version
		want int
	}{
		"Equal":            {Version{1, 12}, Version{1, 12}, 0},
		"MinorsAreNumbers": {Version{1, 100}, Version{1, 12}, 1},
		"MajorFirst":       {Version{1, 99}, Version{2, 0}, -1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.a.Compare(tc.b); got != tc.want {
				t.Errorf("%v.Compare(%v) = %d, want %d", tc.a, tc.b, got, tc.want)
			}
		})
	}
}
