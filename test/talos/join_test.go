package talos

import (
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/configpatcher"
	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
	"github.com/siderolabs/talos/pkg/machinery/config/validation"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/defaults"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// joinFacts are the join facts of cluster demo in namespace tenant-demo as
// the node pool reads them from what cozystack's kubernetes chart and Kamaji
// publish, with real Talos secrets and CAs from Talos' own secrets bundle
// (the CAs base64 PEM, as Talos' ca.crt wants them).
func joinFacts(bundle *secrets.Bundle) talosconfig.JoinFacts {
	b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	return talosconfig.JoinFacts{
		MachineToken: bundle.TrustdInfo.Token, ClusterID: bundle.Cluster.ID, ClusterSecret: bundle.Cluster.Secret,
		BootstrapToken: bundle.Secrets.BootstrapToken,
		TalosCA:        b64(bundle.Certs.OS.Crt), KubernetesCA: b64(bundle.Certs.K8s.Crt),
		APIServerIP: "10.96.12.34", DNSIP: "10.96.0.10",
	}
}

// renderJoinWorker renders w's Join TalosConfig spec with talosconfig, as the
// node pool does for a Join pool: generateType none, the complete worker
// config of the facts as data, the Generate pool's patches.
func renderJoinWorker(t *testing.T, w worker, facts talosconfig.JoinFacts) talosconfig.TalosConfigSpec {
	t.Helper()
	cfg := inputConfig(t)
	r := renderWorker(t, w)
	data, err := talosconfig.JoinConfig(talosconfig.JoinCluster{Namespace: "tenant-demo", Name: "demo", APIServer: "demo"}, cfg.Join, facts, r.KubernetesVersion).Encode()
	if err != nil {
		t.Fatalf("talosconfig.JoinConfig: %v", err)
	}
	return talosconfig.TalosConfigSpec{GenerateType: talosconfig.GenerateTypeNone, TalosVersion: w.Talos, StrategicPatches: r.StrategicPatches, Data: data}
}

// joinConfig does what CABPT does for generateType: none (v0.6.12
// controllers/talosconfig_controller.go, userConfigs and reconcileGenerate):
// load data as it is, then apply every strategic patch in order.
func joinConfig(sp talosconfig.TalosConfigSpec) (config.Provider, error) {
	patches := []configpatcher.Patch{}
	for i, p := range sp.StrategicPatches {
		patch, err := configpatcher.LoadPatch([]byte(p))
		if err != nil {
			return nil, fmt.Errorf("strategicPatches[%d]: %w", i, err)
		}
		patches = append(patches, patch)
	}
	out, err := configpatcher.Apply(configpatcher.WithBytes([]byte(sp.Data)), patches)
	if err != nil {
		return nil, fmt.Errorf("failure applying StrategicPatches: %w", err)
	}
	return out.Config()
}

// joined is what a worker reads from its Join config.
type joined struct {
	Type, Installer, InstallDisk, Kubelet, Endpoint, ClusterName, DNSDomain string
	Nameservers, SearchDomains, PodSubnets, ServiceSubnets                  []string
	Hosts                                                                   map[string][]string
	BootTimeout                                                             time.Duration
	DiscoveryEnabled, KubernetesRegistry, ServiceRegistry                   bool
	TokenMatches, CAsMatch, ClusterSecretsMatch                             bool
	Mirrors                                                                 []string
}

func readJoined(cfg config.Provider, bundle *secrets.Bundle) joined {
	m, c := cfg.Machine(), cfg.Cluster()
	j := joined{
		Type:               m.Type().String(),
		Installer:          m.Install().Image(),
		Kubelet:            m.Kubelet().Image(),
		Endpoint:           c.Endpoint().String(),
		ClusterName:        c.Name(),
		DNSDomain:          c.Network().DNSDomain(),
		PodSubnets:         c.Network().PodCIDRs(),
		ServiceSubnets:     c.Network().ServiceCIDRs(),
		BootTimeout:        cfg.NetworkTimeSyncConfig().BootTimeout(),
		DiscoveryEnabled:   c.Discovery().Enabled(),
		KubernetesRegistry: c.Discovery().Registries().Kubernetes().Enabled(),
		ServiceRegistry:    c.Discovery().Registries().Service().Enabled(),
		Hosts:              map[string][]string{},
	}
	j.InstallDisk = m.Install().Disk()
	raw := cfg.RawV1Alpha1()
	//nolint:staticcheck // the v1alpha1 resolver fields are what the chart writes and Talos 1.13 still reads.
	j.Nameservers = raw.MachineConfig.MachineNetwork.NameServers
	//nolint:staticcheck // as above.
	j.SearchDomains = raw.MachineConfig.MachineNetwork.Searches
	//nolint:staticcheck // as above.
	for _, h := range raw.MachineConfig.MachineNetwork.ExtraHostEntries {
		j.Hosts[h.HostIP] = h.HostAliases
	}
	for host := range cfg.RegistryMirrorConfigs() {
		j.Mirrors = append(j.Mirrors, host)
	}
	j.TokenMatches = m.Security().Token() == bundle.TrustdInfo.Token && c.Token().ID()+"."+c.Token().Secret() == bundle.Secrets.BootstrapToken
	j.CAsMatch = string(m.Security().IssuingCA().Crt) == string(bundle.Certs.OS.Crt) && string(c.IssuingCA().Crt) == string(bundle.Certs.K8s.Crt)
	j.ClusterSecretsMatch = c.ID() == bundle.Cluster.ID && c.Secret() == bundle.Cluster.Secret
	return j
}

// TestJoinConfigIsAValidWorkerConfig renders Join pools as a Kamaji cluster
// publishes its facts, builds the config CABPT hands the worker and holds it
// to Talos' strict validation in the cloud mode an openstack VM runs in. The
// expectations re-express what cozystack's chart writes and tests
// (packages/apps/kubernetes-nodes/templates/_talosconfigtemplate.tpl@4206b9a;
// tests/talos_worker_time_sync_test.yaml@8617ce4, the bounded time sync;
// packages/apps/kubernetes/tests/talos_templates_test.yaml@69da032, the four
// talos-secrets keys the config binds: worker type, tokens, CAs, CoreDNS
// nameserver and search domains, API server host entry and endpoint, install
// disk, kubelet image of the mapped release files/versions.yaml@69da032).
func TestJoinConfigIsAValidWorkerConfig(t *testing.T) {
	schematic := defaults.TalosSchematicID
	cases := map[string]struct {
		reason string
		pool   worker
		want   func(j *joined)
	}{
		"Talos113Defaults": {
			reason: "The shipped defaults: Talos 1.13, Kubernetes v1.35 on its shipped release v1.35.6.",
			pool:   defaultWorker(t),
		},
		"Talos112WithMirrors": {
			reason: "The mirror documents of a 1.12 pool patch the Join base like the generated one.",
			pool: worker{Talos: "v1.12.4", Kubernetes: defaults.KubernetesVersion, Node: node1CPU4Gi(t, v1alpha1.PoolShape{}),
				Mirrors: map[string]v1alpha1.RegistryMirror{"docker.io": {Endpoints: []string{"https://mirror.internal"}}}},
			want: func(j *joined) { j.Mirrors = []string{"docker.io"} },
		},
		"Talos111OnKubernetes134": {
			reason: "An older pair: Talos 1.11, Kubernetes v1.34 on v1.34.9.",
			pool:   worker{Talos: "v1.11.5", Kubernetes: "v1.34", Node: node1CPU4Gi(t, v1alpha1.PoolShape{})},
			want:   func(j *joined) { j.Kubelet = "ghcr.io/siderolabs/kubelet:v1.34.9" },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			contract, err := config.ParseContractFromVersion(tc.pool.Talos)
			if err != nil {
				t.Fatal(err)
			}
			bundle, err := secrets.NewBundle(secrets.NewFixedClock(time.Now()), contract)
			if err != nil {
				t.Fatal(err)
			}
			sp := renderJoinWorker(t, tc.pool, joinFacts(bundle))
			cfg, err := joinConfig(sp)
			if err != nil {
				t.Fatalf("%s\nTalos could not load the rendered Join config: %v\ndata:\n%s", tc.reason, err, sp.Data)
			}
			if warnings, err := cfg.Validate(cloudMode, validation.WithStrict()); err != nil || len(warnings) > 0 {
				t.Errorf("%s\nstrict validation in %s mode failed: %v (warnings %q)", tc.reason, cloudMode, err, warnings)
			}
			want := joined{
				Type:        "worker",
				Installer:   "factory.talos.dev/openstack-installer/" + schematic + ":" + tc.pool.Talos,
				InstallDisk: "/dev/vda",
				Kubelet:     "ghcr.io/siderolabs/kubelet:v1.35.6",
				Endpoint:    "https://demo.tenant-demo.svc:6443",
				ClusterName: "demo",
				DNSDomain:   "cluster.local",
				Nameservers: []string{"10.96.0.10"},
				// cozy.local is not cluster.local, so the chart adds both.
				SearchDomains:  []string{"svc.cozy.local", "cozy.local", "svc.cluster.local", "cluster.local"},
				PodSubnets:     []string{"10.243.0.0/16"},
				ServiceSubnets: []string{"10.95.0.0/16"},
				Hosts:          map[string][]string{"10.96.12.34": {"demo.tenant-demo.svc", "demo.tenant-demo.svc.cluster.local"}},
				BootTimeout:    2 * time.Minute,
				// Discovery on, both registries off.
				DiscoveryEnabled: true,
				TokenMatches:     true, CAsMatch: true, ClusterSecretsMatch: true,
			}
			if tc.want != nil {
				tc.want(&want)
			}
			if diff := cmp.Diff(want, readJoined(cfg, bundle)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s\ndata:\n%s\npatches:\n%v", tc.reason, diff, sp.Data, sp.StrategicPatches)
			}
		})
	}
}
