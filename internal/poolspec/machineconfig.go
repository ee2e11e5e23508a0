package poolspec

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/rules"
)

// The pool rules of what reaches the worker's Talos machine config: labels,
// taints, GPUs, kernel modules and kubelet reservations (issue 12). Each
// follows a guard of cozystack's kubernetes-nodes chart, cited where it is.

// Kubelet defaults and bounds, as the chart has them (kubernetes-nodes
// templates/nodegroup.yaml:314-345@69da032): each of system and kube
// reserved is 5% of the node, memory clamped to [256Mi, 1Gi] and CPU to
// [50m, 500m]; the floors also stand in when the node's size is unknown.
const (
	reservedPercent     = 5
	reservedMemoryMinMi = 256
	reservedMemoryMaxMi = 1024
	reservedCPUMinMilli = 50
	reservedCPUMaxMilli = 500
	// DefaultEvictionHard and DefaultEvictionSoft are the memory.available
	// thresholds (values.yaml@c1ea547 Kubelet typedef).
	DefaultEvictionHard = "7%"
	DefaultEvictionSoft = "10%"
)

// NodeSize is the worker's size that reservations are computed from and
// checked against. Zero MemoryBytes or MilliCPU means unknown.
type NodeSize struct {
	MemoryBytes int64
	MilliCPU    int64
	// From names where the size came from, for messages.
	From string
	// Pending is set when the size comes from an instance type that has
	// not been read yet: only the checks that need no size run.
	Pending bool
}

// Reserved is a pool's effective kubelet reservations and thresholds.
type Reserved struct {
	SystemMemory, KubeMemory resource.Quantity
	SystemCPU, KubeCPU       resource.Quantity
	// EvictionHard and EvictionSoft are the memory.available thresholds,
	// parsed; the machine config writes their Text.
	EvictionHard, EvictionSoft rules.Threshold
}

// machine checks the pool's labels, taints, GPUs, kernel modules and kubelet
// block at root, and resolves its reservations on node. A pool sized by
// resources has them checked against that size here; one sized by an
// instance type is checked again once the node pool has read the instance
// type.
func machine(root *field.Path, s v1alpha1.PoolShape, node NodeSize, synced []*regexp.Regexp) (Reserved, NodeLabels, field.ErrorList) {
	var errs field.ErrorList
	var labels NodeLabels
	for _, k := range slices.Sorted(maps.Keys(s.Labels)) {
		// The chart's label guards (talos-reconcile-job.yaml@27f0283).
		errs = append(errs, rules.LabelKey(root.Child("labels"), k, "label")...)
		errs = append(errs, rules.OwnedLabel(root.Child("labels").Key(k), k)...)
		errs = append(errs, rules.LabelValue(root.Child("labels").Key(k), s.Labels[k], "label")...)
		reach := rules.NodeLabelReach(k, synced)
		errs = append(errs, rules.ReachableLabel(root.Child("labels").Key(k), k, reach)...)
		labels.add(k, s.Labels[k], reach)
	}
	seen := map[string]int{}
	for i, t := range s.Taints {
		p := root.Child("taints").Index(i)
		if t.Key == "" {
			errs = append(errs, field.Required(p.Child("key"), "set the taint's key, e.g. dedicated"))
		} else {
			errs = append(errs, rules.LabelKey(p.Child("key"), t.Key, "taint")...)
		}
		errs = append(errs, rules.LabelValue(p.Child("value"), t.Value, "taint")...)
		errs = append(errs, rules.TaintEffect(p.Child("effect"), t.Effect)...)
		// Talos keys machine.nodeTaints by taint key, so two taints with
		// one key cannot both be registered.
		if j, dup := seen[t.Key]; dup && t.Key != "" {
			errs = append(errs, field.Duplicate(p.Child("key"), fmt.Sprintf("%s (also taints[%d]); Talos registers one taint per key, so merge them", rules.Quoted(t.Key), j)))
		}
		seen[t.Key] = i
	}
	for i, g := range s.GPUs {
		errs = append(errs, rules.GPUName(root.Child("gpus").Index(i).Child("name"), g.Name)...)
	}
	if s.KernelModules != nil {
		for i, m := range *s.KernelModules {
			p := root.Child("kernelModules").Index(i)
			errs = append(errs, rules.KernelModuleName(p.Child("name"), m.Name)...)
			for j, param := range m.Parameters {
				errs = append(errs, rules.KernelModuleParameter(p.Child("parameters").Index(j), param)...)
			}
		}
	}
	r, e := Reservations(root, s.Kubelet, node)
	return r, labels, append(errs, e...)
}

// NodeLabels are a pool's labels by what puts them on its Nodes
// (rules.NodeLabelReach); nil when there are none of a kind.
type NodeLabels struct {
	// Node are written into the Talos config, machine.nodeLabels: a
	// change rolls the pool, as the chart's does.
	Node map[string]string
	// Machine are set on the MachineDeployment's Machines, which Cluster
	// API syncs to their Nodes: a change rolls nothing.
	Machine map[string]string
}

// SplitLabels splits a pool's labels by what puts them on its Nodes; a label
// no one can put there (refused by ReachableLabel) goes with Node.
func SplitLabels(l map[string]string, synced []*regexp.Regexp) NodeLabels {
	var out NodeLabels
	for k, v := range l {
		out.add(k, v, rules.NodeLabelReach(k, synced))
	}
	return out
}

func (l *NodeLabels) add(k, v string, reach rules.LabelReach) {
	to := &l.Node
	if reach == rules.ReachMachine {
		to = &l.Machine
	}
	if *to == nil {
		*to = map[string]string{}
	}
	(*to)[k] = v
}

// Reservations resolves the pool's kubelet block on a node of the given
// size and runs the chart's guards (kubernetes-nodes
// templates/nodegroup.yaml:346-460@69da032): each value well formed and
// positive, hard eviction strictly below soft and in the same kind of unit,
// the reserved memory (system + kube + hard eviction) and CPU (system +
// kube) strictly less than the node's, and no override the node's size
// cannot check. Only the first group runs while the size is Pending.
func Reservations(root *field.Path, k *v1alpha1.Kubelet, node NodeSize) (Reserved, field.ErrorList) {
	if k == nil {
		k = &v1alpha1.Kubelet{}
	}
	kp := root.Child("kubelet")
	var errs field.ErrorList
	autoMemory := clamp(node.MemoryBytes/(1<<20)*reservedPercent/100, reservedMemoryMinMi, reservedMemoryMaxMi)
	autoCPU := clamp(node.MilliCPU*reservedPercent/100, reservedCPUMinMilli, reservedCPUMaxMilli)
	memory := func(name, v string) resource.Quantity {
		if v == "" {
			return *resource.NewQuantity(autoMemory<<20, resource.BinarySI)
		}
		q, e := rules.ReservedMemory(kp.Child(name), v)
		errs = append(errs, e...)
		return q
	}
	cpu := func(name, v string) resource.Quantity {
		if v == "" {
			return *resource.NewMilliQuantity(autoCPU, resource.DecimalSI)
		}
		m, e := rules.ReservedCPU(kp.Child(name), v)
		errs = append(errs, e...)
		return *resource.NewMilliQuantity(m, resource.DecimalSI)
	}
	r := Reserved{
		SystemMemory: memory("systemReservedMemory", string(k.SystemReservedMemory)),
		KubeMemory:   memory("kubeReservedMemory", string(k.KubeReservedMemory)),
		SystemCPU:    cpu("systemReservedCpu", string(k.SystemReservedCPU)),
		KubeCPU:      cpu("kubeReservedCpu", string(k.KubeReservedCPU)),
	}
	hard, e := rules.EvictionThreshold(kp.Child("evictionHardMemory"), cmp.Or(k.EvictionHardMemory, DefaultEvictionHard))
	errs = append(errs, e...)
	soft, e2 := rules.EvictionThreshold(kp.Child("evictionSoftMemory"), cmp.Or(k.EvictionSoftMemory, DefaultEvictionSoft))
	errs = append(errs, e2...)
	r.EvictionHard, r.EvictionSoft = hard, soft
	if len(e) == 0 && len(e2) == 0 {
		switch {
		case hard.IsPercent != soft.IsPercent:
			errs = append(errs, field.Invalid(kp.Child("evictionHardMemory"), hard.Text, fmt.Sprintf("and evictionSoftMemory %q must use the same kind of unit, both percentages or both quantities", soft.Text)))
		case hard.IsPercent && hard.Percent >= soft.Percent, !hard.IsPercent && hard.Quantity.Cmp(soft.Quantity) >= 0:
			errs = append(errs, field.Invalid(kp.Child("evictionHardMemory"), hard.Text, fmt.Sprintf("must be strictly less than evictionSoftMemory %q: the kubelet evicts gracefully at the soft threshold before it kills at the hard one", soft.Text)))
		}
	}
	if len(errs) > 0 || node.Pending {
		return r, errs
	}
	if node.MemoryBytes == 0 {
		if k.SystemReservedMemory != "" || k.KubeReservedMemory != "" || k.EvictionHardMemory != "" || k.EvictionSoftMemory != "" {
			errs = append(errs, field.Invalid(kp, field.OmitValueType{}, "sets memory reservations, which cannot be checked without the node's memory; set resources.memory or an instanceType"))
		}
	} else if total := r.SystemMemory.AsApproximateFloat64() + r.KubeMemory.AsApproximateFloat64() + hard.Bytes(node.MemoryBytes); total >= float64(node.MemoryBytes) {
		errs = append(errs, field.Invalid(kp, field.OmitValueType{}, fmt.Sprintf("reserves too much memory: systemReservedMemory %s + kubeReservedMemory %s + evictionHardMemory %s must be less than the node's memory %s (from %s), or nothing is left for pods; lower the reservations or give the node more memory",
			r.SystemMemory.String(), r.KubeMemory.String(), hard.Text, resource.NewQuantity(node.MemoryBytes, resource.BinarySI).String(), node.From)))
	}
	if node.MilliCPU == 0 {
		if k.SystemReservedCPU != "" || k.KubeReservedCPU != "" {
			errs = append(errs, field.Invalid(kp, field.OmitValueType{}, "sets CPU reservations, which cannot be checked without the node's CPU; set resources.cpu or an instanceType"))
		}
	} else if r.SystemCPU.MilliValue()+r.KubeCPU.MilliValue() >= node.MilliCPU {
		errs = append(errs, field.Invalid(kp, field.OmitValueType{}, fmt.Sprintf("reserves too much CPU: systemReservedCpu %s + kubeReservedCpu %s must be less than the node's CPU %s (from %s); lower the reservations or give the node more CPU",
			r.SystemCPU.String(), r.KubeCPU.String(), resource.NewMilliQuantity(node.MilliCPU, resource.DecimalSI).String(), node.From)))
	}
	return r, errs
}

func clamp(v, lo, hi int64) int64 {
	return min(max(v, lo), hi)
}
