package nodepool

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/yamlenc"
)

// The Join mode's worker config: the complete Talos v1alpha1 machine config
// document a worker of a cluster without a TalosControlPlane needs, which
// CABPT takes verbatim (generateType: none) and then patches with the same
// strategicPatches as a Generate pool (CABPT v0.6.12
// controllers/talosconfig_controller.go reconcileGenerate applies
// strategicPatches to user-supplied data too). So every machine patch a pool
// carries — the installer image, the registry mirrors, and any later patch
// of talosconfig.go — applies to both modes unchanged: this document is only
// the base the patches merge into.
//
// Its content follows cozystack's kubernetes-nodes chart
// (templates/_talosconfigtemplate.tpl@4206b9a, talos-reconcile-job.yaml
// @69da032, time.bootTimeout from @8617ce4) without the kubelet reservation
// and eviction settings, which are the kubelet patches' to add. The fields
// mirror Talos' v1alpha1 types (pkg/machinery/config/types/v1alpha1/
// v1alpha1_types.go, v1.13.9); test/talos validates every rendered document
// strictly with that machinery.

// Fixed values of the Join config, the chart's.
const (
	// joinInstallDisk is the VM's virtio system disk.
	joinInstallDisk = "/dev/vda"
	// joinBootTimeout bounds the wait for time sync: without machine.time
	// Talos waits forever and a worker that reaches no NTP server never
	// starts its kubelet (cozystack@8617ce4).
	joinBootTimeout = "2m0s"
	// joinAPIServerPort is the port of Kamaji's API server Service.
	joinAPIServerPort = 6443
	// kubeletRepository is Talos' kubelet image.
	kubeletRepository = "ghcr.io/siderolabs/kubelet"
)

type talosMachineConfig struct {
	Version string       `json:"version"`
	Persist bool         `json:"persist"`
	Machine talosMachine `json:"machine"`
	Cluster talosCluster `json:"cluster"`
}

type talosMachine struct {
	Type     string        `json:"type"`
	Token    string        `json:"token"`
	CA       talosCert     `json:"ca"`
	Time     talosTime     `json:"time"`
	Network  talosNetwork  `json:"network"`
	Kubelet  talosKubelet  `json:"kubelet"`
	Install  talosInstall  `json:"install"`
	Features talosFeatures `json:"features"`
}

type talosCert struct {
	Crt string `json:"crt"`
}

type talosTime struct {
	BootTimeout string `json:"bootTimeout"`
}

type talosNetwork struct {
	Nameservers      []string         `json:"nameservers"`
	SearchDomains    []string         `json:"searchDomains"`
	ExtraHostEntries []talosHostEntry `json:"extraHostEntries"`
}

type talosHostEntry struct {
	IP      string   `json:"ip"`
	Aliases []string `json:"aliases"`
}

type talosKubelet struct {
	Image string `json:"image"`
}

type talosInstall struct {
	Disk string `json:"disk"`
	// Wipe is written false on purpose, as the chart does.
	Wipe bool `json:"wipe"`
}

type talosFeatures struct {
	RBAC      bool           `json:"rbac"`
	KubePrism talosKubePrism `json:"kubePrism"`
}

type talosKubePrism struct {
	Enabled bool `json:"enabled"`
}

type talosCluster struct {
	ID           string                `json:"id"`
	Secret       string                `json:"secret"`
	ControlPlane talosControlPlane     `json:"controlPlane"`
	ClusterName  string                `json:"clusterName"`
	Network      talosClusterNetwork   `json:"network"`
	Token        string                `json:"token"`
	CA           talosCert             `json:"ca"`
	Discovery    talosClusterDiscovery `json:"discovery"`
}

type talosControlPlane struct {
	Endpoint string `json:"endpoint"`
}

type talosClusterNetwork struct {
	DNSDomain      string   `json:"dnsDomain"`
	PodSubnets     []string `json:"podSubnets"`
	ServiceSubnets []string `json:"serviceSubnets"`
}

type talosClusterDiscovery struct {
	Enabled    bool                     `json:"enabled"`
	Registries talosDiscoveryRegistries `json:"registries"`
}

type talosDiscoveryRegistries struct {
	Kubernetes talosRegistry `json:"kubernetes"`
	Service    talosRegistry `json:"service"`
}

type talosRegistry struct {
	Disabled bool `json:"disabled"`
}

// joinConfig builds the worker's base config from the facts. release is the
// Kubernetes release of the pool (its kubelet image).
func joinConfig(r joinRefs, c config.Join, f joinFacts, release string) talosMachineConfig {
	service := r.APIServer + "." + r.Namespace + ".svc"
	search := []string{"svc." + c.ManagementClusterDomain, c.ManagementClusterDomain}
	if c.ManagementClusterDomain != "cluster.local" {
		// The chart adds the stock domain too, for names written for it.
		search = append(search, "svc.cluster.local", "cluster.local")
	}
	return talosMachineConfig{
		Version: "v1alpha1",
		Persist: true,
		Machine: talosMachine{
			Type:  "worker",
			Token: f.MachineToken,
			CA:    talosCert{Crt: f.TalosCA},
			Time:  talosTime{BootTimeout: joinBootTimeout},
			Network: talosNetwork{
				// The management cluster's DNS as the host resolver, with
				// its search domains, so that short management Service
				// names (an NFS server's) resolve on the host.
				Nameservers:   []string{f.DNSIP},
				SearchDomains: search,
				// The API server Service by name, without depending on the
				// host resolver; the second alias is the chart's, which
				// appends the tenant cluster's domain.
				ExtraHostEntries: []talosHostEntry{{IP: f.APIServerIP, Aliases: []string{service, service + "." + c.ClusterDomain}}},
			},
			Kubelet:  talosKubelet{Image: kubeletRepository + ":" + release},
			Install:  talosInstall{Disk: joinInstallDisk},
			Features: talosFeatures{RBAC: true, KubePrism: talosKubePrism{Enabled: false}},
		},
		Cluster: talosCluster{
			ID:           f.ClusterID,
			Secret:       f.ClusterSecret,
			ControlPlane: talosControlPlane{Endpoint: "https://" + service + ":" + strconv.Itoa(joinAPIServerPort)},
			ClusterName:  r.Cluster,
			Network: talosClusterNetwork{
				DNSDomain:      c.ClusterDomain,
				PodSubnets:     []string{c.PodSubnet},
				ServiceSubnets: []string{c.ServiceSubnet},
			},
			Token: f.BootstrapToken,
			CA:    talosCert{Crt: f.KubernetesCA},
			// Discovery stays on with both registries off, as in the chart:
			// a Kamaji cluster has no Talos control plane to discover.
			Discovery: talosClusterDiscovery{Enabled: true, Registries: talosDiscoveryRegistries{
				Kubernetes: talosRegistry{Disabled: true}, Service: talosRegistry{Disabled: true},
			}},
		},
	}
}

// placeholderFacts stand in for the facts when the base of a Join template
// is hashed: what the template says apart from the cluster's runtime facts.
func placeholderFacts() joinFacts {
	return joinFacts{
		MachineToken: "<machine-token>", ClusterID: "<cluster-id>", ClusterSecret: "<cluster-secret>",
		BootstrapToken: "<bootstrap-token>", TalosCA: "<talos-ca>", KubernetesCA: "<kubernetes-ca>",
		APIServerIP: "<apiserver-ip>", DNSIP: "<dns-ip>",
	}
}

// encodeJoinConfig is the document as CABPT's data: YAML, keys sorted.
func encodeJoinConfig(m talosMachineConfig) (string, error) {
	b, err := yamlenc.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("cannot render the Talos worker config: %w", err)
	}
	return string(b), nil
}

// joinBase is the hash of a Join template apart from the facts: its spec
// with every fact replaced by a placeholder, and the pool's factsRevision.
// Two templates of a pool with the same base differ in facts alone, which
// never rolls the workers by itself (see pinFacts).
func joinBase(spec TalosConfigSpec, revision int64) (string, error) {
	m, err := compose.Canonical(struct {
		Spec     TalosConfigSpec `json:"spec"`
		Revision int64           `json:"revision"`
	}{spec, revision}, compose.DropEmpty())
	if err != nil {
		return "", fmt.Errorf("cannot hash the Talos worker config: %w", err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("cannot hash the Talos worker config: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:hashLength], nil
}

// changedFacts names the facts in which two configs differ, never a value.
func changedFacts(r joinRefs, was, is talosMachineConfig) []string {
	var out []string
	add := func(differs bool, what string) {
		if differs {
			out = append(out, what)
		}
	}
	ts := fmt.Sprintf("Secret %s/%s", r.Namespace, r.TalosSecrets)
	add(was.Machine.Token != is.Machine.Token, "key "+keyMachineToken+" of "+ts)
	add(was.Cluster.ID != is.Cluster.ID, "key "+keyClusterID+" of "+ts)
	add(was.Cluster.Secret != is.Cluster.Secret, "key "+keyClusterSecret+" of "+ts)
	add(was.Cluster.Token != is.Cluster.Token, "key "+keyBootstrapToken+" of "+ts)
	add(was.Machine.CA.Crt != is.Machine.CA.Crt, fmt.Sprintf("key %s of Secret %s/%s", keyTalosCA, r.Namespace, r.TalosCA))
	add(was.Cluster.CA.Crt != is.Cluster.CA.Crt, fmt.Sprintf("key %s of Secret %s/%s", keyKubernetesCA, r.Namespace, r.KubernetesCA))
	add(hostIP(was) != hostIP(is), fmt.Sprintf("spec.clusterIP of Service %s/%s", r.Namespace, r.APIServer))
	add(nameserver(was) != nameserver(is), fmt.Sprintf("spec.clusterIP of Service %s/%s", r.DNSNamespace, r.DNSName))
	return out
}

func hostIP(m talosMachineConfig) string {
	if len(m.Machine.Network.ExtraHostEntries) == 0 {
		return ""
	}
	return m.Machine.Network.ExtraHostEntries[0].IP
}

func nameserver(m talosMachineConfig) string {
	if len(m.Machine.Network.Nameservers) == 0 {
		return ""
	}
	return m.Machine.Network.Nameservers[0]
}
