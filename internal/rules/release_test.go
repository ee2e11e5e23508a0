package rules

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestKubernetesReleaseRow(t *testing.T) {
	cases := map[string]struct {
		reason         string
		minor, release string
		ok             bool
	}{
		"ShippedPatch":    {reason: "The chart's own row (files/versions.yaml@69da032).", minor: "v1.35", release: "v1.35.6", ok: true},
		"FirstRelease":    {reason: "The .0 release is a release.", minor: "v1.36", release: "v1.36.0", ok: true},
		"OtherMinor":      {reason: "A release of another minor would skip the support matrix.", minor: "v1.35", release: "v1.34.9"},
		"MinorAsRelease":  {reason: "A minor is no release: a Machine needs the patch.", minor: "v1.35", release: "v1.35"},
		"PreRelease":      {reason: "No kubelet image ships for a pre-release.", minor: "v1.35", release: "v1.35.0-rc.1"},
		"LeadingZero":     {reason: "v1.35.06 is not how Kubernetes names a release.", minor: "v1.35", release: "v1.35.06"},
		"BadMinor":        {reason: "The key is a minor.", minor: "v1.35.0", release: "v1.35.6"},
		"PrefixNotSuffix": {reason: "v1.3 is not v1.35 even though the text starts alike.", minor: "v1.3", release: "v1.35.6"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			errs := KubernetesReleaseRow(field.NewPath("supportMatrix", "kubernetesReleases").Index(0), tc.minor, tc.release)
			if got := len(errs) == 0; got != tc.ok {
				t.Errorf("%s\nKubernetesReleaseRow(%q, %q) = %v, want ok %t", tc.reason, tc.minor, tc.release, errs, tc.ok)
			}
		})
	}
}
