package clusterapi

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/poolspec"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// The cluster-autoscaler's Cluster API annotations on a MachineDeployment
// (kubernetes/autoscaler cluster-autoscaler/cloudprovider/clusterapi
// README.md: node group size, scale from zero, per-node-group options), as
// the kubernetes-nodes chart writes them (templates/nodegroup.yaml:495-514 at
// cozystack/cozystack@69da032).
const (
	AnnAutoscalerMinSize       = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
	AnnAutoscalerMaxSize       = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
	AnnMaxNodeProvisionTime    = "cluster.x-k8s.io/autoscaling-options-maxnodeprovisiontime"
	AnnCapacityCPU             = "capacity.cluster-autoscaler.kubernetes.io/cpu"
	AnnCapacityMemory          = "capacity.cluster-autoscaler.kubernetes.io/memory"
	AnnCapacityGPUCount        = "capacity.cluster-autoscaler.kubernetes.io/gpu-count"
	AnnCapacityGPUType         = "capacity.cluster-autoscaler.kubernetes.io/gpu-type"
	AnnCapacityLabels          = "capacity.cluster-autoscaler.kubernetes.io/labels"
	AnnCapacityTaints          = "capacity.cluster-autoscaler.kubernetes.io/taints"
	rollingUpdate              = "RollingUpdate"
	bytesPerMi                 = 1 << 20
	autoscalerAnnotationsCount = 9
)

// Capacity is what one worker of an autoscaled pool offers the scheduler,
// for the cluster-autoscaler to scale the pool up from zero, when it has no
// Node to look at (cluster-autoscaler cloudprovider/clusterapi
// clusterapi_utils.go reads capacity.cluster-autoscaler.kubernetes.io/*).
type Capacity struct {
	// Known is false while the node's size is unknown (its instance type
	// not read yet): no capacity is claimed then.
	Known bool
	// MemoryMi and MilliCPU are allocatable: the node's size less the
	// kubelet's reservations and, for memory, the hard eviction threshold,
	// as the chart computes them (nodegroup.yaml:498-514@69da032).
	MemoryMi, MilliCPU int64
	GPUs               int
	// GPUType is the resource the guest's device plugin offers the GPUs
	// as; empty when the function cannot tell.
	GPUType string
	// Labels and Taints are the node's, in the autoscaler's
	// key=value[,...] and key=value:Effect[,...] forms.
	Labels, Taints string
}

// WorkerCapacity computes a worker's capacity from its size, reservations
// and node config.
func WorkerCapacity(size poolspec.NodeSize, known bool, r poolspec.Reserved, nc talosconfig.Node, gpus []v1alpha1.GPU) Capacity {
	c := Capacity{Known: known && !size.Pending, GPUs: len(gpus)}
	if !c.Known {
		return c
	}
	if size.MemoryBytes > 0 {
		reserved := r.SystemMemory.AsApproximateFloat64() + r.KubeMemory.AsApproximateFloat64() + r.EvictionHard.Bytes(size.MemoryBytes)
		c.MemoryMi = int64((float64(size.MemoryBytes) - reserved) / bytesPerMi)
	}
	if size.MilliCPU > 0 {
		c.MilliCPU = size.MilliCPU - r.SystemCPU.MilliValue() - r.KubeCPU.MilliValue()
	}
	// KubeVirt passes NVIDIA devices through whole; inside the guest the
	// NVIDIA (or HAMi) device plugin offers them as nvidia.com/gpu.
	if len(gpus) > 0 && !slices.ContainsFunc(gpus, func(g v1alpha1.GPU) bool { return !strings.HasPrefix(g.Name, talosconfig.NVIDIAPrefix) }) {
		c.GPUType = nvidiaGPUResource
	}
	c.Labels = joinSorted(nc.Labels, func(k, v string) string { return k + "=" + v })
	c.Taints = joinSorted(nc.Taints, func(k, v string) string {
		value, effect, ok := strings.Cut(v, ":")
		if !ok {
			value, effect = "", v
		}
		return k + "=" + value + ":" + effect
	})
	return c
}

// nvidiaGPUResource is the extended resource NVIDIA GPUs are scheduled as.
const nvidiaGPUResource = "nvidia.com/gpu"

func joinSorted(m map[string]string, item func(k, v string) string) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, item(k, m[k]))
	}
	return strings.Join(parts, ",")
}

// autoscalerAnnotations are the MachineDeployment annotations of an
// autoscaled pool: its bounds, its provision time and one worker's
// capacity, so that the autoscaler can scale the pool up from zero. Units
// follow the chart: memory in whole Mi (rounded down), CPU in millicores.
func autoscalerAnnotations(sc poolspec.Scaling, c Capacity) map[string]string {
	if !sc.Autoscaled {
		return nil
	}
	a := make(map[string]string, autoscalerAnnotationsCount)
	a[AnnAutoscalerMinSize] = strconv.Itoa(int(sc.Min))
	a[AnnAutoscalerMaxSize] = strconv.Itoa(int(sc.Max))
	a[AnnMaxNodeProvisionTime] = sc.ProvisionTime
	if !c.Known {
		return a
	}
	if c.MemoryMi > 0 {
		a[AnnCapacityMemory] = fmt.Sprintf("%dMi", c.MemoryMi)
	}
	if c.MilliCPU > 0 {
		a[AnnCapacityCPU] = fmt.Sprintf("%dm", c.MilliCPU)
	}
	if c.GPUs > 0 {
		a[AnnCapacityGPUCount] = strconv.Itoa(c.GPUs)
		if c.GPUType != "" {
			a[AnnCapacityGPUType] = c.GPUType
		}
	}
	if c.Labels != "" {
		a[AnnCapacityLabels] = c.Labels
	}
	if c.Taints != "" {
		a[AnnCapacityTaints] = c.Taints
	}
	return a
}
