package nodepool

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; capi.go converts to v1beta2 when asked.

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/defaults"
	"github.com/cozystack/function-worker-image/internal/rules"
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
	rollingUpdate              = "RollingUpdate"
	bytesPerMi                 = 1 << 20
	millicoresPerCore          = 1000
	autoscalerAnnotationsCount = 5
)

// scaling is how many workers the pool runs and who decides, and how a
// template change rolls them.
type scaling struct {
	// Autoscaled: the cluster-autoscaler owns spec.replicas between Min and
	// Max; the function never writes it.
	Autoscaled    bool
	Min, Max      int32
	ProvisionTime string
	// MaxSurge and MaxUnavailable are the rolling update of every pool.
	MaxSurge, MaxUnavailable intstr.IntOrString
}

// resolveScaling applies the chart's defaults to the validated (poolspec.CAPI)
// autoscaling and rollout fields. fixed is the pool's resolved replicas.
func resolveScaling(s v1alpha1.PoolShape, fixed int32) scaling {
	sc := scaling{Autoscaled: s.MinReplicas != nil || s.MaxReplicas != nil}
	// The chart surges by the pool's ceiling, maxReplicas
	// (nodegroup.yaml:540-544): the whole pool may be replaced at once. A
	// fixed pool's ceiling is its count (at least 1, so that a pool scaled
	// to zero still has a valid strategy).
	surge := max(fixed, 1)
	if sc.Autoscaled {
		sc.Min, sc.Max = defaults.MinReplicas, 0
		if s.MinReplicas != nil {
			sc.Min = *s.MinReplicas
		}
		if s.MaxReplicas != nil {
			sc.Max = *s.MaxReplicas
		}
		sc.ProvisionTime = s.MaxNodeProvisionTime
		if sc.ProvisionTime == "" {
			sc.ProvisionTime = defaults.MaxNodeProvisionTime
		}
		surge = sc.Max
	}
	sc.MaxSurge = intstr.FromInt32(surge)
	sc.MaxUnavailable, _ = rules.CountOrPercent(nil, defaults.MaxUnavailable)
	if r := s.Rollout; r != nil {
		if r.MaxSurge != "" {
			sc.MaxSurge, _ = rules.CountOrPercent(nil, r.MaxSurge)
		}
		if r.MaxUnavailable != "" {
			sc.MaxUnavailable, _ = rules.CountOrPercent(nil, r.MaxUnavailable)
		}
	}
	return sc
}

// autoscalerAnnotations are the MachineDeployment annotations of an
// autoscaled pool: its bounds, its provision time and, when the pool is
// sized by resources, the capacity of one worker so that the autoscaler can
// scale the pool up from zero (it has no Node to look at then). A pool sized
// by an instance type gets no capacity annotations: the function does not
// read VirtualMachineClusterInstancetypes yet.
//
// The chart writes the allocatable capacity, the size less the kubelet's
// reservations (nodegroup.yaml:498-514); this pool reserves nothing yet, so
// the capacity is the VM's size. Units follow the chart: memory in whole Mi,
// CPU in millicores.
func autoscalerAnnotations(sc scaling, s shape) map[string]string {
	if !sc.Autoscaled {
		return nil
	}
	a := make(map[string]string, autoscalerAnnotationsCount)
	a[AnnAutoscalerMinSize] = strconv.Itoa(int(sc.Min))
	a[AnnAutoscalerMaxSize] = strconv.Itoa(int(sc.Max))
	a[AnnMaxNodeProvisionTime] = sc.ProvisionTime
	if s.InstanceType == "" {
		if s.Memory != nil {
			a[AnnCapacityMemory] = fmt.Sprintf("%dMi", s.Memory.Value()/bytesPerMi)
		}
		if s.Cores > 0 {
			a[AnnCapacityCPU] = fmt.Sprintf("%dm", int64(s.Cores)*millicoresPerCore)
		}
	}
	return a
}

// applyScaling writes the pool's scaling onto its MachineDeployment. An
// autoscaled deployment carries no spec.replicas at all: the function's
// server-side apply then owns no replica count, so the one the autoscaler
// writes survives every reconcile, and Cluster API's defaulting webhook
// seeds a new deployment from the min-size annotation (the chart's comment at
// nodegroup.yaml:517-539 explains the same choice for Helm).
func applyScaling(md *clusterv1.MachineDeployment, sc scaling, s shape) {
	for k, v := range autoscalerAnnotations(sc, s) {
		md.Annotations[k] = v
	}
	if sc.Autoscaled {
		md.Spec.Replicas = nil
	}
	surge, unavailable := sc.MaxSurge, sc.MaxUnavailable
	md.Spec.Strategy = &clusterv1.MachineDeploymentStrategy{
		Type:          rollingUpdate,
		RollingUpdate: &clusterv1.MachineRollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable},
	}
}

// desiredReplicas is the worker count the pool reports: the fixed count, or
// for an autoscaled pool what the autoscaler last set on the observed
// MachineDeployment (its floor before there is one).
func (pl plan) desiredReplicas() int32 {
	if !pl.Shape.Scaling.Autoscaled {
		return pl.Shape.Replicas
	}
	if md := pl.Observed.Deployment; md != nil && md.Spec.Replicas != nil {
		return *md.Spec.Replicas
	}
	return pl.Shape.Scaling.Min
}
