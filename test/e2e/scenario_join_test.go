package e2e

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// joinFacts are what a Kamaji control plane publishes for a cluster's
// workers (docs/platform.md, "Talos bootstrap modes", the Join table), as
// the scenario published them.
type joinFacts struct {
	MachineToken, ClusterID, ClusterSecret, BootstrapToken string
	TalosCA, KubernetesCA                                  []byte
	APIServerIP, DNSIP                                     string
}

// randomToken is a token of the form <6>.<16> in [a-z0-9], the form of a
// Talos machine token and of a kubeadm bootstrap token (the function checks
// the latter, internal/nodepool/join.go bootstrapToken).
func randomToken(t *testing.T) string {
	t.Helper()
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 22)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:6]) + "." + string(b[6:])
}

// randomSecret is 32 random bytes in base64, the form of Talos' cluster id
// and cluster secret (secrets.Bundle).
func randomSecret(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// publishJoinFacts creates, as a Kamaji control plane and cozystack's
// kubernetes chart would, the join facts of cluster in ns under the Input's
// default names (internal/defaults/defaults.go Join*): the Secrets
// <cluster>-talos-secrets, <cluster>-talos-ca and <cluster>-ca, the API
// server's Service <cluster>, the KamajiControlPlane <cluster> at v1.35.0,
// and, unless it exists, the management cluster's Service kube-system/kube-dns.
// The API server allocates both ClusterIPs. The CAs are real certificates.
func publishJoinFacts(t *testing.T, ns, cluster string) joinFacts {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	talosCA, err := harness.NewCACertificate()
	if err != nil {
		t.Fatal(err)
	}
	kubeCA, err := harness.NewCACertificate()
	if err != nil {
		t.Fatal(err)
	}
	f := joinFacts{
		MachineToken: randomToken(t), ClusterID: randomSecret(t), ClusterSecret: randomSecret(t),
		BootstrapToken: randomToken(t), TalosCA: talosCA, KubernetesCA: kubeCA,
	}
	secrets := []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: cluster + "-talos-secrets", Namespace: ns}, Data: map[string][]byte{
			"token": []byte(f.MachineToken), "clusterId": []byte(f.ClusterID), "clusterSecret": []byte(f.ClusterSecret), "bootstrapToken": []byte(f.BootstrapToken),
		}},
		{ObjectMeta: metav1.ObjectMeta{Name: cluster + "-talos-ca", Namespace: ns}, Data: map[string][]byte{"tls.crt": talosCA}},
		{ObjectMeta: metav1.ObjectMeta{Name: cluster + "-ca", Namespace: ns}, Data: map[string][]byte{"ca.crt": kubeCA}},
	}
	for _, s := range secrets {
		if _, err := cp.Kube.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatalf("cannot publish Secret %s/%s: %v", ns, s.Name, err)
		}
	}
	service := func(namespace, name string, port int32) *corev1.Service {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{{
				Name: "p", Port: port, TargetPort: intstr.FromInt32(port),
			}}},
		}
	}
	api, err := cp.Kube.CoreV1().Services(ns).Create(ctx, service(ns, cluster, 6443), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("cannot publish Service %s/%s: %v", ns, cluster, err)
	}
	f.APIServerIP = api.Spec.ClusterIP
	dns, err := cp.Kube.CoreV1().Services("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		dns, err = cp.Kube.CoreV1().Services("kube-system").Create(ctx, service("kube-system", "kube-dns", 53), metav1.CreateOptions{})
		if err == nil {
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				_ = cp.Kube.CoreV1().Services("kube-system").Delete(ctx, "kube-dns", metav1.DeleteOptions{})
			})
		}
	}
	if err != nil {
		t.Fatalf("Service kube-system/kube-dns: %v", err)
	}
	f.DNSIP = dns.Spec.ClusterIP
	if f.APIServerIP == "" || f.DNSIP == "" {
		t.Fatalf("the API server allocated no ClusterIP: Service %s/%s %q, kube-system/kube-dns %q", ns, cluster, f.APIServerIP, f.DNSIP)
	}
	kcp := harness.MustObject(fmt.Sprintf(`
apiVersion: controlplane.cluster.x-k8s.io/v1alpha1
kind: KamajiControlPlane
metadata:
  name: %[2]s
  namespace: %[1]s
spec:
  version: v1.35.0
  replicas: 2
`, ns, cluster))
	cp.MustApply(t, kcp)
	deleteOnCleanup(t, kcp)
	return f
}

// mergeTalos merges a strategic patch into a Talos machine config document
// as Talos' configpatcher does for the v1alpha1 document (pkg/machinery/
// merge: maps merge key by key, lists are appended to, anything else is
// replaced). The scenario's patches set no list the base has.
func mergeTalos(base, patch map[string]any) {
	for k, pv := range patch {
		switch p := pv.(type) {
		case map[string]any:
			if b, ok := base[k].(map[string]any); ok {
				mergeTalos(b, p)
				continue
			}
		case []any:
			if b, ok := base[k].([]any); ok {
				base[k] = append(b, p...)
				continue
			}
		}
		base[k] = pv
	}
}

// missingIn lists, by path, every leaf of want that got does not hold
// with the same value.
func missingIn(want, got map[string]any, path string) []string {
	var out []string
	for k, wv := range want {
		p := path + "." + k
		gv, ok := got[k]
		if !ok {
			out = append(out, p+" absent")
			continue
		}
		if wm, ok := wv.(map[string]any); ok {
			if gm, ok := gv.(map[string]any); ok {
				out = append(out, missingIn(wm, gm, p)...)
				continue
			}
		}
		if !reflect.DeepEqual(wv, gv) {
			out = append(out, fmt.Sprintf("%s is %v, want %v", p, redact(gv), redact(wv)))
		}
	}
	sort.Strings(out)
	return out
}

// leaves counts the leaves of a document.
func leaves(m map[string]any) int {
	n := 0
	for _, v := range m {
		if sub, ok := v.(map[string]any); ok {
			n += leaves(sub)
		} else {
			n++
		}
	}
	return n
}

// redact keeps a value out of the test log if it could be a secret: only
// its length is shown for a long string.
func redact(v any) any {
	if s, ok := v.(string); ok && len(s) > 24 {
		return fmt.Sprintf("<%d characters>", len(s))
	}
	return v
}

// A Join pool on the real Cluster API and the real CABPT (issue 19: "a Join
// pool's bootstrap data is data plus the strategic patches, no control
// plane needed"). The cluster's control plane is Kamaji's, as in
// cozystack: it publishes the join facts and keeps no Talos secrets bundle
// for CABPT. The function builds the whole worker config into the
// TalosConfigTemplate (generateType: none, data) and the real CABPT v0.6.12
// takes it from there (controllers/talosconfig_controller.go):
//   - Reconcile waits for the Cluster's infrastructure (status.
//     infrastructureReady, CAPK's KubevirtCluster here) and nothing of the
//     control plane, then calls reconcileGenerate;
//   - reconcileGenerate, for generateType "none", requires data and calls
//     userConfigs: configloader.NewFromBytes(data), re-encoded without
//     comments; the Talos secrets bundle (getSecretsBundle, the
//     <cluster>-talos Secret a TalosControlPlane keeps) is read only by
//     genConfigs, the path of generateType worker/controlplane/init, and by
//     reconcileClientConfig, only for controlplane/init;
//   - then "Note this will patch both pre-generated and user-provided
//     configs": each strategicPatches entry through configpatcher.LoadPatch
//     and configpatcher.Apply onto that data, encoded again;
//   - so Secret <cluster>-talos, which getSecretsBundle (controllers/
//     secrets.go) writes on the generating path, is never written;
//   - writeBootstrapData writes it as key value of Secret
//     <machine>-bootstrap-data (controllers/secrets.go), controlled by the
//     TalosConfig, which the Machine's spec.bootstrap.dataSecretName names.
//
// The Cluster is cp.CreateCluster's (its controlPlaneRef a TalosControlPlane
// stand-in, status written once, whose secrets CABPT would need only for
// a Generate pool; none exists). The scenario asserts the pool settles on
// the real chain, that the template is generateType none with data, and that
// the bootstrap data CABPT wrote is data with the patches merged in: every
// leaf of both, and explicitly the worker type, the facts (machine token,
// both CAs, cluster id, secret and token, the API server's ClusterIP as a
// host entry, kube-dns as nameserver), the endpoint
// https://<cluster>.<ns>.svc:6443 (not the KubevirtCluster's), the installer
// image and the kubelet reservations of the patches.
func TestJoinPoolBootsOnRealCABPT(t *testing.T) {
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	const ns, cluster = "e2e-join", "join1"
	sid := schematicID("join-cabpt")
	inNamespace(t, ns)
	capiCluster(t, ns, cluster)
	facts := publishJoinFacts(t, ns, cluster)
	readyGolden(t, ns, sid)
	xr := sizedPool(ns, cluster, sid, 1, "20Gi")
	if err := unstructured.SetNestedField(xr.Object, "Join", "spec", "bootstrap", "mode"); err != nil {
		t.Fatal(err)
	}
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	md := cluster + "-" + poolName

	kmt := poolTemplate(t, reconcileTimeout, ns, xr.GetName())
	st := waitSettled(t, ns, md, kmt.GetName(), 1)
	t.Logf("settled: %s", st)
	cp.WaitCondition(t, reconcileTimeout, harness.NodePool, ns, xr.GetName(), "WorkerImageReady", "True")
	cp.WaitCondition(t, reconcileTimeout, harness.NodePool, ns, xr.GetName(), "JoinFactsCurrent", "True")

	// The template: the whole worker config in data, for CABPT to take.
	bootstrap := bootstrapTemplateOf(t, ns, md)
	tc := cp.MustGet(t, harness.TalosConfigTemplate, ns, bootstrap)
	spec, _, _ := unstructured.NestedMap(tc.Object, "spec", "template", "spec")
	generateType, _, _ := unstructured.NestedString(spec, "generateType")
	data, _, _ := unstructured.NestedString(spec, "data")
	patches, _, _ := unstructured.NestedStringSlice(spec, "strategicPatches")
	if generateType != "none" || data == "" || len(patches) == 0 {
		t.Fatalf("TalosConfigTemplate %s/%s: generateType %q, data of %d bytes, %d strategic patches; want none, a config, patches", ns, bootstrap, generateType, len(data), len(patches))
	}

	// What CABPT wrote for the Machine.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	machines, err := cp.List(ctx, harness.Machine, ns, harness.DeploymentNameLabel+"="+md)
	if err != nil || len(machines) != 1 {
		t.Fatalf("Machines of %s/%s: %d, %v", ns, md, len(machines), err)
	}
	m := machines[0]
	secretName, _, _ := unstructured.NestedString(m.Object, "spec", "bootstrap", "dataSecretName")
	if want := m.GetName() + "-bootstrap-data"; secretName != want {
		t.Errorf("Machine %s: bootstrap dataSecretName %q, want CABPT's %q", m.GetName(), secretName, want)
	}
	secret, err := cp.Kube.CoreV1().Secrets(ns).Get(ctx, secretName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("bootstrap data Secret of Machine %s: %v", m.GetName(), err)
	}
	talosConfig, _, _ := unstructured.NestedString(m.Object, "spec", "bootstrap", "configRef", "name")
	if !secretControlledBy(secret.OwnerReferences, "TalosConfig", talosConfig) {
		t.Errorf("bootstrap data Secret %s/%s is not controlled by the Machine's TalosConfig %q, as CABPT's is: owners %v", ns, secretName, talosConfig, secret.OwnerReferences)
	}
	var got map[string]any
	if err := yaml.Unmarshal(secret.Data["value"], &got); err != nil {
		t.Fatalf("bootstrap data of Machine %s is not YAML: %v", m.GetName(), err)
	}

	// data plus the patches, as configpatcher merges them.
	var want map[string]any
	if err := yaml.Unmarshal([]byte(data), &want); err != nil {
		t.Fatalf("TalosConfigTemplate %s data is not YAML: %v", bootstrap, err)
	}
	var installer string
	var sawReserved bool
	for i, p := range patches {
		var pm map[string]any
		if err := yaml.Unmarshal([]byte(p), &pm); err != nil {
			t.Fatalf("strategic patch %d of %s is not YAML: %v", i, bootstrap, err)
		}
		if img, ok, _ := unstructured.NestedString(pm, "machine", "install", "image"); ok {
			installer = img
		}
		if _, ok, _ := unstructured.NestedMap(pm, "machine", "kubelet", "extraConfig", "kubeReserved"); ok {
			sawReserved = true
		}
		mergeTalos(want, pm)
	}
	if installer == "" || !sawReserved {
		t.Fatalf("the patches of %s set installer %q and kubeReserved %v: both must be set", bootstrap, installer, sawReserved)
	}
	if miss := missingIn(want, got, ""); len(miss) > 0 {
		t.Errorf("the bootstrap data CABPT wrote for Machine %s is not the template's data plus its strategic patches:\n  %s", m.GetName(), strings.Join(miss, "\n  "))
	} else {
		t.Logf("the bootstrap data of Machine %s holds all %d leaves of data plus the %d strategic patches; it adds %v", m.GetName(), leaves(want), len(patches), missingIn(got, want, ""))
	}

	// And by name: the facts, the endpoint and the patches' settings.
	str := func(path ...string) string {
		s, _, _ := unstructured.NestedString(got, path...)
		return s
	}
	first := func(path ...string) any {
		l, _, _ := unstructured.NestedSlice(got, path...)
		if len(l) == 0 {
			return nil
		}
		return l[0]
	}
	b64 := base64.StdEncoding.EncodeToString
	svc := cluster + "." + ns + ".svc"
	checks := []struct {
		what      string
		got, want any
	}{
		{"machine.type", str("machine", "type"), "worker"},
		{"machine.token (token of Secret " + cluster + "-talos-secrets)", str("machine", "token") == facts.MachineToken, true},
		{"machine.ca.crt (tls.crt of Secret " + cluster + "-talos-ca)", str("machine", "ca", "crt") == b64(facts.TalosCA), true},
		{"machine.ca.key", str("machine", "ca", "key"), ""},
		{"cluster.ca.crt (ca.crt of Secret " + cluster + "-ca)", str("cluster", "ca", "crt") == b64(facts.KubernetesCA), true},
		{"cluster.id", str("cluster", "id") == facts.ClusterID, true},
		{"cluster.secret", str("cluster", "secret") == facts.ClusterSecret, true},
		{"cluster.token", str("cluster", "token") == facts.BootstrapToken, true},
		{"cluster.controlPlane.endpoint", str("cluster", "controlPlane", "endpoint"), "https://" + svc + ":6443"},
		{"cluster.clusterName", str("cluster", "clusterName"), cluster},
		{"machine.network.extraHostEntries[0]", first("machine", "network", "extraHostEntries"), map[string]any{"ip": facts.APIServerIP, "aliases": []any{svc, svc + ".cluster.local"}}},
		{"machine.network.nameservers[0]", first("machine", "network", "nameservers"), facts.DNSIP},
		{"machine.install.image", str("machine", "install", "image"), installer},
		{"machine.kubelet.extraConfig.kubeReserved set", func() bool {
			_, ok, _ := unstructured.NestedMap(got, "machine", "kubelet", "extraConfig", "kubeReserved")
			return ok
		}(), true},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("bootstrap data of Machine %s: %s is %v, want %v", m.GetName(), c.what, redact(c.got), redact(c.want))
		}
	}
	// CABPT never took the generating path: genConfigs reads the Talos
	// secrets bundle through getSecretsBundle, which writes Secret
	// <cluster>-talos when it is absent (controllers/secrets.go); the
	// Join path leaves it unwritten.
	if _, err := cp.Kube.CoreV1().Secrets(ns).Get(ctx, cluster+"-talos", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Secret %s/%s-talos (CABPT's generated secrets bundle) exists or cannot be read (%v): CABPT generated a config for a Join pool", ns, cluster, err)
	}
	nothingRefusedIn(t, ns)
}

// secretControlledBy reports whether refs name a controller of kind and name.
func secretControlledBy(refs []metav1.OwnerReference, kind, name string) bool {
	for _, r := range refs {
		if r.Kind == kind && r.Name == name && r.Controller != nil && *r.Controller {
			return true
		}
	}
	return false
}
