package harness

import "k8s.io/apimachinery/pkg/runtime/schema"

func gvk(group, version, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
}

// Kinds the suite reads and writes.
var (
	CRD              = gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition")
	Namespace        = gvk("", "v1", "Namespace")
	Event            = gvk("", "v1", "Event")
	ConfigMap        = gvk("", "v1", "ConfigMap")
	PVC              = gvk("", "v1", "PersistentVolumeClaim")
	Service          = gvk("", "v1", "Service")
	PV               = gvk("", "v1", "PersistentVolume")
	StorageClass     = gvk("storage.k8s.io", "v1", "StorageClass")
	Role             = gvk("rbac.authorization.k8s.io", "v1", "Role")
	RoleBinding      = gvk("rbac.authorization.k8s.io", "v1", "RoleBinding")
	ClusterRole      = gvk("rbac.authorization.k8s.io", "v1", "ClusterRole")
	XRD              = gvk("apiextensions.crossplane.io", "v2", "CompositeResourceDefinition")
	Composition      = gvk("apiextensions.crossplane.io", "v1", "Composition")
	FunctionRevision = gvk("pkg.crossplane.io", "v1", "FunctionRevision")
	Usage            = gvk("protection.crossplane.io", "v1beta1", "Usage")

	ValidatingWebhookConfiguration = gvk("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration")

	DataVolume              = gvk("cdi.kubevirt.io", "v1beta1", "DataVolume")
	KubevirtMachineTemplate = gvk("infrastructure.cluster.x-k8s.io", "v1alpha1", "KubevirtMachineTemplate")
	MachineDeployment       = gvk("cluster.x-k8s.io", "v1beta1", "MachineDeployment")
	MachineSet              = gvk("cluster.x-k8s.io", "v1beta1", "MachineSet")
	MachineHealthCheck      = gvk("cluster.x-k8s.io", "v1beta1", "MachineHealthCheck")
	TalosConfigTemplate     = gvk("bootstrap.cluster.x-k8s.io", "v1alpha3", "TalosConfigTemplate")

	WorkerImageCatalog = gvk("workerimage.cozystack.io", "v1alpha1", "XWorkerImageCatalog")
	TenantCluster      = gvk("workerimage.cozystack.io", "v1alpha1", "XTenantCluster")
	NodePool           = gvk("workerimage.cozystack.io", "v1alpha1", "XNodePool")
)
