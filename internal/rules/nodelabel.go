package rules

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kubeletapis "k8s.io/kubelet/pkg/apis"
	capilabels "sigs.k8s.io/cluster-api/util/labels"
)

// Node labels and taints reach Talos machine.nodeLabels and
// machine.nodeTaints, which Talos applies to the Node with the same syntax
// rules as any label. The cozystack chart checks the same grammar with its
// own regular expressions (kubernetes-nodes
// templates/talos-reconcile-job.yaml@27f0283, $labelKeyRe, $labelValueRe);
// apimachinery's validators are that grammar.

// The XRD's patterns for label keys (taint keys and GPU resource names
// too) and label values: the grammar apimachinery's validators check, as
// RE2. The prefix's 253-character bound is the validators' alone.
const (
	LabelKeyPattern   = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	LabelValuePattern = `^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
)

// LabelGPU is the node label a GPU pool carries (gpu=on): HAMi's device
// plugin DaemonSet selects nodes on it.
const LabelGPU = "gpu"

// labelRolePrefix is the prefix of the node-role labels a pool's roles set.
const labelRolePrefix = "node-role.kubernetes.io/"

// LabelKey checks a label or taint key: an optional DNS-subdomain prefix and
// a slash, then a name of at most 63 characters. what is "label" or "taint".
func LabelKey(path *field.Path, k, what string) field.ErrorList {
	if errs := validation.IsQualifiedName(k); len(errs) > 0 {
		return field.ErrorList{field.Invalid(path, Quoted(k), fmt.Sprintf("is not a valid %s key (%s); use an optional DNS-subdomain prefix and a slash, then up to 63 letters, digits, '-', '_' or '.', e.g. example.com/tier", what, errs[0]))}
	}
	return nil
}

// LabelValue checks a label or taint value: up to 63 letters, digits, '-',
// '_' or '.', starting and ending alphanumeric, or empty.
func LabelValue(path *field.Path, v, what string) field.ErrorList {
	if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
		return field.ErrorList{field.Invalid(path, Quoted(v), fmt.Sprintf("is not a valid %s value (%s); use up to 63 letters, digits, '-', '_' or '.', starting and ending alphanumeric", what, errs[0]))}
	}
	return nil
}

// OwnedLabel refuses a pool label the function sets itself, as the chart
// does (talos-reconcile-job.yaml@27f0283, "is managed by the chart"): gpu
// comes from gpus, node-role.kubernetes.io/* from roles, and a pool label
// must not contradict them.
func OwnedLabel(path *field.Path, k string) field.ErrorList {
	if k == LabelGPU || strings.HasPrefix(k, labelRolePrefix) {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("label %q is managed by the function; use gpus for the gpu label and roles for node-role.kubernetes.io/* labels, and remove it from labels", Quoted(k)))}
	}
	return nil
}

// LabelReach is what puts a pool label on its Nodes.
type LabelReach int

const (
	// ReachNode: Talos writes it (machine.nodeLabels) with the node's own
	// kubelet identity when the machine boots. A running node keeps the
	// labels it booted with, so a change rolls the pool.
	ReachNode LabelReach = iota
	// ReachMachine: Cluster API's Machine controller copies it from the
	// Machine to the Node (machine_controller_noderef.go, v1.11.4), with
	// the workload cluster's admin credentials, and keeps it in sync. The
	// MachineDeployment propagates its machine template labels to the
	// Machines in place, so a change rolls nothing.
	ReachMachine
	// ReachNone: neither may set it. The NodeRestriction admission plugin
	// refuses a node's own write of it, and Cluster API does not sync it.
	ReachNone
)

// NodeLabelReach is what can put a label with key k on a worker's Node.
// synced are the Input's clusterAPI.syncMachineLabels, the patterns the
// Cluster API manager is started with (--additional-sync-machine-labels).
// Cluster API wins where both could: it updates the label in place, and it
// alone may write node-restriction.kubernetes.io labels.
func NodeLabelReach(k string, synced []*regexp.Regexp) LabelReach {
	if len(capilabels.GetManagedLabels(map[string]string{k: ""}, synced...)) > 0 {
		return ReachMachine
	}
	if nodeMayNotSet(k) {
		return ReachNone
	}
	return ReachNode
}

// nodeMayNotSet is what the NodeRestriction admission plugin refuses a
// kubelet's write of on its own Node (getForbiddenLabels,
// plugin/pkg/admission/noderestriction/admission.go, Kubernetes v1.35): the
// node-restriction.kubernetes.io namespace, and every other kubernetes.io
// or k8s.io label the kubelet is not allowed (kubeletapis.IsKubeletLabel).
// Talos applies machine.nodeLabels as the kubelet (Talos docs, "Node
// Labels"), so such a label would never reach the Node.
func nodeMayNotSet(k string) bool {
	ns, _, ok := strings.Cut(k, "/")
	if !ok {
		return false
	}
	under := func(domain string) bool { return ns == domain || strings.HasSuffix(ns, "."+domain) }
	if under(corev1.LabelNamespaceNodeRestriction) {
		return true
	}
	return (under("kubernetes.io") || under("k8s.io")) && !kubeletapis.IsKubeletLabel(k)
}

// capiLabelDomain is Cluster API's own label namespace: the Machine's
// cluster-name, deployment-name and set-name labels the MachineDeployment
// selects its Machines by.
const capiLabelDomain = "cluster.x-k8s.io"

// ReachableLabel refuses a pool label that no one can put on the Node (reach
// is NodeLabelReach's verdict on k), and one in Cluster API's own namespace,
// which a Machine label routed there could overwrite.
func ReachableLabel(path *field.Path, k string, reach LabelReach) field.ErrorList {
	if ns, _, _ := strings.Cut(k, "/"); ns == capiLabelDomain {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("label %q is in Cluster API's own namespace %s, which selects a MachineDeployment's Machines; use another prefix, e.g. node.cluster.x-k8s.io/ for a label Cluster API keeps in sync on the Node", Quoted(k), capiLabelDomain))}
	}
	if reach == ReachNone {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("label %q would never reach the Node: the NodeRestriction admission plugin refuses it from the node itself (Talos applies machine.nodeLabels as the kubelet), and Cluster API does not sync it from the Machine; use a key outside kubernetes.io and k8s.io (e.g. example.com/tier), one under node.cluster.x-k8s.io/, or list a pattern matching it in the Input's clusterAPI.syncMachineLabels once the Cluster API manager runs with the same --additional-sync-machine-labels", Quoted(k)))}
	}
	return nil
}
