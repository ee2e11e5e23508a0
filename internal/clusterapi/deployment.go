package clusterapi

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; contract.go converts to v1beta2 when asked.

	"github.com/cozystack/function-worker-image/internal/poolspec"
)

// Deployment is what a pool's MachineDeployment is built from.
type Deployment struct {
	Meta    metav1.ObjectMeta
	Cluster string
	// Selector selects the deployment's Machines; each Machine carries it
	// as its labels.
	Selector map[string]string
	// MachineLabels are the Machines' labels beside the selector's: Cluster
	// API propagates them to the Machines in place.
	MachineLabels map[string]string
	// Replicas is a fixed pool's count; an autoscaled pool's is the
	// autoscaler's (Scaling).
	Replicas int32
	// Scaling is the pool's scaling and rollout, and Capacity one worker's,
	// which the autoscaler builds a node from (autoscaling.go).
	Scaling  poolspec.Scaling
	Capacity Capacity
	// Version is the Kubernetes release of the Machines.
	Version string
	// Bootstrap and Infrastructure are the templates every Machine is
	// stamped from.
	Bootstrap, Infrastructure corev1.ObjectReference
}

// MachineDeployment builds the MachineDeployment that points at both
// templates, each field written once. An autoscaled deployment carries no
// spec.replicas at all: the function's server-side apply then owns no
// replica count, so the one the autoscaler writes survives every
// reconcile, and Cluster API's defaulting webhook seeds a new deployment
// from the min-size annotation (the chart's comment at
// nodegroup.yaml:517-539 explains the same choice for Helm).
func MachineDeployment(d Deployment) *clusterv1.MachineDeployment {
	version, bootstrap := d.Version, d.Bootstrap
	var replicas *int32
	if !d.Scaling.Autoscaled {
		replicas = &d.Replicas
	}
	meta := d.Meta
	if a := autoscalerAnnotations(d.Scaling, d.Capacity); len(a) > 0 {
		meta.Annotations = maps.Clone(meta.Annotations)
		if meta.Annotations == nil {
			meta.Annotations = make(map[string]string, len(a))
		}
		maps.Copy(meta.Annotations, a)
	}
	machineLabels := cloneOrEmpty(d.Selector)
	maps.Copy(machineLabels, d.MachineLabels)
	surge, unavailable := d.Scaling.MaxSurge, d.Scaling.MaxUnavailable
	return &clusterv1.MachineDeployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: V1Beta1APIVersion, Kind: KindMachineDeployment},
		ObjectMeta: meta,
		Spec: clusterv1.MachineDeploymentSpec{
			ClusterName: d.Cluster,
			Replicas:    replicas,
			Selector:    metav1.LabelSelector{MatchLabels: d.Selector},
			Strategy: &clusterv1.MachineDeploymentStrategy{
				Type:          rollingUpdate,
				RollingUpdate: &clusterv1.MachineRollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable},
			},
			Template: clusterv1.MachineTemplateSpec{
				ObjectMeta: clusterv1.ObjectMeta{Labels: machineLabels},
				Spec: clusterv1.MachineSpec{
					ClusterName:       d.Cluster,
					Bootstrap:         clusterv1.Bootstrap{ConfigRef: &bootstrap},
					InfrastructureRef: d.Infrastructure,
					Version:           &version,
				},
			},
		},
	}
}

// cloneOrEmpty is a copy of m, empty rather than nil.
func cloneOrEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return maps.Clone(m)
}
