package tenantcluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/matrix"
)

func TestCheckSupport(t *testing.T) {
	type want struct {
		cond compose.Condition
		err  string
	}
	cases := map[string]struct {
		reason     string
		cfg        config.Config
		k8s, talos string
		want       want
	}{
		"SupportedPairingIsReported": {
			reason: "A listed pairing passes with a True condition.",
			k8s:    "v1.35", talos: "v1.13.6",
			want: want{cond: compose.Condition{Type: matrix.ConditionType, Status: compose.StatusTrue, Reason: matrix.ReasonSupported, Message: "Talos v1.13.6 supports Kubernetes v1.35."}},
		},
		"KnownBadPairingIsFatal": {
			reason: "Talos v1.11 stops at Kubernetes v1.34; the message gives the supported range and the remedy.",
			k8s:    "v1.35", talos: "v1.11.2",
			want: want{err: "Kubernetes v1.35 is not supported by Talos v1.11.2 (Talos v1.11 supports v1.29, v1.30, v1.31, v1.32, v1.33, v1.34). Bump the tenant cluster's version or set talos.version explicitly."},
		},
		"UnlistedTalosMinorPassesWithUnknown": {
			reason: "The matrix fails open for a Talos minor it does not list, and says so.",
			k8s:    "v1.36", talos: "v1.14.0",
			want: want{cond: compose.Condition{
				Type: matrix.ConditionType, Status: compose.StatusUnknown, Reason: matrix.ReasonUnknownTalosMinor,
				Message: "Talos v1.14.0 is not in the support matrix (it lists v1.8, v1.9, v1.10, v1.11, v1.12, v1.13), so Kubernetes v1.36 on it is allowed unchecked; add a supportMatrix entry for v1.14 to the function's Input once its support range is known.",
			}},
		},
		"InputRowIsHonoured": {
			reason: "A supportMatrix entry of the Input makes a new minor checkable.",
			cfg:    config.Config{MatrixEntries: []config.MatrixEntry{{Talos: "v1.14", MinKubernetes: "v1.33", MaxKubernetes: "v1.37"}}},
			k8s:    "v1.32", talos: "v1.14.0",
			want: want{err: "Kubernetes v1.32 is not supported by Talos v1.14.0 (Talos v1.14 supports v1.33, v1.34, v1.35, v1.36, v1.37). Bump the tenant cluster's version or set talos.version explicitly."},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cond, err := checkSupport(tc.cfg, tc.k8s, tc.talos)
			got := want{cond: cond, err: errorMessage(err)}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
