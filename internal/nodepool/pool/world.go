package pool

import (
	"github.com/cozystack/function-worker-image/internal/observed"
)

// KubeVirt template and RBAC identifiers; the Talos and Cluster API ones
// are talosconfig's and clusterapi's.
const (
	InfraAPIVersion         = observed.InfraAPIVersion
	KindKubevirtMachineTmpl = observed.KindKubevirtMachineTemplate
	RbacAPIVersion          = "rbac.authorization.k8s.io/v1"
	KindRoleBinding         = "RoleBinding"
	KindClusterRole         = "ClusterRole"
	KindCSIStorageCapacity  = "CSIStorageCapacity"
)
