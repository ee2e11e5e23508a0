package talos

import (
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/crossplane/function-sdk-go/resource/composite"
	"github.com/google/go-cmp/cmp"
	"github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/configpatcher"
	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
	"github.com/siderolabs/talos/pkg/machinery/config/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/compose/composetest"
	fnconfig "github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/defaults"
	"github.com/cozystack/function-worker-image/internal/nodepool"
	"github.com/cozystack/function-worker-image/internal/required"
)

// joinFacts are the objects cozystack's kubernetes chart and Kamaji publish
// for cluster demo in namespace tenant-demo, with real Talos secrets and CAs
// from Talos' own secrets bundle, under the requirement names the node pool
// asks for them by.
func joinFacts(t *testing.T, bundle *secrets.Bundle) required.Resolved {
	t.Helper()
	obj := func(kind, namespace, name string, body map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kind, "metadata": map[string]any{"name": name, "namespace": namespace}}}
		for k, v := range body {
			u.Object[k] = v
		}
		return u
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	secret := func(name string, data map[string]string) *unstructured.Unstructured {
		d := map[string]any{}
		for k, v := range data {
			d[k] = b64(v)
		}
		return obj("Secret", "tenant-demo", name, map[string]any{"data": d})
	}
	service := func(namespace, name, ip string) *unstructured.Unstructured {
		return obj("Service", namespace, name, map[string]any{"spec": map[string]any{"clusterIP": ip}})
	}
	return required.Resolved{
		"join-talos-secrets": {secret("demo-talos-secrets", map[string]string{
			"token": bundle.TrustdInfo.Token, "clusterId": bundle.Cluster.ID, "clusterSecret": bundle.Cluster.Secret,
			"bootstrapToken": bundle.Secrets.BootstrapToken,
		})},
		"join-talos-ca":          {secret("demo-talos-ca", map[string]string{"tls.crt": string(bundle.Certs.OS.Crt)})},
		"join-kubernetes-ca":     {secret("demo-ca", map[string]string{"ca.crt": string(bundle.Certs.K8s.Crt)})},
		"join-apiserver-service": {service("tenant-demo", "demo", "10.96.12.34")},
		"join-dns-service":       {service("kube-system", "kube-dns", "10.96.0.10")},
		// The pool's default instance type, which its kubelet reservations
		// are computed from.
		"instancetype": {u1Medium()},
	}
}

// renderJoinPool runs the node pool mode on a Join pool with the facts and
// returns its TalosConfigTemplate spec.
func renderJoinPool(t *testing.T, spec map[string]any, facts required.Resolved) map[string]any {
	t.Helper()
	cfg, err := fnconfig.FromInput(&v1beta1.Input{}, time.Minute)
	if err != nil {
		t.Fatalf("config.FromInput: %v", err)
	}
	xr := composite.New()
	xr.SetAPIVersion("workerimage.cozystack.io/v1alpha1")
	xr.SetKind("XNodePool")
	xr.SetName("demo-md0")
	xr.SetNamespace("tenant-demo")
	s := map[string]any{"clusterName": "demo", "bootstrap": map[string]any{"mode": "Join"}}
	for k, v := range spec {
		s[k] = v
	}
	xr.Object["spec"] = s
	out := composetest.Run(nodepool.Mode{}, composetest.Request{Request: compose.Request{Config: cfg, Composite: xr}, Required: facts}).Output
	if out.Fatal != nil {
		t.Fatalf("the node pool mode refused the pool: %v", out.Fatal)
	}
	for _, dc := range out.Resources {
		if dc.Resource.GetKind() == nodepool.KindTalosConfigTemplate {
			return dig(t, dc.Resource.Object, "spec", "template", "spec")
		}
	}
	t.Fatalf("the node pool mode composed no TalosConfigTemplate: %v", out.Conditions)
	return nil
}

// joinConfig does what CABPT does for generateType: none (v0.6.12
// controllers/talosconfig_controller.go, userConfigs and reconcileGenerate):
// load data as it is, then apply every strategic patch in order.
func joinConfig(sp map[string]any) (config.Provider, error) {
	data, _ := sp["data"].(string)
	patches := []configpatcher.Patch{}
	raw, _ := sp["strategicPatches"].([]any)
	for i, p := range raw {
		patch, err := configpatcher.LoadPatch([]byte(p.(string)))
		if err != nil {
			return nil, fmt.Errorf("strategicPatches[%d]: %w", i, err)
		}
		patches = append(patches, patch)
	}
	out, err := configpatcher.Apply(configpatcher.WithBytes([]byte(data)), patches)
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
		spec   map[string]any
		talos  string
		want   func(j *joined)
	}{
		"Talos113Defaults": {
			reason: "The shipped defaults: Talos 1.13, Kubernetes v1.35 on its shipped release v1.35.6.",
			talos:  defaults.TalosVersion,
		},
		"Talos112WithMirrors": {
			reason: "The mirror documents of a 1.12 pool patch the Join base like the generated one.",
			spec: map[string]any{"talos": map[string]any{"version": "v1.12.4", "registryMirrors": map[string]any{
				"docker.io": map[string]any{"endpoints": []any{"https://mirror.internal"}},
			}}},
			talos: "v1.12.4",
			want:  func(j *joined) { j.Mirrors = []string{"docker.io"} },
		},
		"Talos111OnKubernetes134": {
			reason: "An older pair: Talos 1.11, Kubernetes v1.34 on v1.34.9.",
			spec:   map[string]any{"version": "v1.34", "talos": map[string]any{"version": "v1.11.5"}},
			talos:  "v1.11.5",
			want:   func(j *joined) { j.Kubelet = "ghcr.io/siderolabs/kubelet:v1.34.9" },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			contract, err := config.ParseContractFromVersion(tc.talos)
			if err != nil {
				t.Fatal(err)
			}
			bundle, err := secrets.NewBundle(secrets.NewFixedClock(time.Now()), contract)
			if err != nil {
				t.Fatal(err)
			}
			sp := renderJoinPool(t, tc.spec, joinFacts(t, bundle))
			if got := sp["generateType"]; got != "none" {
				t.Fatalf("generateType is %v, want none", got)
			}
			cfg, err := joinConfig(sp)
			if err != nil {
				t.Fatalf("%s\nTalos could not load the rendered Join config: %v\ndata:\n%s", tc.reason, err, sp["data"])
			}
			if warnings, err := cfg.Validate(cloudMode, validation.WithStrict()); err != nil || len(warnings) > 0 {
				t.Errorf("%s\nstrict validation in %s mode failed: %v (warnings %q)", tc.reason, cloudMode, err, warnings)
			}
			want := joined{
				Type:        "worker",
				Installer:   "factory.talos.dev/openstack-installer/" + schematic + ":" + tc.talos,
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
				t.Errorf("%s\n-want, +got:\n%s\ndata:\n%s\npatches:\n%v", tc.reason, diff, sp["data"], sp["strategicPatches"])
			}
		})
	}
}
