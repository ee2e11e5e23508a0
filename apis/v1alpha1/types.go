// Package v1alpha1 holds the Go mirror of the composite resource APIs this
// function serves (group workerimage.cozystack.io). The XRDs under package/ are
// the schema users see; these types are how the function reads a composite's
// spec once, at the edge, so that decisions never index map[string]any.
package v1alpha1

// Group is the API group of the three composites.
const Group = "workerimage.cozystack.io"

// Version is the served version of the three composites.
const Version = "v1alpha1"

// Kinds of the composites. The function infers its mode from these when its
// Input names none.
const (
	KindWorkerImageCatalog = "XWorkerImageCatalog"
	KindTenantCluster      = "XTenantCluster"
	KindNodePool           = "XNodePool"
)

// WorkerImageCatalogSpec is the spec of the cluster-scoped XWorkerImageCatalog:
// the operator-curated list of golden Talos images.
type WorkerImageCatalogSpec struct {
	// GoldenNamespace is where the golden DataVolumes live. Default cozy-public.
	GoldenNamespace string `json:"goldenNamespace,omitempty"`
	// ImageFactoryURL is the default Talos Image Factory base URL.
	ImageFactoryURL string `json:"imageFactoryURL,omitempty"`
	// Storage is the default golden size (a quantity). Default 6Gi.
	Storage string `json:"storage,omitempty"`
	// StorageClass is the default golden StorageClass. Empty leaves it to CDI.
	StorageClass string `json:"storageClass,omitempty"`
	// Images are the golden images to keep.
	Images []CatalogImage `json:"images,omitempty"`
}

// CatalogImage is one golden image of the catalog.
type CatalogImage struct {
	SchematicID     string `json:"schematicID,omitempty"`
	Version         string `json:"version,omitempty"`
	Storage         string `json:"storage,omitempty"`
	StorageClass    string `json:"storageClass,omitempty"`
	ImageFactoryURL string `json:"imageFactoryURL,omitempty"`
}

// Talos holds the Talos defaults a tenant cluster hands to its pools.
// InstallerRepository empty means the Image Factory installer of the pool's
// factory and disk platform (talosimage.DefaultInstallerRepository).
type Talos struct {
	Version             string                    `json:"version,omitempty"`
	SchematicID         string                    `json:"schematicID,omitempty"`
	ImageFactoryURL     string                    `json:"imageFactoryURL,omitempty"`
	InstallerRepository string                    `json:"installerRepository,omitempty"`
	RegistryMirrors     map[string]RegistryMirror `json:"registryMirrors,omitempty"`
}

// RegistryMirror is one mirrored registry: a machine.registries.mirrors
// entry below Talos 1.12, a RegistryMirrorConfig document from 1.12.
type RegistryMirror struct {
	Endpoints    []string `json:"endpoints,omitempty"`
	SkipFallback bool     `json:"skipFallback,omitempty"`
}

// OSImage selects where a pool's boot disk comes from. At most one member may
// be set; presence, not content, selects: builtin: {} clones the default golden.
type OSImage struct {
	Builtin *BuiltinImage `json:"builtin,omitempty"`
	Factory *FactoryImage `json:"factory,omitempty"`
}

// BuiltinImage clones the golden of the catalog for (schematicID, version).
type BuiltinImage struct {
	SchematicID string `json:"schematicID,omitempty"`
	Version     string `json:"version,omitempty"`
}

// FactoryImage imports the boot disk over HTTP from an Image Factory.
type FactoryImage struct {
	SchematicID     string `json:"schematicID,omitempty"`
	Version         string `json:"version,omitempty"`
	ImageFactoryURL string `json:"imageFactoryURL,omitempty"`
}

// Resources sizes a worker VM when no instance type is given.
type Resources struct {
	CPU    string `json:"cpu,omitempty"`
	Memory string `json:"memory,omitempty"`
}

// PoolShape is what a tenant cluster says about each of its pools, and what a
// node pool inherits from it.
type PoolShape struct {
	Replicas     *int32     `json:"replicas,omitempty"`
	InstanceType string     `json:"instanceType,omitempty"`
	Resources    *Resources `json:"resources,omitempty"`
	DiskSize     string     `json:"diskSize,omitempty"`
	StorageClass string     `json:"storageClass,omitempty"`
	OSImage      *OSImage   `json:"osImage,omitempty"`
}

// TenantClusterSpec is the spec of XTenantCluster.
type TenantClusterSpec struct {
	// Version is the Kubernetes minor, e.g. v1.35.
	Version         string               `json:"version,omitempty"`
	Talos           Talos                `json:"talos,omitempty"`
	StorageClass    string               `json:"storageClass,omitempty"`
	GoldenNamespace string               `json:"goldenNamespace,omitempty"`
	NodePools       map[string]PoolShape `json:"nodePools,omitempty"`
}

// NodePoolSpec is the spec of XNodePool.
type NodePoolSpec struct {
	PoolShape `json:",inline"`

	// ClusterName is the Cluster API cluster the pool joins.
	ClusterName string `json:"clusterName,omitempty"`
	// PoolName names the pool inside its cluster. Default: the composite's
	// name without the "<clusterName>-" prefix.
	PoolName string `json:"poolName,omitempty"`
	// Version is the Kubernetes minor, e.g. v1.35.
	Version         string `json:"version,omitempty"`
	Talos           Talos  `json:"talos,omitempty"`
	GoldenNamespace string `json:"goldenNamespace,omitempty"`
}

// Source types of a node pool's boot disk.
const (
	SourceTypeClone = "Clone"
	SourceTypeHTTP  = "HTTP"
)

// Gate states of a node pool.
const (
	GateOpen = "Open"
	GateHeld = "Held"
)

// NodePoolStatus is the status node-pool mode writes on an XNodePool, and the
// contract tenant-cluster mode reads back. Pointers tell "not reported" from
// a zero value on the reading side.
type NodePoolStatus struct {
	Image             *NodePoolImage `json:"image,omitempty"`
	Template          string         `json:"template"`
	BootstrapTemplate string         `json:"bootstrapTemplate"`
	Gate              *Gate          `json:"gate,omitempty"`
	Replicas          *int64         `json:"replicas,omitempty"`
	ReadyReplicas     *int64         `json:"readyReplicas,omitempty"`
}

// NodePoolImage is the image a pool resolved to.
type NodePoolImage struct {
	SchematicID string `json:"schematicID,omitempty"`
	Version     string `json:"version,omitempty"`
	// SourceType is Clone (a CDI clone of the golden) or HTTP (an import).
	SourceType string `json:"sourceType,omitempty"`
	// Golden is "<namespace>/<name>" of the golden a Clone pool clones.
	Golden string `json:"golden,omitempty"`
	// ImageURL is what an HTTP pool imports.
	ImageURL string `json:"imageURL,omitempty"`
	// StorageClass is the class the pool's disks are provisioned on.
	StorageClass string `json:"storageClass,omitempty"`
}

// Gate says whether node-pool mode is holding a change back, and why.
type Gate struct {
	State   string `json:"state,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}
