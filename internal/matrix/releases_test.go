package matrix

import (
	"testing"

	"github.com/cozystack/function-worker-image/internal/config"
)

func TestRelease(t *testing.T) {
	cases := map[string]struct {
		reason string
		cfg    config.Config
		minor  string
		want   string
	}{
		// The chart's table, files/versions.yaml@69da032, row by row.
		"ChartV135": {reason: "The chart maps v1.35 to v1.35.6.", minor: "v1.35", want: "v1.35.6"},
		"ChartV134": {reason: "The chart maps v1.34 to v1.34.9.", minor: "v1.34", want: "v1.34.9"},
		"ChartV133": {reason: "The chart maps v1.33 to v1.33.13.", minor: "v1.33", want: "v1.33.13"},
		"ChartV132": {reason: "The chart maps v1.32 to v1.32.13.", minor: "v1.32", want: "v1.32.13"},
		"ChartV131": {reason: "The chart maps v1.31 to v1.31.14.", minor: "v1.31", want: "v1.31.14"},
		"UnknownMinorRunsItsFirstRelease": {
			reason: "The chart fails on a minor it does not list; the function runs its .0, so a new minor needs no function release.",
			minor:  "v1.36", want: "v1.36.0",
		},
		"InputOverrides": {
			reason: "The Input's row wins over the built-in one.",
			cfg:    config.Config{KubernetesReleases: map[string]string{"v1.35": "v1.35.7"}},
			minor:  "v1.35", want: "v1.35.7",
		},
		"InputAdds": {
			reason: "The Input can add a minor.",
			cfg:    config.Config{KubernetesReleases: map[string]string{"v1.36": "v1.36.2"}},
			minor:  "v1.36", want: "v1.36.2",
		},
		"ReplaceDropsTheBuiltinTable": {
			reason: "supportMatrix.replace drops the built-in releases with the built-in rows.",
			cfg:    config.Config{MatrixReplace: true},
			minor:  "v1.35", want: "v1.35.0",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Release(tc.cfg, tc.minor); got != tc.want {
				t.Errorf("%s\nRelease(%q) = %q, want %q", tc.reason, tc.minor, got, tc.want)
			}
		})
	}
}
