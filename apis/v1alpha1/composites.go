package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The composites. Each is a spec and a status under the object metadata, so
// that controller-gen generates a CRD per kind; hack/genxrd turns those into
// the Crossplane XRDs (it drops apiVersion, kind and metadata, which Crossplane
// adds itself). The function never decodes these: it reads spec and status
// into the types below them. Names, scope, categories and printer columns are
// the XRDs'; the default Composition of each XRD is the one of the same name.

// Cluster-scoped (Crossplane v2 scope Cluster): the catalog composes golden
// DataVolumes into the golden namespace and the RBAC that lets tenant VMs
// clone them, so it must compose into a namespace other than its own and
// compose cluster-scoped objects.
// +kubebuilder:resource:scope=Cluster,categories=crossplane;workerimage
// +kubebuilder:printcolumn:name="NAMESPACE",type=string,JSONPath=`.spec.goldenNamespace`
// +kubebuilder:printcolumn:name="GOLDENS",type=string,JSONPath=`.status.conditions[?(@.type=='GoldenImagesReady')].reason`
// +kubebuilder:printcolumn:name="RETIRING",type=string,JSONPath=`.status.conditions[?(@.type=='GoldenImagesRetiring')].status`,priority=1

// XWorkerImageCatalog is the platform's list of golden Talos worker images.
// Each entry becomes one golden DataVolume, talos-worker-<schematicID>-<version>,
// imported once from the Image Factory into the golden namespace; node pools
// with osImage.builtin clone their system disks from it. A golden that a
// pool's template still clones from is kept when it leaves the list, and
// the pool's Crossplane Usages make every other deletion of it (of this
// composite, kubectl delete) wait until no template clones from it.
type XWorkerImageCatalog struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// The golden images and their defaults.
	Spec WorkerImageCatalogSpec `json:"spec,omitempty"`
	// The observed state of the goldens, written by function-worker-image.
	Status WorkerImageCatalogStatus `json:"status,omitempty"`
}

// Namespaced (Crossplane v2): a tenant cluster composes one XNodePool per
// entry of nodePools, in its own namespace, with the cluster's defaults
// filled in.
// +kubebuilder:resource:scope=Namespaced,categories=crossplane;workerimage
// +kubebuilder:printcolumn:name="KUBERNETES",type=string,JSONPath=`.spec.version`
// +kubebuilder:printcolumn:name="TALOS",type=string,JSONPath=`.spec.talos.version`
// +kubebuilder:printcolumn:name="POOLS",type=string,JSONPath=`.status.conditions[?(@.type=='NodePoolsReady')].reason`

// XTenantCluster is the worker side of a Talos tenant cluster on KubeVirt:
// the Kubernetes minor, the Talos image defaults and the node pools. It
// checks the Talos/Kubernetes support matrix and composes one XNodePool
// per node pool.
type XTenantCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// The cluster's defaults and node pools.
	Spec TenantClusterSpec `json:"spec,omitempty"`
	// The observed state of the cluster's pools, written by function-worker-image.
	Status TenantClusterStatus `json:"status,omitempty"`
}

// Namespaced (Crossplane v2): a node pool composes only into its own
// namespace (KubevirtMachineTemplate, TalosConfigTemplate, MachineDeployment).
// +kubebuilder:resource:scope=Namespaced,categories=crossplane;workerimage
// +kubebuilder:printcolumn:name="CLUSTER",type=string,JSONPath=`.spec.clusterName`
// +kubebuilder:printcolumn:name="SOURCE",type=string,JSONPath=`.status.image.sourceType`
// +kubebuilder:printcolumn:name="TALOS",type=string,JSONPath=`.status.image.version`
// +kubebuilder:printcolumn:name="REPLICAS",type=integer,JSONPath=`.status.replicas`
// +kubebuilder:printcolumn:name="READY-REPLICAS",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="GATE",type=string,JSONPath=`.status.gate.state`
// +kubebuilder:printcolumn:name="REASON",type=string,JSONPath=`.status.gate.reason`
// +kubebuilder:printcolumn:name="SCHEMATIC",type=string,JSONPath=`.status.image.schematicID`,priority=1
// +kubebuilder:printcolumn:name="TEMPLATE",type=string,JSONPath=`.status.template`,priority=1

// XNodePool is one worker pool of a Talos tenant cluster on KubeVirt. It
// composes a KubevirtMachineTemplate whose system disk is cloned from a
// golden image of the catalog (osImage.builtin) or imported over HTTP from
// an Image Factory (osImage.factory or an empty osImage), the Talos
// bootstrap template and the MachineDeployment that rolls the workers.
type XNodePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// The desired shape and image of the pool.
	Spec NodePoolSpec `json:"spec,omitempty"`
	// The observed state of the pool, written by function-worker-image.
	Status NodePoolStatus `json:"status,omitempty"`
}
