package render

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; CAPI v1.11 still serves it.

	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/poolspec"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// Deployment builds the MachineDeployment that points at both templates,
// from the shape the clone budget bounded (decide.BudgetPlan.Bounded) and
// one worker's capacity, which the autoscaler builds a node from. The
// deployment-name label is what the pool's MachineSets are read back by.
func Deployment(p pool.Pool, s pool.Shape, machineTemplate, bootstrapTemplate string, capacity clusterapi.Capacity) *clusterv1.MachineDeployment {
	return clusterapi.MachineDeployment(clusterapi.Deployment{
		Meta: deploymentMeta(p), Cluster: p.Cluster, Selector: machineSelector(p),
		MachineLabels: MachineLabels(nil, s),
		Replicas:      s.Replicas, Scaling: s.Scaling, Capacity: capacity, Version: s.MachineVersion,
		Bootstrap:      corev1.ObjectReference{APIVersion: talosconfig.APIVersion, Kind: talosconfig.KindTalosConfigTemplate, Name: bootstrapTemplate, Namespace: p.Namespace},
		Infrastructure: corev1.ObjectReference{APIVersion: pool.InfraAPIVersion, Kind: pool.KindKubevirtMachineTmpl, Name: machineTemplate, Namespace: p.Namespace},
	})
}

// HealthCheck builds the pool's MachineHealthCheck, which
// watches the Machines of its MachineDeployment.
func HealthCheck(p pool.Pool, hc poolspec.HealthCheck) *clusterv1.MachineHealthCheck {
	return clusterapi.MachineHealthCheck(deploymentMeta(p), p.Cluster, machineSelector(p), hc)
}

// deploymentMeta is the identity of the pool's per-pool Cluster API objects
// (the MachineDeployment and the MachineHealthCheck): named after the
// deployment, labelled with the cluster and the pool.
func deploymentMeta(p pool.Pool) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:        p.DeploymentName(),
		Namespace:   p.Namespace,
		Labels:      map[string]string{clusterapi.LabelClusterName: p.Cluster, labels.Pool: p.Hash(), labels.ManagedBy: labels.ManagedByValue},
		Annotations: map[string]string{labels.AnnPool: p.Ref()},
	}
}

// machineSelector selects the pool's Machines by the labels its
// MachineDeployment gives them.
func machineSelector(p pool.Pool) map[string]string {
	return map[string]string{clusterapi.LabelClusterName: p.Cluster, clusterapi.LabelDeploymentName: p.DeploymentName()}
}
