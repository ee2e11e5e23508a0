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
	KubevirtCluster    = gvk("infrastructure.cluster.x-k8s.io", "v1alpha1", "KubevirtCluster")
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

// Manager is one Cluster API manager of the run, the core's or a
// provider's, running out of cluster against the suite's kube-apiserver
// with the suite's admin kubeconfig (controller-runtime reads
// $KUBECONFIG): its controllers, its admission webhooks and, where it has
// them, its CRD conversion webhook, served on 127.0.0.1 with a serving
// certificate from a CA of its own (in a cluster cert-manager issues it and
// injects the CA, config/default/kustomization.yaml).
type Manager struct {
	cp *ControlPlane
	// Name is the manager's config/default namePrefix without its dash
	// (capi, cabpt, capk), which names its webhook configurations and its
	// log, logs/<name>-manager.log.
	Name            string
	Module, Version string
	// WebhookURL is https://127.0.0.1:<port> of the manager's webhook
	// server (admission and CRD conversion).
	WebhookURL string
	// CABundle is the PEM of the CA of the manager's serving certificate.
	CABundle []byte
	// Process is the running manager.
	Process *Process

	bin          string
	certDir      string
	webhookPort  int
	converts     map[string]bool
	webhookCount int
	// args are the manager's flags besides the health, webhook port and
	// certificate ones, which every manager names alike.
	args []string
	// probe proves, once the webhook configurations are registered, that
	// the kube-apiserver calls them.
	probe func(ctx context.Context, m *Manager) error
}

// newManager allocates a manager's webhook port and issues its serving
// certificate (IP SAN 127.0.0.1, tls.crt/tls.key, the names
// controller-runtime's webhook server reads from --webhook-cert-dir).
// Nothing runs yet: the CRDs must name the conversion webhook's URL before
// they are installed.
func newManager(cp *ControlPlane, m *Manager) (*Manager, error) {
	if m.bin == "" {
		return nil, fmt.Errorf("no %s manager binary: test/e2e/hack/build-binaries.sh printed no %s-manager path", m.Name, m.Name)
	}
	ports, err := FreeLoopbackPorts(1)
	if err != nil {
		return nil, err
	}
	m.cp, m.webhookPort = cp, ports[0]
	m.certDir = filepath.Join(cp.WorkDir, m.Name, "serving-certs")
	m.WebhookURL = "https://127.0.0.1:" + strconv.Itoa(m.webhookPort)
	if err := os.MkdirAll(m.certDir, 0o700); err != nil {
		return nil, err
	}
	ca, caPEM, err := newCA()
	if err != nil {
		return nil, err
	}
	m.CABundle = caPEM
	svc := m.Name + "-webhook-service"
	if err := ca.issueTo(filepath.Join(m.certDir, "tls.crt"), filepath.Join(m.certDir, "tls.key"), svc, []string{"localhost", svc + "." + m.Name + "-system.svc"}, []net.IP{net.ParseIP("127.0.0.1")}, x509.ExtKeyUsageServerAuth); err != nil {
		return nil, err
	}
	return m, nil
}

// NewCAPI prepares the Cluster API core manager (sigs.k8s.io/cluster-api,
// the module root's main.go). Flags (main.go and util/flags/manager.go at
// v1.11.4): leader election is off (--leader-elect); no --namespace or
// --watch-filter, so it watches every namespace, as a cluster's manager
// does. Feature gates stay upstream's defaults. It converts the CRDs of
// Cluster API's own groups (capiConvertedGroup).
func NewCAPI(cp *ControlPlane) (*Manager, error) {
	return newManager(cp, &Manager{
		Name: "capi", Module: CAPIModule, Version: CAPIVersion, bin: cp.Bin.CAPIManager,
		converts: capiConvertedGroup, webhookCount: 2,
		args:  []string{"--leader-elect=false"},
		probe: probeCAPI,
	})
}

// NewCABPT prepares the Talos bootstrap provider's manager
// (github.com/siderolabs/cluster-api-bootstrap-provider-talos v0.6.12,
// main.go): its TalosConfig controller and its TalosConfig and
// TalosConfigTemplate validating webhooks, and the conversion of its CRDs
// (v1alpha2 and v1alpha3, config/crd/patches/webhook_in_*.yaml). Leader
// election is off by default (--enable-leader-election).
func NewCABPT(cp *ControlPlane) (*Manager, error) {
	return newManager(cp, &Manager{
		Name: "cabpt", Module: CABPTModule, Version: CABPTVersion, bin: cp.Bin.CABPTManager,
		converts: map[string]bool{"bootstrap.cluster.x-k8s.io": true}, webhookCount: 1,
		probe: probeCABPT,
	})
}

// NewCAPK prepares the KubeVirt infrastructure provider's manager
// (sigs.k8s.io/cluster-api-provider-kubevirt v0.11.2, main.go): its
// KubevirtCluster and KubevirtMachine controllers and its
// KubevirtMachineTemplate validating webhook. Its CRDs have one version
// each. Leader election is off by default (--leader-elect); the infra
// cluster is the one it runs against (no infraClusterSecretRef), as on a
// cozystack management cluster.
func NewCAPK(cp *ControlPlane) (*Manager, error) {
	return newManager(cp, &Manager{
		Name: "capk", Module: CAPKModule, Version: CAPKVersion, bin: cp.Bin.CAPKManager,
		webhookCount: 1,
		probe:        probeCAPK,
	})
}

// ConvertByWebhook sets, in place, the conversion of every multi-version
// CRD of the manager's groups among objs to its /convert endpoint,
// trusting its CA: what config/crd/patches/webhook_in_*.yaml (strategy
// Webhook, conversionReviewVersions [v1, v1beta1], service path /convert)
// and cert-manager's CA injection do in a cluster, with a url instead of
// the Service. The storage versions stay upstream's (v1beta2 for Cluster
// API's): the function writes v1beta1 and the manager reads v1beta2, so
// every object crosses the real conversion.
func (m *Manager) ConvertByWebhook(objs []*unstructured.Unstructured) int {
	n := 0
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		g, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		versions, _, _ := unstructured.NestedSlice(o.Object, "spec", "versions")
		if !m.converts[g] || len(versions) < 2 {
			continue
		}
		_ = unstructured.SetNestedField(o.Object, map[string]any{
			"strategy": "Webhook",
			"webhook": map[string]any{
				"conversionReviewVersions": []any{"v1", "v1beta1"},
				"clientConfig": map[string]any{
					"url":      m.WebhookURL + "/convert",
					"caBundle": base64.StdEncoding.EncodeToString(m.CABundle),
				},
			},
		}, "spec", "conversion")
		n++
	}
	return n
}

// WebhookConfigurations reads the manager's webhook configurations from
// config/webhook/manifests.yaml of its module, named as config/default's
// namePrefix (<name>-) names them.
func (m *Manager) WebhookConfigurations(ctx context.Context) ([]*unstructured.Unstructured, error) {
	dir, err := ModuleDir(ctx, m.Module, m.Version)
	if err != nil {
		return nil, err
	}
	objs, err := ReadYAMLFiles(filepath.Join(dir, "config", "webhook", "manifests.yaml"))
	if err != nil {
		return nil, err
	}
	if len(objs) != m.webhookCount {
		return nil, fmt.Errorf("%s@%s/config/webhook/manifests.yaml holds %d objects, want %d WebhookConfigurations; re-check it", m.Module, m.Version, len(objs), m.webhookCount)
	}
	for _, o := range objs {
		o.SetName(m.Name + "-" + o.GetName())
	}
	return objs, nil
}

// Start starts the manager and, once it is ready, registers its webhooks
// and proves them. Every manager takes --diagnostics-address=0 (Cluster
// API's util/flags/manager.go: controller-runtime's "0" switches the
// metrics server off), --health-addr on loopback, and --webhook-port and
// --webhook-cert-dir with the run's certificate (the build patches the
// host to 127.0.0.1, hack/build-binaries.sh).
func (m *Manager) Start(ctx context.Context) error {
	ports, err := FreeLoopbackPorts(1)
	if err != nil {
		return err
	}
	health := "127.0.0.1:" + strconv.Itoa(ports[0])
	args := append([]string{
		"--diagnostics-address=0",
		"--health-addr=" + health,
		"--webhook-port=" + strconv.Itoa(m.webhookPort),
		"--webhook-cert-dir=" + m.certDir,
	}, m.args...)
	p, err := StartProcess(m.cp.LogDir, m.Name+"-manager", m.bin, args, []string{"KUBECONFIG=" + m.cp.Kubeconfig})
	if err != nil {
		return err
	}
	m.Process = p
	m.cp.adopt(p)
	// Every manager's /readyz includes a check that answers once the
	// webhook server accepts TLS (the webhook server's StartedChecker in
	// Cluster API's and CABPT's main.go; CAPK's ping answers once the
	// manager runs, so its probe retries).
	p.ready = func(ctx context.Context) error {
		return m.cp.waitHTTP(ctx, p, "http://"+health+"/readyz", nil, 120*time.Second)
	}
	if err := p.ready(ctx); err != nil {
		return err
	}
	hooks, err := m.WebhookConfigurations(ctx)
	if err != nil {
		return err
	}
	if err := URLClientConfigs(hooks, m.WebhookURL, m.CABundle); err != nil {
		return err
	}
	if err := m.cp.Apply(ctx, hooks...); err != nil {
		return err
	}
	return m.probe(ctx, m)
}

// CAPIValidationWebhook is the manager's validating webhook of
// MachineDeployments (config/webhook/manifests.yaml).
const CAPIValidationWebhook = "validation.machinedeployment.cluster.x-k8s.io"

// probeCAPI proves the core manager's webhooks before any scenario: a
// dry-run create of a v1beta1 MachineDeployment whose selector does not
// match its template's labels must be refused by
// validation.machinedeployment.cluster.x-k8s.io
// (internal/webhooks/machinedeployment.go, validate: "selector does not
// match template labels"). The refusal needs the conversion webhook too:
// the admission webhooks are registered for v1beta2, so the kube-apiserver
// converts the v1beta1 request through /convert before it calls them.
func probeCAPI(ctx context.Context, m *Manager) error {
	return m.refuses(ctx, MachineDeployment, CAPIValidationWebhook, "", "a dry-run create of a MachineDeployment whose selector does not match its template", MustObject(`
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
`), nil)
}

// probeCABPT: a dry-run create of a TalosConfig whose hostname source is
// neither MachineName nor InfrastructureName must be refused by
// vtalosconfig.cluster.x-k8s.io (api/v1alpha3/talosconfig_webhook.go,
// validate; the CRD's schema has no enum for it, so only the webhook
// refuses it).
func probeCABPT(ctx context.Context, m *Manager) error {
	return m.refuses(ctx, TalosConfig, "vtalosconfig.cluster.x-k8s.io", "", "a dry-run create of a TalosConfig with hostname source Bogus", MustObject(`
apiVersion: bootstrap.cluster.x-k8s.io/v1alpha3
kind: TalosConfig
metadata:
  name: e2e-webhook-probe
  namespace: default
spec:
  generateType: worker
  hostname:
    source: Bogus
`), nil)
}

// probeCAPK: a KubevirtMachineTemplate's spec is immutable
// (pkg/webhookhandler/validator.go, "KubevirtMachineTemplateSpec is
// immutable"): an update of a probe template's spec must be refused by
// validation.kubevirtmachinetemplate.infrastructure.cluster.x-k8s.io. The
// update is a real one: the handler allows every dry-run update, for
// ClusterClass's server-side-apply dry runs.
func probeCAPK(ctx context.Context, m *Manager) error {
	tmpl := MustObject(`
apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: KubevirtMachineTemplate
metadata:
  name: e2e-webhook-probe
  namespace: default
spec:
  template:
    spec:
      virtualMachineTemplate:
        spec:
          runStrategy: Always
          template:
            spec:
              domain:
                devices: {}
`)
	defer func() {
		if ri, err := m.cp.Resource(KubevirtMachineTemplate, "default"); err == nil {
			_ = ri.Delete(context.WithoutCancel(ctx), tmpl.GetName(), metav1.DeleteOptions{})
		}
	}()
	return m.refuses(ctx, KubevirtMachineTemplate, "validation.kubevirtmachinetemplate.infrastructure.cluster.x-k8s.io", "KubevirtMachineTemplateSpec is immutable", "an update of a KubevirtMachineTemplate's spec", tmpl, func(ctx context.Context) error {
		// The create itself goes through the webhook too (CREATE is
		// admitted), so it is retried until the server answers.
		ri, err := m.cp.Resource(KubevirtMachineTemplate, "default")
		if err != nil {
			return err
		}
		if _, err := ri.Get(ctx, tmpl.GetName(), metav1.GetOptions{}); err == nil {
			return nil
		}
		if _, err := ri.Create(ctx, tmpl.DeepCopy(), metav1.CreateOptions{}); err != nil {
			return err
		}
		return nil
	})
}

// refuses polls until a write of obj is refused by webhook (with want in
// the message, when set): a dry-run create, or, when setUp is given, an
// update of the object setUp created, with its spec's runStrategy changed.
func (m *Manager) refuses(ctx context.Context, gvk schema.GroupVersionKind, webhook, want, what string, obj *unstructured.Unstructured, setUp func(context.Context) error) error {
	ri, err := m.cp.Resource(gvk, obj.GetNamespace())
	if err != nil {
		return err
	}
	what = fmt.Sprintf("refusal by webhook %s (at %s) of %s", webhook, m.WebhookURL, what)
	return poll(ctx, m.Process, 60*time.Second, what, func(ctx context.Context) error {
		dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
		if setUp == nil {
			_, err = ri.Create(ctx, obj.DeepCopy(), dry)
		} else {
			if err := setUp(ctx); err != nil {
				return err
			}
			cur, err2 := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
			if err2 != nil {
				return err2
			}
			_ = unstructured.SetNestedField(cur.Object, "Halted", "spec", "template", "spec", "virtualMachineTemplate", "spec", "runStrategy")
			_, err = ri.Update(ctx, cur, metav1.UpdateOptions{})
		}
		switch {
		case err == nil:
			return errors.New("dry-run write allowed")
		case strings.Contains(err.Error(), fmt.Sprintf("admission webhook %q denied the request", webhook)) && strings.Contains(err.Error(), want):
			return nil
		default:
			return err
		}
	})
}

// CreateCluster creates, in ns, what a tenant's Cluster is made of for the
// Cluster API controllers the suite runs:
//   - a TalosControlPlane, initialized and ready at Kubernetes v1.35.0,
//     with no Machines (so externally managed, see below), standing in for
//     the Talos control plane provider (CACPPT
//     controllers/taloscontrolplane_controller.go sets status.initialized
//     once the first control plane node bootstrapped and status.ready when
//     the API answers; the v1beta1 contract fields Cluster API reads,
//     internal/contract/controlplane.go);
//   - a KubevirtCluster, which CAPK's own controller provisions: the
//     control plane's load-balancer Service (ClusterIP, whose address
//     becomes the control plane endpoint), the cluster nodes' SSH keys
//     Secret, status.ready (controllers/kubevirtcluster_controller.go);
//   - a v1beta2 Cluster with both as its references (the Cluster
//     controller marks the infrastructure provisioned from the
//     KubevirtCluster and copies its endpoint,
//     cluster_controller_phases.go reconcileInfrastructure);
//   - the <name>-kubeconfig Secret (key value, labelled with the cluster
//     name, the only Secrets the managers' caches hold) that points at the
//     suite's own API server, the workload cluster where the kubelet
//     stand-in registers the Nodes, where CAPK patches their providerID
//     and where Cluster API reads them.
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
	if err := cp.ApplyAs(ctx, NodeStandInManager, tcp); err != nil {
		return err
	}
	tcp.Object["status"] = map[string]any{
		"initialized": true, "ready": true, "version": "v1.35.0",
		"replicas": int64(1), "readyReplicas": int64(1), "updatedReplicas": int64(1),
		// The suite's control plane has no Machines. To Cluster API that is
		// an externally managed control plane (Kamaji's, as cozystack runs
		// it, reports externalManagedControlPlane), and only then does it
		// delete a worker's Node with its Machine: with neither control
		// plane Machines nor this flag it keeps every Node
		// (internal/controllers/machine/machine_controller.go
		// isDeleteNodeAllowed, v1.11.4).
		"externalManagedControlPlane": true,
	}
	if err := cp.ApplyStatus(ctx, NodeStandInManager, tcp); err != nil {
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
apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: KubevirtCluster
metadata:
  name: %[2]s
  namespace: %[1]s
spec:
  controlPlaneServiceTemplate:
    spec:
      type: ClusterIP
`, ns, name)), MustObject(fmt.Sprintf(`
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
  infrastructureRef:
    apiGroup: infrastructure.cluster.x-k8s.io
    kind: KubevirtCluster
    name: %[2]s
`, ns, name)))
}

// CompositeLabel is the label Crossplane puts on every resource an XR
// composes, naming the XR (crossplane-runtime pkg/resource, LabelKeyNamePrefixForComposed).
const CompositeLabel = "crossplane.io/composite"

// CompositionResourceNameAnnotation names a composed object's entry in its
// composite's desired state; Crossplane reads every object the composite
// references back by it (internal/controller/apiextensions/composite/
// composition_functions.go, ObserveComposedResources, v2.4.2).
const CompositionResourceNameAnnotation = "crossplane.io/composition-resource-name"

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

// ObjectRef names one object of the cluster.
type ObjectRef struct {
	Kind            schema.GroupVersionKind
	Namespace, Name string
}

func (r ObjectRef) String() string {
	if r.Namespace == "" {
		return r.Kind.Kind + " " + r.Name
	}
	return r.Kind.Kind + " " + r.Namespace + "/" + r.Name
}

// WorkerObjects returns what the chain made for each current Machine of
// the MachineDeployment deployment in ns: its TalosConfig and bootstrap
// data Secret (CABPT), its KubevirtMachine (Cluster API, from the
// template), the VirtualMachine CAPK made and its VMI, the worker disks
// (the VM's dataVolumeTemplates) and their PVCs, and its Node. A delete
// scenario takes them before the delete and waits for them to be gone.
func (cp *ControlPlane) WorkerObjects(ctx context.Context, ns, deployment string) ([]ObjectRef, error) {
	machines, err := cp.List(ctx, Machine, ns, DeploymentNameLabel+"="+deployment)
	if err != nil {
		return nil, err
	}
	var out []ObjectRef
	add := func(k schema.GroupVersionKind, ns, name string) {
		if name != "" {
			out = append(out, ObjectRef{k, ns, name})
		}
	}
	for _, m := range machines {
		bootstrap, _, _ := unstructured.NestedString(m.Object, "spec", "bootstrap", "configRef", "name")
		secret, _, _ := unstructured.NestedString(m.Object, "spec", "bootstrap", "dataSecretName")
		infra, _, _ := unstructured.NestedString(m.Object, "spec", "infrastructureRef", "name")
		node, _, _ := unstructured.NestedString(m.Object, "status", "nodeRef", "name")
		add(TalosConfig, ns, bootstrap)
		add(Secret, ns, secret)
		add(KubevirtMachine, ns, infra)
		add(Node, "", node)
		if infra == "" {
			continue
		}
		vm, err := cp.Get(ctx, VirtualMachine, ns, infra)
		if err != nil {
			return nil, err
		}
		if vm == nil {
			continue
		}
		add(VirtualMachine, ns, infra)
		add(VirtualMachineInstance, ns, infra)
		dvts, _, _ := unstructured.NestedSlice(vm.Object, "spec", "dataVolumeTemplates")
		for _, t := range dvts {
			name, _, _ := unstructured.NestedString(t.(map[string]any), "metadata", "name")
			add(DataVolume, ns, name)
			add(PVC, ns, name)
		}
	}
	return out, nil
}

// Remaining returns, of refs, those that still exist (being deleted
// counts).
func (cp *ControlPlane) Remaining(ctx context.Context, refs []ObjectRef) ([]string, error) {
	var left []string
	for _, r := range refs {
		u, err := cp.Get(ctx, r.Kind, r.Namespace, r.Name)
		if err != nil {
			return nil, err
		}
		if u != nil {
			left = append(left, r.String())
		}
	}
	return left, nil
}
