package harness

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The Cluster API core manager (sigs.k8s.io/cluster-api v1.11.4, the module
// root's main.go) runs out of cluster against the suite's kube-apiserver:
// its MachineDeployment, MachineSet, Machine, MachineHealthCheck and Cluster
// controllers, its defaulting and validating webhooks and its CRD
// conversion webhook, all served on 127.0.0.1 with a serving certificate
// from a CA of its own (in a cluster cert-manager issues it and injects the
// CA, config/default/kustomization.yaml). One cluster is both management
// and workload cluster: a Cluster's <name>-kubeconfig Secret points at the
// suite's own API server, where the kubelet stand-in registers the Nodes.

// Kinds of Cluster API the harness writes in the version the manager
// speaks (v1beta2, the storage version of v1.11), and of the providers it
// stands in for.
var (
	Cluster            = gvk("cluster.x-k8s.io", "v1beta2", "Cluster")
	Machine            = gvk("cluster.x-k8s.io", "v1beta1", "Machine")
	KubevirtMachine    = gvk("infrastructure.cluster.x-k8s.io", "v1alpha1", "KubevirtMachine")
	TalosConfig        = gvk("bootstrap.cluster.x-k8s.io", "v1alpha3", "TalosConfig")
	TalosControlPlane  = gvk("controlplane.cluster.x-k8s.io", "v1alpha3", "TalosControlPlane")
	Node               = gvk("", "v1", "Node")
	Secret             = gvk("", "v1", "Secret")
	capiConvertedGroup = map[string]bool{"cluster.x-k8s.io": true, "addons.cluster.x-k8s.io": true, "ipam.cluster.x-k8s.io": true, "runtime.cluster.x-k8s.io": true}
)

// Labels of Cluster API (api/core/v1beta2/common_types.go).
const (
	ClusterNameLabel    = "cluster.x-k8s.io/cluster-name"
	DeploymentNameLabel = "cluster.x-k8s.io/deployment-name"
	MachineSetNameLabel = "cluster.x-k8s.io/set-name"
)

// contractLabels are the Cluster API contract labels of the provider CRDs
// the suite installs: Cluster API v1.11 resolves the version of a
// provider's kind from the label cluster.x-k8s.io/<contract> of its CRD
// (internal/contract/version.go, GetAPIVersion), and refuses a kind
// without one. The providers' kustomizations add them as commonLabels:
// CAPK v0.11.2 and CABPT v0.6.12 config/crd/kustomization.yaml
// (cluster.x-k8s.io/v1beta1: v1alpha1 and v1alpha3); the Talos control
// plane provider labels its CRD likewise.
var contractLabels = map[string]string{
	"infrastructure.cluster.x-k8s.io": "v1alpha1",
	"bootstrap.cluster.x-k8s.io":      "v1alpha3",
	"controlplane.cluster.x-k8s.io":   "v1alpha3",
}

// LabelProviderContracts adds the Cluster API contract label to every
// provider CRD among objs, as the providers' kustomizations do.
func LabelProviderContracts(objs []*unstructured.Unstructured) {
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		g, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		v, ok := contractLabels[g]
		if !ok {
			continue
		}
		l := o.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l["cluster.x-k8s.io/v1beta1"] = v
		o.SetLabels(l)
	}
}

// CAPI is the Cluster API core manager of the run.
type CAPI struct {
	cp *ControlPlane
	// WebhookURL is https://127.0.0.1:<port> of the manager's webhook
	// server (admission and CRD conversion).
	WebhookURL string
	// CABundle is the PEM of the CA of the manager's serving certificate.
	CABundle []byte
	// Process is the running manager.
	Process *Process

	dir, certDir string
	webhookPort  int
	standIns     *providerStandIns
}

// NewCAPI allocates the manager's webhook port and issues its serving
// certificate (IP SAN 127.0.0.1, tls.crt/tls.key, the names main.go's
// --webhook-cert-name and --webhook-key-name default to). Nothing runs
// yet: the CRDs must name the conversion webhook's URL before they are
// installed.
func NewCAPI(cp *ControlPlane) (*CAPI, error) {
	if cp.Bin.CAPIManager == "" {
		return nil, errors.New("no Cluster API manager binary: test/e2e/hack/build-binaries.sh printed no capi-manager path")
	}
	ports, err := FreeLoopbackPorts(1)
	if err != nil {
		return nil, err
	}
	c := &CAPI{cp: cp, dir: filepath.Join(cp.WorkDir, "capi"), webhookPort: ports[0]}
	c.certDir = filepath.Join(c.dir, "serving-certs")
	c.WebhookURL = "https://127.0.0.1:" + strconv.Itoa(c.webhookPort)
	if err := os.MkdirAll(c.certDir, 0o700); err != nil {
		return nil, err
	}
	ca, caPEM, err := newCA()
	if err != nil {
		return nil, err
	}
	c.CABundle = caPEM
	if err := ca.issueTo(filepath.Join(c.certDir, "tls.crt"), filepath.Join(c.certDir, "tls.key"), "capi-webhook-service", []string{"localhost", "capi-webhook-service.capi-system.svc"}, []net.IP{net.ParseIP("127.0.0.1")}, x509.ExtKeyUsageServerAuth); err != nil {
		return nil, err
	}
	return c, nil
}

// ConvertByWebhook sets, in place, the conversion of every multi-version
// CRD of Cluster API's groups among objs to the manager's /convert
// endpoint, trusting its CA: what config/crd/patches/webhook_in_*.yaml
// (strategy Webhook, conversionReviewVersions [v1, v1beta1], service path
// /convert) and cert-manager's CA injection do in a cluster, with a url
// instead of the Service. The storage version stays upstream's (v1beta2):
// the function writes v1beta1 and the manager reads v1beta2, so every
// object crosses the real conversion.
func (c *CAPI) ConvertByWebhook(objs []*unstructured.Unstructured) int {
	n := 0
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		g, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		versions, _, _ := unstructured.NestedSlice(o.Object, "spec", "versions")
		if !capiConvertedGroup[g] || len(versions) < 2 {
			continue
		}
		_ = unstructured.SetNestedField(o.Object, map[string]any{
			"strategy": "Webhook",
			"webhook": map[string]any{
				"conversionReviewVersions": []any{"v1", "v1beta1"},
				"clientConfig": map[string]any{
					"url":      c.WebhookURL + "/convert",
					"caBundle": base64.StdEncoding.EncodeToString(c.CABundle),
				},
			},
		}, "spec", "conversion")
		n++
	}
	return n
}

// CAPIWebhookConfigurations reads the manager's webhook configurations from
// config/webhook/manifests.yaml of the module, named as config/default's
// namePrefix (capi-) names them.
func CAPIWebhookConfigurations(ctx context.Context) ([]*unstructured.Unstructured, error) {
	dir, err := ModuleDir(ctx, CAPIModule, CAPIVersion)
	if err != nil {
		return nil, err
	}
	objs, err := ReadYAMLFiles(filepath.Join(dir, "config", "webhook", "manifests.yaml"))
	if err != nil {
		return nil, err
	}
	if len(objs) != 2 {
		return nil, fmt.Errorf("%s@%s/config/webhook/manifests.yaml holds %d objects, want a Mutating and a Validating WebhookConfiguration; re-check it", CAPIModule, CAPIVersion, len(objs))
	}
	for _, o := range objs {
		o.SetName("capi-" + o.GetName())
	}
	return objs, nil
}

// Start starts the manager and, once it is ready, registers its webhooks
// and proves them (WaitWebhooks), then starts the provider stand-ins.
//
// Flags (main.go and util/flags/manager.go at v1.11.4): leader election is
// off by default (--leader-elect); --diagnostics-address=0 switches the
// metrics server off (controller-runtime's "0"); --health-addr binds the
// probes to loopback; --webhook-port and --webhook-cert-dir serve the
// webhooks with the run's certificate (the build patches the host to
// 127.0.0.1, hack/build-binaries.sh); no --namespace or --watch-filter, so
// it watches every namespace, as a cluster's manager does. Feature gates
// stay upstream's defaults. The kubeconfig is the suite's admin one
// (controller-runtime reads $KUBECONFIG).
func (c *CAPI) Start(ctx context.Context) error {
	ports, err := FreeLoopbackPorts(1)
	if err != nil {
		return err
	}
	health := "127.0.0.1:" + strconv.Itoa(ports[0])
	p, err := StartProcess(c.cp.LogDir, "capi-manager", c.cp.Bin.CAPIManager, []string{
		"--leader-elect=false",
		"--diagnostics-address=0",
		"--health-addr=" + health,
		"--webhook-port=" + strconv.Itoa(c.webhookPort),
		"--webhook-cert-dir=" + c.certDir,
	}, []string{"KUBECONFIG=" + c.cp.Kubeconfig})
	if err != nil {
		return err
	}
	c.Process = p
	c.cp.adopt(p)
	// /readyz includes the webhook server's StartedChecker (main.go
	// setupChecks), so it answers once the server accepts TLS.
	if err := c.cp.waitHTTP(ctx, p, "http://"+health+"/readyz", nil, 120*time.Second); err != nil {
		return err
	}
	hooks, err := CAPIWebhookConfigurations(ctx)
	if err != nil {
		return err
	}
	if err := URLClientConfigs(hooks, c.WebhookURL, c.CABundle); err != nil {
		return err
	}
	if err := c.cp.Apply(ctx, hooks...); err != nil {
		return err
	}
	if err := c.WaitWebhooks(ctx, 60*time.Second); err != nil {
		return err
	}
	c.standIns, err = startProviderStandIns(c.cp)
	if err != nil {
		return err
	}
	c.cp.capi = c
	return nil
}

// CAPIValidationWebhook is the manager's validating webhook of
// MachineDeployments (config/webhook/manifests.yaml).
const CAPIValidationWebhook = "validation.machinedeployment.cluster.x-k8s.io"

// WaitWebhooks proves the manager's webhooks before any scenario: a
// dry-run create of a v1beta1 MachineDeployment whose selector does not
// match its template's labels must be refused by
// validation.machinedeployment.cluster.x-k8s.io
// (internal/webhooks/machinedeployment.go, validate: "selector does not
// match template labels"). The refusal needs the conversion webhook too:
// the admission webhooks are registered for v1beta2, so the kube-apiserver
// converts the v1beta1 request through /convert before it calls them.
func (c *CAPI) WaitWebhooks(ctx context.Context, timeout time.Duration) error {
	md := MustObject(`
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata:
  name: e2e-webhook-probe
  namespace: default
spec:
  clusterName: e2e-webhook-probe
  selector:
    matchLabels:
      probe: a
  template:
    metadata:
      labels:
        probe: b
    spec:
      clusterName: e2e-webhook-probe
      bootstrap:
        dataSecretName: none
      infrastructureRef:
        apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
        kind: KubevirtMachineTemplate
        name: none
`)
	ri, err := c.cp.Resource(MachineDeployment, "default")
	if err != nil {
		return err
	}
	what := fmt.Sprintf("refusal by webhook %s (at %s) of a dry-run create of a MachineDeployment whose selector does not match its template", CAPIValidationWebhook, c.WebhookURL)
	return poll(ctx, c.Process, timeout, what, func(ctx context.Context) error {
		_, err := ri.Create(ctx, md, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		switch {
		case err == nil:
			return errors.New("dry-run create allowed")
		case strings.Contains(err.Error(), fmt.Sprintf("admission webhook %q denied the request", CAPIValidationWebhook)):
			return nil
		default:
			return err
		}
	})
}

// stop stops the provider stand-ins (the manager itself is stopped with
// the control plane's processes).
func (c *CAPI) stop() {
	if c.standIns != nil {
		c.standIns.stop()
		c.standIns = nil
	}
}

// CreateCluster creates, in ns, what a tenant's Cluster is made of for the
// Cluster API controllers the suite runs: a TalosControlPlane, initialized
// and ready at Kubernetes v1.35.0, standing in for the Talos control plane
// provider (CACPPT controllers/taloscontrolplane_controller.go sets
// status.initialized once the first control plane node bootstrapped and
// status.ready when the API answers; the v1beta1 contract fields Cluster
// API reads, internal/contract/controlplane.go); a v1beta2 Cluster with it
// as controlPlaneRef and no infrastructureRef (the Cluster controller then
// marks the infrastructure provisioned, cluster_controller_phases.go
// reconcileInfrastructure); and the <name>-kubeconfig Secret (key value,
// labelled with the cluster name, the only Secrets the manager's cache
// holds, main.go) that points at the suite's own API server, the workload
// cluster where the kubelet stand-in registers the Nodes.
func (cp *ControlPlane) CreateCluster(ctx context.Context, ns, name string) error {
	tcp := MustObject(fmt.Sprintf(`
apiVersion: controlplane.cluster.x-k8s.io/v1alpha3
kind: TalosControlPlane
metadata:
  name: %[2]s-control-plane
  namespace: %[1]s
spec:
  version: v1.35.0
  replicas: 1
`, ns, name))
	if err := cp.ApplyAs(ctx, ProviderStandInManager, tcp); err != nil {
		return err
	}
	tcp.Object["status"] = map[string]any{
		"initialized": true, "ready": true, "version": "v1.35.0",
		"replicas": int64(1), "readyReplicas": int64(1), "updatedReplicas": int64(1),
	}
	if err := cp.ApplyStatus(ctx, ProviderStandInManager, tcp); err != nil {
		return err
	}
	kubeconfig, err := os.ReadFile(cp.Kubeconfig)
	if err != nil {
		return err
	}
	secret := MustObject(fmt.Sprintf(`
apiVersion: v1
kind: Secret
metadata:
  name: %[2]s-kubeconfig
  namespace: %[1]s
  labels:
    cluster.x-k8s.io/cluster-name: %[2]s
type: cluster.x-k8s.io/secret
`, ns, name))
	secret.Object["data"] = map[string]any{"value": base64.StdEncoding.EncodeToString(kubeconfig)}
	if err := cp.Apply(ctx, secret); err != nil {
		return err
	}
	return cp.Apply(ctx, MustObject(fmt.Sprintf(`
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: %[2]s
  namespace: %[1]s
spec:
  controlPlaneRef:
    apiGroup: controlplane.cluster.x-k8s.io
    kind: TalosControlPlane
    name: %[2]s-control-plane
`, ns, name)))
}

// CompositeLabel is the label Crossplane puts on every resource an XR
// composes, naming the XR (crossplane-runtime pkg/resource, LabelKeyNamePrefixForComposed).
const CompositeLabel = "crossplane.io/composite"

// PoolLeftovers returns, as "Kind namespace/name" sorted, what is left in
// ns of the node pool XR xr whose MachineDeployment is deployment: the
// MachineDeployment, the MachineSets and Machines Cluster API made for it
// (by its deployment-name label), and the templates, MachineHealthChecks
// and Usages the XR composed (by Crossplane's composite label). Objects
// being deleted count: they are not gone yet. A delete scenario waits for
// it to be empty while the Cluster lives.
func (cp *ControlPlane) PoolLeftovers(ctx context.Context, ns, xr, deployment string) ([]string, error) {
	var left []string
	md, err := cp.Get(ctx, MachineDeployment, ns, deployment)
	if err != nil {
		return nil, err
	}
	if md != nil {
		left = append(left, "MachineDeployment "+objectName(md))
	}
	queries := []struct {
		kinds    []schema.GroupVersionKind
		selector string
	}{
		{[]schema.GroupVersionKind{MachineSet, Machine}, DeploymentNameLabel + "=" + deployment},
		{[]schema.GroupVersionKind{KubevirtMachineTemplate, TalosConfigTemplate, MachineHealthCheck, Usage}, CompositeLabel + "=" + xr},
	}
	for _, q := range queries {
		for _, k := range q.kinds {
			items, err := cp.List(ctx, k, ns, q.selector)
			if err != nil {
				return nil, err
			}
			for i := range items {
				left = append(left, k.Kind+" "+objectName(&items[i]))
			}
		}
	}
	sort.Strings(left)
	return left, nil
}
