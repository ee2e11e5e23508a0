package talosconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cozystack/function-worker-image/internal/config"
)

func TestJoinConfigFacts(t *testing.T) {
	facts := JoinFacts{
		MachineToken: "m", ClusterID: "id", ClusterSecret: "s", BootstrapToken: "b",
		TalosCA: "tca", KubernetesCA: "kca", APIServerIP: "10.96.12.34", DNSIP: "10.96.0.10",
	}
	cases := map[string]struct {
		reason string
		config MachineConfig
		want   JoinFacts
	}{
		"RoundTrip": {
			reason: "A config JoinConfig wrote gives back the facts it was written from: pinFacts compares a running config with the current facts this way.",
			config: JoinConfig(JoinCluster{Namespace: "tenant-demo", Name: "demo", APIServer: "demo"}, config.Join{}, facts, "v1.35.6"),
			want:   facts,
		},
		"Unreadable": {
			reason: "An empty (unreadable) document carries no facts, and no host entry or nameserver to index.",
			want:   JoinFacts{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.config.Facts()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
