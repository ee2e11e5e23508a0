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
	// GoldenNamespace is the namespace that holds the golden DataVolumes.
	// +kubebuilder:default="cozy-public"
	// +kubebuilder:validation:MaxLength=63
	GoldenNamespace DNSLabel `json:"goldenNamespace,omitempty"`
	// ImageFactoryURL is the default Talos Image Factory base URL, http(s) with no query or fragment.
	// +kubebuilder:default="https://factory.talos.dev"
	ImageFactoryURL URL `json:"imageFactoryURL,omitempty"`
	// Storage is the default size of a golden, a quantity no smaller than
	// the raw disk image (1246Mi).
	// +kubebuilder:default="6Gi"
	Storage Quantity `json:"storage,omitempty"`
	// StorageClass is the default class of the goldens. Empty leaves it
	// to CDI (the default class). Pools that clone a golden must use the
	// same class.
	StorageClass DNSSubdomain `json:"storageClass,omitempty"`
	// Images are the golden images to keep, one per (schematicID,
	// version). A golden's URL, size and class cannot change (a
	// DataVolume spec is immutable): add a new entry, move the pools,
	// then remove the old one.
	// +kubebuilder:validation:MaxItems=256
	// +listType=map
	// +listMapKey=schematicID
	// +listMapKey=version
	Images []CatalogImage `json:"images,omitempty"`
}

// CatalogImage is one golden image of the catalog. Kept apart from the
// declaration: the list items have no description of their own.

type CatalogImage struct {
	// SchematicID is the Image Factory schematic (64 lowercase hex characters for a real schematic).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	SchematicID DNSLabel `json:"schematicID,omitempty"`
	// Version is the Talos release, vMAJOR.MINOR.PATCH[-pre].
	// +required
	Version TalosVersion `json:"version,omitempty"`
	// Storage overrides spec.storage for this golden.
	Storage Quantity `json:"storage,omitempty"`
	// StorageClass overrides spec.storageClass for this golden.
	StorageClass DNSSubdomain `json:"storageClass,omitempty"`
	// ImageFactoryURL overrides spec.imageFactoryURL for this golden.
	ImageFactoryURL URL `json:"imageFactoryURL,omitempty"`
}

// Talos holds the Talos defaults a tenant cluster hands to its pools.
// InstallerRepository empty means the Image Factory installer of the pool's
// factory and disk platform (talosimage.DefaultInstallerRepository).
type Talos struct {
	// Version is the default Talos release, vMAJOR.MINOR.PATCH[-pre].
	// +kubebuilder:default="v1.13.6"
	Version TalosVersion `json:"version,omitempty"`
	// SchematicID is the default Image Factory schematic (64 lowercase
	// hex characters for a real schematic).
	// +kubebuilder:default="ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"
	// +kubebuilder:validation:MaxLength=64
	SchematicID DNSLabel `json:"schematicID,omitempty"`
	// ImageFactoryURL is the default Talos Image Factory base URL, http(s) with no query or fragment.
	// +kubebuilder:default="https://factory.talos.dev"
	ImageFactoryURL URL `json:"imageFactoryURL,omitempty"`
	// InstallerRepository is the repository of the in-guest installer
	// image; the installer is <installerRepository>/<schematicID>:<version>
	// of the resolved image. Leave it out to get the Image Factory installer
	// that matches the disk: <factory host>/<platform>-installer (e.g.
	// factory.talos.dev/openstack-installer), plain installer for metal or
	// Talos before 1.10. No schema default: factory.talos.dev/installer is
	// the metal installer, and from Talos 1.12 upgrading an openstack worker
	// with it makes the worker metal, which stops reading its config drive.
	InstallerRepository Repository `json:"installerRepository,omitempty"`
	// RegistryMirrors are Talos registry mirrors, keyed by registry host
	// (host[:port], or * for every registry): machine.registries.mirrors
	// below Talos 1.12, one RegistryMirrorConfig document per registry from
	// 1.12 (decided on the version the pool resolves to).
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k == '*' || k.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(:[0-9]+)?$'))`,message="registryMirrors keys must be a registry host (host or host:port, lowercase) or *"
	RegistryMirrors map[string]RegistryMirror `json:"registryMirrors,omitempty"`
}

// RegistryMirror is one mirrored registry: a machine.registries.mirrors
// entry below Talos 1.12, a RegistryMirrorConfig document from 1.12. Kept
// apart from the declaration: the map values have no description of their own.

type RegistryMirror struct {
	// Endpoints are the mirror URLs, tried in order.
	// +required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Endpoints []URL `json:"endpoints,omitempty"`
	// SkipFallback stops Talos from falling back to the upstream registry when every endpoint fails.
	SkipFallback bool `json:"skipFallback,omitempty"`
}

// OSImage selects where a pool's boot disk comes from. At most one member may
// be set; presence, not content, selects: builtin: {} clones the default golden.
// +kubebuilder:validation:XValidation:rule=`!(has(self.builtin) && has(self.factory))`,message="osImage: set at most one of builtin (clone the catalog's golden) or factory (import over HTTP from the Image Factory)"
type OSImage struct {
	// Builtin clones the catalog's golden for (schematicID, version);
	// missing fields come from talos.
	Builtin *BuiltinImage `json:"builtin,omitempty"`
	// Factory imports each worker's disk over HTTP from an Image
	// Factory; missing fields come from talos.
	Factory *FactoryImage `json:"factory,omitempty"`
}

// BuiltinImage clones the golden of the catalog for (schematicID, version).
type BuiltinImage struct {
	// SchematicID of the golden. Default talos.schematicID.
	// +kubebuilder:validation:MaxLength=64
	SchematicID DNSLabel `json:"schematicID,omitempty"`
	// Version (Talos release) of the golden. Default talos.version.
	Version TalosVersion `json:"version,omitempty"`
}

// FactoryImage imports the boot disk over HTTP from an Image Factory.
type FactoryImage struct {
	// SchematicID of the image. Default talos.schematicID.
	// +kubebuilder:validation:MaxLength=64
	SchematicID DNSLabel `json:"schematicID,omitempty"`
	// Version (Talos release) of the image. Default talos.version.
	Version TalosVersion `json:"version,omitempty"`
	// ImageFactoryURL to import from. Default talos.imageFactoryURL.
	ImageFactoryURL URL `json:"imageFactoryURL,omitempty"`
}

// Resources sizes a worker VM when no instance type is given.
type Resources struct {
	// CPU is the number of vCPUs as a quantity, e.g. 2 or 1500m.
	CPU CPUQuantity `json:"cpu,omitempty"`
	// Memory is the guest memory as a quantity, e.g. 4Gi.
	Memory Quantity `json:"memory,omitempty"`
}

// PoolShape is what a tenant cluster says about each of its pools, and what a
// node pool inherits from it (NodePoolSpec inlines it, rules included). The
// doc comment below is the description of each spec.nodePools entry.

// A node pool.
// +kubebuilder:validation:XValidation:rule=`!(has(self.instanceType) && has(self.resources))`,message="set either instanceType (a KubeVirt instance type) or resources (cpu and memory), not both: an instance type already fixes the VM's CPU and memory"
// +kubebuilder:validation:XValidation:rule=`has(self.storageClass) || !has(oldSelf.storageClass)`,message="storageClass cannot be removed once set: the workers' disks live on that class; create a new pool to move to another class"
type PoolShape struct {
	// Replicas is the number of workers.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Replicas *int32 `json:"replicas,omitempty"`
	// InstanceType is the KubeVirt instance type of the workers. When
	// neither instanceType nor resources is set the function uses
	// u1.medium.
	InstanceType DNSSubdomain `json:"instanceType,omitempty"`
	// Resources size the workers when no instanceType is given.
	Resources *Resources `json:"resources,omitempty"`
	// DiskSize is the size of each worker's system disk, a quantity no
	// smaller than the golden it clones.
	// +kubebuilder:default="20Gi"
	DiskSize Quantity `json:"diskSize,omitempty"`
	// StorageClass of the workers' system disks. Empty: the class of the
	// pool's already-cloned disks, else today's default class. A clone
	// must stay on the golden's class. Immutable once set.
	// +kubebuilder:validation:XValidation:rule=`self == oldSelf`,message="storageClass is immutable: the workers' disks live on the old class and a clone cannot cross classes; create a new pool on the new class and move the workload"
	StorageClass DNSSubdomain `json:"storageClass,omitempty"`
	// OSImage selects where the workers' boot disk comes from: builtin
	// clones the catalog's golden, factory imports over HTTP, and an
	// empty osImage ({}) imports over HTTP with the talos defaults. At
	// most one member may be set.
	// +kubebuilder:default={builtin: {}}
	OSImage *OSImage `json:"osImage,omitempty"`

	// --- Bootstrap (issue 12: Talos machine config for the cluster's
	// control plane) ---

	// Bootstrap says where the workers' Talos machine config comes from,
	// which depends on the cluster's control plane. It is part of the
	// pool's shape so that a tenant cluster's pools carry it too.
	// +kubebuilder:default={}
	Bootstrap *Bootstrap `json:"bootstrap,omitempty"`
}

// TenantClusterSpec is the spec of XTenantCluster.
// +kubebuilder:validation:XValidation:rule=`has(self.storageClass) || !has(oldSelf.storageClass)`,message="storageClass cannot be removed once set: pools that inherit it keep their disks on that class; set storageClass on each new pool instead"
type TenantClusterSpec struct {
	// Version is the Kubernetes minor of the cluster, e.g. v1.35. It is
	// checked against each pool's resolved Talos version (the support
	// matrix, which the function's Input can extend), so new minors need
	// no schema change.
	// +kubebuilder:default="v1.35"
	Version KubernetesMinor `json:"version,omitempty"`
	// Talos holds the cluster's Talos defaults. osImage members that
	// leave out schematicID, version or imageFactoryURL take them from
	// here.
	// +kubebuilder:default={}
	Talos Talos `json:"talos,omitempty"`
	// StorageClass is the default class of the pools' system disks;
	// a pool's own storageClass wins. Empty: each pool's already-cloned
	// disks' class, else today's default class. Immutable once set.
	// +kubebuilder:validation:XValidation:rule=`self == oldSelf`,message="storageClass is immutable: the pools that inherit it keep their disks on the old class and a clone cannot cross classes; set storageClass on a new pool instead"
	StorageClass DNSSubdomain `json:"storageClass,omitempty"`
	// GoldenNamespace is the namespace of the catalog's golden DataVolumes that builtin images clone from.
	// +kubebuilder:default="cozy-public"
	// +kubebuilder:validation:MaxLength=63
	GoldenNamespace DNSLabel `json:"goldenNamespace,omitempty"`
	// NodePools maps a pool name (a DNS label) to the pool's shape and
	// image. Each pool becomes an XNodePool named <cluster>-<pool>.
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule=`self.all(k, size(k) <= 40 && k.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'))`,message="nodePools keys must be DNS labels (lowercase letters, digits and -) of at most 40 characters: they name the pool's templates"
	NodePools map[string]PoolShape `json:"nodePools,omitempty"`
}

// NodePoolSpec is the spec of XNodePool: a pool shape (with its rules) plus
// where the pool belongs.
type NodePoolSpec struct {
	PoolShape `json:",inline"`

	// ClusterName is the Cluster API Cluster the pool joins. Immutable.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule=`self == oldSelf`,message="clusterName is immutable: a pool cannot move to another cluster; create a new pool in the other cluster instead"
	ClusterName DNSLabel `json:"clusterName,omitempty"`
	// PoolName names the pool inside its cluster; it is part of every
	// composed template's name. Default: the composite's name without
	// the "<clusterName>-" prefix. Immutable.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule=`self == oldSelf`,message="poolName is immutable: it names the pool's templates and MachineDeployment; create a new pool instead"
	PoolName DNSLabel `json:"poolName,omitempty"`
	// Version is the Kubernetes minor of the cluster, e.g. v1.35. It is
	// checked against the Talos version the pool resolves to (the support
	// matrix, which the function's Input can extend), so new minors need
	// no schema change.
	// +kubebuilder:default="v1.35"
	Version KubernetesMinor `json:"version,omitempty"`
	// Talos holds the cluster's Talos defaults. osImage members that
	// leave out schematicID, version or imageFactoryURL take them from
	// here.
	// +kubebuilder:default={}
	Talos Talos `json:"talos,omitempty"`
	// GoldenNamespace is the namespace of the catalog's golden DataVolumes that builtin images clone from.
	// +kubebuilder:default="cozy-public"
	// +kubebuilder:validation:MaxLength=63
	GoldenNamespace DNSLabel `json:"goldenNamespace,omitempty"`
}

// Bootstrap modes of a node pool.
const (
	// BootstrapGenerate has CABPT generate the worker config from the Talos
	// secrets a TalosControlPlane (CACPPT) keeps for the cluster.
	BootstrapGenerate = "Generate"
	// BootstrapJoin renders the complete worker config from the facts the
	// cluster's control plane (Kamaji) publishes in its Secrets and Services.
	BootstrapJoin = "Join"
)

// Bootstrap is a pool's Talos bootstrap mode.
type Bootstrap struct {
	// Mode is Generate (default) for a cluster whose control plane is a
	// TalosControlPlane: CABPT generates the worker config (generateType:
	// worker) from the cluster's Talos secrets. Join is for a control plane
	// that holds no Talos secrets for CABPT, such as Kamaji: the function
	// builds the complete worker config (generateType: none) from the
	// Secrets and Services the control plane publishes (named in the
	// function's Input), holds the pool while one is missing, and holds a
	// pool whose Kubernetes minor is ahead of its control plane's.
	// +kubebuilder:default=Generate
	// +kubebuilder:validation:Enum=Generate;Join
	Mode string `json:"mode,omitempty"`
	// FactsRevision, in the Join mode, is bumped by the platform to roll
	// the pool onto the cluster's current facts after it rotated a Secret
	// or re-addressed a Service. A change of facts alone never rolls the
	// workers: the pool keeps its running config and reports the
	// JoinFactsCurrent condition False, naming what changed.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000000
	FactsRevision int64 `json:"factsRevision,omitempty"`
}

// BootstrapModeOf is a spec's bootstrap mode, Generate when it names none.
func BootstrapModeOf(b *Bootstrap) string {
	if b == nil || b.Mode == "" {
		return BootstrapGenerate
	}
	return b.Mode
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
