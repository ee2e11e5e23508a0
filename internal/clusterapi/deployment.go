package clusterapi

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; contract.go converts to v1beta2 when asked.
)

// Deployment is what a pool's MachineDeployment is built from.
type Deployment struct {
	Meta    metav1.ObjectMeta
	Cluster string
	// Selector selects the deployment's Machines; each Machine carries it
	// as its labels.
	Selector map[string]string
	Replicas int32
	// Version is the Kubernetes release of the Machines.
	Version string
	// Bootstrap and Infrastructure are the templates every Machine is
	// stamped from.
	Bootstrap, Infrastructure corev1.ObjectReference
}

// MachineDeployment builds the MachineDeployment that points at both
// templates.
func MachineDeployment(d Deployment) *clusterv1.MachineDeployment {
	replicas, version, bootstrap := d.Replicas, d.Version, d.Bootstrap
	return &clusterv1.MachineDeployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: V1Beta1APIVersion, Kind: KindMachineDeployment},
		ObjectMeta: d.Meta,
		Spec: clusterv1.MachineDeploymentSpec{
			ClusterName: d.Cluster,
			Replicas:    &replicas,
			Selector:    metav1.LabelSelector{MatchLabels: d.Selector},
			Template: clusterv1.MachineTemplateSpec{
				ObjectMeta: clusterv1.ObjectMeta{Labels: cloneOrEmpty(d.Selector)},
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
