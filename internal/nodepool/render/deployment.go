package render

import (
	corev1 "k8s.io/api/core/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; CAPI v1.11 still serves it.

	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/poolspec"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// RenderMachineDeployment builds the MachineDeployment that points at both
// templates. The deployment-name label is what the pool's MachineSets are
// read back by.
func RenderMachineDeployment(p pool.Pool, s pool.Shape, machineTemplate, bootstrapTemplate string) *clusterv1.MachineDeployment {
	return clusterapi.MachineDeployment(clusterapi.Deployment{
		Meta: deploymentMeta(p), Cluster: p.Cluster, Selector: machineSelector(p),
		Replicas: s.Replicas, Version: s.MachineVersion,
		Bootstrap:      corev1.ObjectReference{APIVersion: talosconfig.APIVersion, Kind: talosconfig.KindTalosConfigTemplate, Name: bootstrapTemplate, Namespace: p.Namespace},
		Infrastructure: corev1.ObjectReference{APIVersion: pool.InfraAPIVersion, Kind: pool.KindKubevirtMachineTmpl, Name: machineTemplate, Namespace: p.Namespace},
	})
}

// RenderMachineHealthCheck builds the pool's MachineHealthCheck, which
// watches the Machines of its MachineDeployment.
func RenderMachineHealthCheck(p pool.Pool, hc poolspec.HealthCheck) *clusterv1.MachineHealthCheck {
	return clusterapi.MachineHealthCheck(deploymentMeta(p), p.Cluster, machineSelector(p), hc)
}
