package read

import (
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net/netip"
	"regexp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/observed"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// The Join mode reads a cluster's join facts from the objects cozystack's
// kubernetes-nodes chart reads (templates/talos-reconcile-job.yaml@69da032:
// Secret <cluster>-talos-secrets keys token, clusterId, clusterSecret,
// bootstrapToken; <cluster>-talos-ca tls.crt; <cluster>-ca ca.crt; the
// ClusterIPs of Service <cluster> and kube-system/kube-dns) and guards the
// pool's minor against the KamajiControlPlane named like the cluster
// (_helpers.tpl:140-157@69da032, kubernetes-nodes.assertParentVersion).
//
// Secret values go into the TalosConfigTemplate, as in the chart, and
// nowhere else: messages name the Secret and key, never a value or an error
// text that could quote one.

// Requirement names of the Join mode.
const (
	ReqJoinTalosSecrets = "join-talos-secrets"
	ReqJoinTalosCA      = "join-talos-ca"
	ReqJoinKubernetesCA = "join-kubernetes-ca"
	ReqJoinAPIServer    = "join-apiserver-service"
	ReqJoinDNS          = "join-dns-service"
	ReqControlPlane     = "join-control-plane"
)

// Keys of the join Secrets.
const (
	keyMachineToken   = "token"
	keyClusterID      = "clusterId"
	keyClusterSecret  = "clusterSecret"
	keyBootstrapToken = "bootstrapToken"
	keyTalosCA        = "tls.crt"
	keyKubernetesCA   = "ca.crt"
)

// JoinRefs names the objects a Join pool reads.
type JoinRefs struct {
	Namespace                                         string
	TalosSecrets, TalosCA, KubernetesCA, APIServer    string
	DNSNamespace, DNSName                             string
	ControlPlaneAPIVersion, ControlPlaneKind, Cluster string
}

func JoinRefsOf(p pool.Pool, c config.Join) JoinRefs {
	return JoinRefs{
		Namespace:              p.Namespace,
		TalosSecrets:           p.Cluster + c.TalosSecretsSuffix,
		TalosCA:                p.Cluster + c.TalosCASuffix,
		KubernetesCA:           p.Cluster + c.KubernetesCASuffix,
		APIServer:              p.Cluster + c.APIServerServiceSuffix,
		DNSNamespace:           c.DNSServiceNamespace,
		DNSName:                c.DNSServiceName,
		ControlPlaneAPIVersion: c.ControlPlaneAPIVersion,
		ControlPlaneKind:       c.ControlPlaneKind,
		Cluster:                p.Cluster,
	}
}

// cluster is the tenant cluster the worker's config joins.
func (r JoinRefs) JoinCluster() talosconfig.JoinCluster {
	return talosconfig.JoinCluster{Namespace: r.Namespace, Name: r.Cluster, APIServer: r.APIServer}
}

const (
	kindSecret  = "Secret"
	kindService = "Service"
)

// joinFacts are a cluster's join facts as read, and what is wrong with them.
type joinFacts struct {
	talosconfig.JoinFacts

	// ControlPlaneVersion is the control plane's spec.version, if any.
	ControlPlaneVersion string
	ControlPlaneFound   bool

	// Missing and Invalid name each fact that is absent or unusable, by
	// object and key; sorted. They never hold a value.
	Missing, Invalid []string
}

// bootstrapToken is the token the kubelet's TLS bootstrap authenticates
// with (k8s.io/cluster-bootstrap token/api BootstrapTokenPattern).
var bootstrapToken = regexp.MustCompile(`^[a-z0-9]{6}\.[a-z0-9]{16}$`)

// The join rows (table.go) read the facts, each of its object, ignoring
// other namespaces and names (crossplane render ignores a requirement's
// namespace).

// secret is the Secret name of us, and how messages name it.
func (f *joinFacts) secret(us []*unstructured.Unstructured, namespace, name string) (*corev1.Secret, string) {
	ref := fmt.Sprintf("Secret %s/%s", namespace, name)
	u := pick(us, namespace, name)
	if u == nil {
		f.Missing = append(f.Missing, ref)
		return nil, ref
	}
	s := &corev1.Secret{}
	// The conversion error is not reported: it could quote a value.
	if err := observed.Into(u, observed.CoreAPIVersion, kindSecret, s); err != nil {
		f.Invalid = append(f.Invalid, ref+" (not a readable Secret)")
		return nil, ref
	}
	return s, ref
}

// value is a key of a Secret.
func (f *joinFacts) value(s *corev1.Secret, ref, key string) string {
	if s == nil {
		return ""
	}
	v, ok := s.Data[key]
	if !ok {
		if sv, ok := s.StringData[key]; ok {
			v = []byte(sv)
		}
	}
	if len(v) == 0 {
		f.Missing = append(f.Missing, fmt.Sprintf("key %s of %s", key, ref))
	}
	return string(v)
}

// cert is the PEM certificate under key of the Secret name of us, base64.
func (f *joinFacts) cert(us []*unstructured.Unstructured, namespace, name, key string) string {
	s, ref := f.secret(us, namespace, name)
	v := f.value(s, ref, key)
	if v == "" {
		return ""
	}
	if b, _ := pem.Decode([]byte(v)); b == nil || b.Type != "CERTIFICATE" {
		f.Invalid = append(f.Invalid, fmt.Sprintf("key %s of %s (not a PEM certificate)", key, ref))
		return ""
	}
	return base64.StdEncoding.EncodeToString([]byte(v))
}

// readTalosSecrets reads the machine token, the cluster's identity and the
// bootstrap token.
func (f *joinFacts) readTalosSecrets(r JoinRefs, us []*unstructured.Unstructured) {
	ts, tsRef := f.secret(us, r.Namespace, r.TalosSecrets)
	f.MachineToken = f.value(ts, tsRef, keyMachineToken)
	f.ClusterID = f.value(ts, tsRef, keyClusterID)
	f.ClusterSecret = f.value(ts, tsRef, keyClusterSecret)
	f.BootstrapToken = f.value(ts, tsRef, keyBootstrapToken)
	if f.BootstrapToken != "" && !bootstrapToken.MatchString(f.BootstrapToken) {
		f.Invalid = append(f.Invalid, fmt.Sprintf("key %s of %s (not a bootstrap token <6 characters>.<16 characters>)", keyBootstrapToken, tsRef))
		f.BootstrapToken = ""
	}
}

// readControlPlane reads the control plane's version.
func (f *joinFacts) readControlPlane(r JoinRefs, us []*unstructured.Unstructured) {
	if u := pick(us, r.Namespace, r.Cluster); u != nil && u.GetKind() == r.ControlPlaneKind {
		f.ControlPlaneFound = true
		f.ControlPlaneVersion, _, _ = unstructured.NestedString(u.Object, "spec", "version")
	}
}

// sort puts what is missing and invalid in order.
func (f *joinFacts) sort() {
	slices.Sort(f.Missing)
	slices.Sort(f.Invalid)
}

// serviceIP is a Service's ClusterIP; a headless Service or one without an
// address is invalid (a worker cannot reach it).
func (f *joinFacts) serviceIP(us []*unstructured.Unstructured, namespace, name string) string {
	ref := fmt.Sprintf("Service %s/%s", namespace, name)
	u := pick(us, namespace, name)
	if u == nil {
		f.Missing = append(f.Missing, ref)
		return ""
	}
	svc := &corev1.Service{}
	if err := observed.Into(u, observed.CoreAPIVersion, kindService, svc); err != nil {
		f.Invalid = append(f.Invalid, ref+" (not a readable Service)")
		return ""
	}
	ip, err := netip.ParseAddr(svc.Spec.ClusterIP)
	if err != nil {
		if svc.Spec.ClusterIP == "" {
			f.Missing = append(f.Missing, "spec.clusterIP of "+ref)
		} else {
			f.Invalid = append(f.Invalid, fmt.Sprintf("spec.clusterIP %q of %s (not an address)", svc.Spec.ClusterIP, ref))
		}
		return ""
	}
	return ip.String()
}

func pick(us []*unstructured.Unstructured, namespace, name string) *unstructured.Unstructured {
	for _, u := range us {
		if Is(u, namespace, name) {
			return u
		}
	}
	return nil
}

// ChangedFacts names the facts in which two configs differ, never a value.
func ChangedFacts(r JoinRefs, was, is talosconfig.JoinFacts) []string {
	var out []string
	add := func(differs bool, what string) {
		if differs {
			out = append(out, what)
		}
	}
	ts := fmt.Sprintf("Secret %s/%s", r.Namespace, r.TalosSecrets)
	add(was.MachineToken != is.MachineToken, "key "+keyMachineToken+" of "+ts)
	add(was.ClusterID != is.ClusterID, "key "+keyClusterID+" of "+ts)
	add(was.ClusterSecret != is.ClusterSecret, "key "+keyClusterSecret+" of "+ts)
	add(was.BootstrapToken != is.BootstrapToken, "key "+keyBootstrapToken+" of "+ts)
	add(was.TalosCA != is.TalosCA, fmt.Sprintf("key %s of Secret %s/%s", keyTalosCA, r.Namespace, r.TalosCA))
	add(was.KubernetesCA != is.KubernetesCA, fmt.Sprintf("key %s of Secret %s/%s", keyKubernetesCA, r.Namespace, r.KubernetesCA))
	add(was.APIServerIP != is.APIServerIP, fmt.Sprintf("spec.clusterIP of Service %s/%s", r.Namespace, r.APIServer))
	add(was.DNSIP != is.DNSIP, fmt.Sprintf("spec.clusterIP of Service %s/%s", r.DNSNamespace, r.DNSName))
	return out
}

// JoinPlan is what the Join mode read and decided.
type JoinPlan struct {
	Refs     JoinRefs
	Config   config.Join
	Facts    joinFacts
	Revision int64
	// Pinned is the running TalosConfigTemplate the deployment stays on
	// while only the facts changed; empty otherwise.
	Pinned string
	// Changed names the facts that changed since the pinned template.
	Changed []string
}
