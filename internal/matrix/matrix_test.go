package matrix

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cozystack/function-worker-image/internal/config"
)

func TestCheck(t *testing.T) {
	cases := map[string]struct {
		reason     string
		cfg        config.Config
		talos, k8s string
		want       Result
	}{
		"SupportedPairing": {
			reason: "Talos v1.13 supports Kubernetes v1.35.",
			talos:  "v1.13.6", k8s: "v1.35",
			want: Result{Verdict: Supported, TalosMinor: "v1.13", Supported: []string{"v1.31", "v1.32", "v1.33", "v1.34", "v1.35", "v1.36"}},
		},
		"KubernetesTooNew": {
			reason: "Talos v1.11 stops at Kubernetes v1.34.",
			talos:  "v1.11.2", k8s: "v1.35",
			want: Result{Verdict: Unsupported, TalosMinor: "v1.11", Supported: []string{"v1.29", "v1.30", "v1.31", "v1.32", "v1.33", "v1.34"}},
		},
		"KubernetesTooOld": {
			reason: "Talos v1.13 starts at Kubernetes v1.31.",
			talos:  "v1.13.0", k8s: "v1.30",
			want: Result{Verdict: Unsupported, TalosMinor: "v1.13", Supported: []string{"v1.31", "v1.32", "v1.33", "v1.34", "v1.35", "v1.36"}},
		},
		"UnlistedTalosMinorFailsOpen": {
			reason: "A Talos minor the table does not know is allowed.",
			talos:  "v1.14.0-rc.1", k8s: "v1.35",
			want: Result{Verdict: Unknown, TalosMinor: "v1.14"},
		},
		"InputExtendsTable": {
			reason: "An Input row adds a Talos minor.",
			cfg:    config.Config{MatrixEntries: []config.MatrixEntry{{Talos: "v1.14", MinKubernetes: "v1.32", MaxKubernetes: "v1.37"}}},
			talos:  "v1.14.0", k8s: "v1.31",
			want: Result{Verdict: Unsupported, TalosMinor: "v1.14", Supported: []string{"v1.32", "v1.33", "v1.34", "v1.35", "v1.36", "v1.37"}},
		},
		"InputOverridesRow": {
			reason: "An Input row for a built-in minor replaces that row.",
			cfg:    config.Config{MatrixEntries: []config.MatrixEntry{{Talos: "v1.13", MinKubernetes: "v1.34", MaxKubernetes: "v1.36"}}},
			talos:  "v1.13.6", k8s: "v1.33",
			want: Result{Verdict: Unsupported, TalosMinor: "v1.13", Supported: []string{"v1.34", "v1.35", "v1.36"}},
		},
		"InputReplacesTable": {
			reason: "Replace drops the built-in rows, so v1.13 becomes unknown.",
			cfg:    config.Config{MatrixReplace: true},
			talos:  "v1.13.6", k8s: "v1.20",
			want: Result{Verdict: Unknown, TalosMinor: "v1.13"},
		},
		"MalformedKubernetesVersionIsUnsupported": {
			reason: "A Kubernetes version that is no minor cannot be in any row.",
			talos:  "v1.13.6", k8s: "latest",
			want: Result{Verdict: Unsupported, TalosMinor: "v1.13", Supported: []string{"v1.31", "v1.32", "v1.33", "v1.34", "v1.35", "v1.36"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := FromConfig(tc.cfg).Check(tc.talos, tc.k8s)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestMessage(t *testing.T) {
	r := FromConfig(config.Config{}).Check("v1.11.2", "v1.35")
	want := "Kubernetes v1.35 is not supported by Talos v1.11.2 (Talos v1.11 supports v1.29, v1.30, v1.31, v1.32, v1.33, v1.34). Bump version or talos.version."
	if diff := cmp.Diff(want, r.Message("v1.35", "v1.11.2", "Bump version or talos.version.")); diff != "" {
		t.Errorf("-want, +got:\n%s", diff)
	}
}
