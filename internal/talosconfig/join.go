package talosconfig

import (
	"fmt"
	"strconv"

	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/yamlenc"
)

// The Join mode's worker config: the complete v1alpha1 machine config a
// worker without a TalosControlPlane needs. CABPT takes it verbatim
// (generateType: none) and still applies StrategicPatches to it (CABPT
// v0.6.12 controllers/talosconfig_controller.go reconcileGenerate), so the
// patches of patches.go serve both modes and this is only their base.
//
// Content after cozystack's kubernetes-nodes chart
// (templates/_talosconfigtemplate.tpl@4206b9a, talos-reconcile-job.yaml
// @69da032, time.bootTimeout @8617ce4), minus the kubelet reservations,
// which are the node patch's. Fields mirror Talos v1.13.9
// pkg/machinery/config/types/v1alpha1/v1alpha1_types.go.

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

// MachineConfig is the part of Talos' v1alpha1 machine config Join sets.
type MachineConfig struct {
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

// JoinFacts are what only the control plane knows: the Talos and Kubernetes
// secrets and CAs, the API server's and the cluster DNS's addresses.
type JoinFacts struct {
	MachineToken, ClusterID, ClusterSecret, BootstrapToken string
	// TalosCA and KubernetesCA are base64 PEM, as Talos' ca.crt wants them.
	TalosCA, KubernetesCA string
	APIServerIP, DNSIP    string
}

// JoinCluster names the tenant cluster joined and its API server Service.
type JoinCluster struct {
	Namespace, Name, APIServer string
}

// JoinConfig builds the worker's base config from the facts. release is the
// Kubernetes release of the pool (its kubelet image).
func JoinConfig(r JoinCluster, c config.Join, f JoinFacts, release string) MachineConfig {
	service := r.APIServer + "." + r.Namespace + ".svc"
	search := []string{"svc." + c.ManagementClusterDomain, c.ManagementClusterDomain}
	if c.ManagementClusterDomain != "cluster.local" {
		// The chart adds the stock domain too, for names written for it.
		search = append(search, "svc.cluster.local", "cluster.local")
	}
	return MachineConfig{
		Version: "v1alpha1",
		Persist: true,
		Machine: talosMachine{
			Type:  "worker",
			Token: f.MachineToken,
			CA:    talosCert{Crt: f.TalosCA},
			Time:  talosTime{BootTimeout: joinBootTimeout},
			Network: talosNetwork{
				// The management DNS and its search domains, so short
				// management Service names (an NFS server's) resolve.
				Nameservers:   []string{f.DNSIP},
				SearchDomains: search,
				// The API server by name without the host resolver; the
				// second alias, with the tenant domain, is the chart's.
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
			ClusterName:  r.Name,
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

// PlaceholderFacts stand in for the facts when the base of a Join template
// is hashed: what the template says apart from the cluster's runtime facts.
func PlaceholderFacts() JoinFacts {
	return JoinFacts{
		MachineToken: "<machine-token>", ClusterID: "<cluster-id>", ClusterSecret: "<cluster-secret>",
		BootstrapToken: "<bootstrap-token>", TalosCA: "<talos-ca>", KubernetesCA: "<kubernetes-ca>",
		APIServerIP: "<apiserver-ip>", DNSIP: "<dns-ip>",
	}
}

// Encode is the document as CABPT's data: YAML, keys sorted.
func (m MachineConfig) Encode() (string, error) {
	b, err := yamlenc.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("cannot render the Talos worker config: %w", err)
	}
	return string(b), nil
}

// Facts are the join facts a config carries, as JoinConfig wrote them: how
// a running config is compared with the cluster's current facts.
func (m MachineConfig) Facts() JoinFacts {
	f := JoinFacts{
		MachineToken: m.Machine.Token, ClusterID: m.Cluster.ID, ClusterSecret: m.Cluster.Secret,
		BootstrapToken: m.Cluster.Token, TalosCA: m.Machine.CA.Crt, KubernetesCA: m.Cluster.CA.Crt,
	}
	if hosts := m.Machine.Network.ExtraHostEntries; len(hosts) > 0 {
		f.APIServerIP = hosts[0].IP
	}
	if ns := m.Machine.Network.Nameservers; len(ns) > 0 {
		f.DNSIP = ns[0]
	}
	return f
}
