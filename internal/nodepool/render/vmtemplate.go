package render

import (
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
	infrav1 "sigs.k8s.io/cluster-api-provider-kubevirt/api/v1alpha1"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/rules"
)

// WithGPUs passes the pool's GPUs through to the VM, named gpu1, gpu2, ...
// as the chart names them (nodegroup.yaml:143-150@69da032).
func WithGPUs(vmi *kubevirtv1.VirtualMachineInstanceSpec, gpus []v1alpha1.GPU) {
	for i, g := range gpus {
		vmi.Domain.Devices.GPUs = append(vmi.Domain.Devices.GPUs, kubevirtv1.GPU{Name: fmt.Sprintf("gpu%d", i+1), DeviceName: g.Name})
	}
}

// The worker VM details the cozystack chart renders into every pool's
// VirtualMachine (packages/apps/kubernetes-nodes/templates/nodegroup.yaml
// @69da032: roles 59-61 and 121-123, the bridge and its live-migration
// annotation 110-111, 159-161 and 209-211, the topology spread 126-134, the
// system disk 151-158, the serial console 168-170, the virt-launcher
// resources 175-203).
const (
	// podNetwork names the pod network and the interface bound to it.
	podNetwork = "default"
	// AnnAllowPodBridgeLiveMigration lets KubeVirt live-migrate a VM whose
	// pod network is bound by bridge (KubeVirt refuses it otherwise: the
	// guest keeps the Pod's IP, which changes with the Pod).
	AnnAllowPodBridgeLiveMigration = "kubevirt.io/allow-pod-bridge-network-live-migration"
	// labelClusterName is the label CAPK puts on every worker's VMI
	// template, so on its virt-launcher Pod (pkg/kubevirt/utils.go of CAPK
	// v0.11.2): what a topology spread constraint selects a cluster's
	// workers by.
	labelClusterName = "cluster.x-k8s.io/cluster-name"
)

// apply writes the details into the VM template of a KubevirtMachineTemplate
// built by renderMachineTemplate, before its name is hashed.
func apply(v pool.VM, p pool.Pool, t *infrav1.VirtualMachineTemplateSpec) {
	t.ObjectMeta.Labels = withRoles(t.ObjectMeta.Labels, v.Roles)
	vmi := t.Spec.Template
	vmi.ObjectMeta.Labels = withRoles(vmi.ObjectMeta.Labels, v.Roles)
	if v.ApplicationLabels {
		vmi.ObjectMeta.Labels = withApplication(vmi.ObjectMeta.Labels, p)
	}
	if vmi.ObjectMeta.Annotations == nil {
		vmi.ObjectMeta.Annotations = map[string]string{}
	}
	vmi.ObjectMeta.Annotations[AnnAllowPodBridgeLiveMigration] = "true"

	spec := &vmi.Spec
	spec.Architecture = v.Architecture
	devices := &spec.Domain.Devices
	for i := range devices.Disks {
		if devices.Disks[i].Name != pool.SystemVolume || devices.Disks[i].Disk == nil {
			continue
		}
		devices.Disks[i].Disk.PciAddress = v.PCIAddress
		devices.Disks[i].BlockSize = &kubevirtv1.BlockSize{Custom: &kubevirtv1.CustomBlockSize{Logical: v.LogicalBlock, Physical: v.PhysicalBlk}}
	}
	devices.Interfaces = []kubevirtv1.Interface{{
		Name:                   podNetwork,
		InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{Bridge: &kubevirtv1.InterfaceBridge{}},
	}}
	spec.Networks = []kubevirtv1.Network{{
		Name:          podNetwork,
		NetworkSource: kubevirtv1.NetworkSource{Pod: &kubevirtv1.PodNetwork{}},
	}}
	if v.LogSerialConsole {
		// Only when true, as the chart: false is KubeVirt's default and
		// the platform's disableSerialConsoleLog decides.
		on := true
		devices.LogSerialConsole = &on
	}

	res := &spec.Domain.Resources
	res.Requests = corev1.ResourceList{corev1.ResourceEphemeralStorage: v.EphemeralRequest}
	res.Limits = corev1.ResourceList{corev1.ResourceEphemeralStorage: v.EphemeralLimit}
	if v.PodCPURequest != nil {
		res.Requests[corev1.ResourceCPU] = *v.PodCPURequest
	}
	if v.PodCPULimit != nil {
		res.Limits[corev1.ResourceCPU] = *v.PodCPULimit
	}

	if v.FactoryCA != "" {
		for i := range t.Spec.DataVolumeTemplates {
			if h := t.Spec.DataVolumeTemplates[i].Spec.Source.HTTP; h != nil {
				h.CertConfigMap = factoryCAName(p)
			}
		}
	}

	for _, c := range v.TopologySpread {
		c = *c.DeepCopy()
		if c.LabelSelector == nil {
			c.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{labelClusterName: p.Cluster}}
		}
		spec.TopologySpreadConstraints = append(spec.TopologySpreadConstraints, c)
	}
}

// withRoles adds node-role.kubernetes.io/<role>: "" for each role to l (a
// copy; nil stays nil when there are no roles).
func withRoles(l map[string]string, roles []string) map[string]string {
	if len(roles) == 0 {
		return l
	}
	labels := make(map[string]string, len(roles))
	for _, r := range roles {
		labels[rules.NodeRolePrefix+r] = ""
	}
	return WithLabels(l, labels)
}

// Labels of cozystack's application lineage, as its kubernetes-nodes chart
// sets them on the worker VM's Pod (templates/nodegroup.yaml:117-124
// @69da032): the tenant cluster is a Kubernetes application of the
// apps.cozystack.io group.
const (
	labelApplicationGroup = "apps.cozystack.io/application.group"
	labelApplicationKind  = "apps.cozystack.io/application.kind"
	labelApplicationName  = "apps.cozystack.io/application.name"
)

// withApplication adds the lineage labels of pool p to l (a copy).
func withApplication(l map[string]string, p pool.Pool) map[string]string {
	return WithLabels(l, map[string]string{
		labelApplicationGroup:          "apps.cozystack.io",
		labelApplicationKind:           "Kubernetes",
		labelApplicationName:           p.Cluster,
		clusterapi.LabelDeploymentName: p.DeploymentName(),
	})
}

// MachineLabels adds the pool's roles and the labels Cluster API syncs
// (poolspec.NodeLabels.Machine) to a MachineDeployment's machine template
// labels: Cluster API propagates them to the Machines in place and syncs
// them from each Machine to its Node. No pool label can replace the
// template's own (the selector): rules.ReachableLabel refuses their
// cluster.x-k8s.io namespace, rules.OwnedLabel the roles'.
func MachineLabels(l map[string]string, s pool.Shape) map[string]string {
	return WithLabels(withRoles(l, s.VM.Roles), s.Labels.Machine)
}

// WithLabels is l with extra added (a copy), or l itself when there is
// nothing to add.
func WithLabels(l, extra map[string]string) map[string]string {
	if len(extra) == 0 {
		return l
	}
	out := maps.Clone(l)
	if out == nil {
		out = make(map[string]string, len(extra))
	}
	maps.Copy(out, extra)
	return out
}

// TemplateShape is how the pool's objects are serialised and hashed: empty
// objects dropped, except KubeVirt's bridge: {} and pod: {}, whose presence
// is the interface binding and the network.
var TemplateShape = []compose.Option{compose.DropEmpty(), compose.KeepEmpty("bridge", "pod")}

// factoryCAName is the pool's CA ConfigMap: stable, not content-hashed, so
// a CA rotation updates it in place (CDI reads it by name at import time)
// instead of rolling the pool, as the chart's <release>-talos-factory-ca
// (packages/apps/kubernetes/templates/_helpers.tpl @5bb2dd5).
func factoryCAName(p pool.Pool) string { return p.DeploymentName() + "-factory-ca" }

// FactoryCA is the ConfigMap CDI mounts into each HTTP import of the
// pool (source.http.certConfigMap must be in the DataVolume's namespace;
// CDI appends every file in it to its system pool), or nil when the Input
// gives no CA. It is composed whatever the disk source, so that a pool's
// kept HTTP templates keep their CA while it moves onto a golden.
func FactoryCA(p pool.Pool, s pool.Shape) *corev1.ConfigMap {
	if s.VM.FactoryCA == "" {
		return nil
	}
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: factoryCAName(p), Namespace: p.Namespace,
			Labels:      map[string]string{clusterapi.LabelClusterName: p.Cluster, labels.Pool: p.Hash(), labels.ManagedBy: labels.ManagedByValue},
			Annotations: map[string]string{labels.AnnPool: p.Ref()},
		},
		Data: map[string]string{"ca.pem": s.VM.FactoryCA + "\n"},
	}
}
