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
// +kubebuilder:validation:XValidation:rule=`!(has(self.storageClass) && has(self.storageClasses))`,message="set storageClass or storageClasses, not both: list every class in storageClasses"
type WorkerImageCatalogSpec struct {
	// GoldenNamespace is the namespace that holds the golden DataVolumes.
	// +kubebuilder:default="cozy-public"
	// +kubebuilder:validation:MaxLength=63
	GoldenNamespace DNSLabel `json:"goldenNamespace,omitempty"`
	// ImageFactoryURL is the default Talos Image Factory base URL, http(s) with no query or fragment,
	// and no dot segment (.., %2e%2e) or encoded slash (%2f) in its path.
	// +kubebuilder:default="https://factory.talos.dev"
	ImageFactoryURL URL `json:"imageFactoryURL,omitempty"`
	// Storage is the default size of a golden, a quantity no smaller than
	// the raw disk image (1246Mi).
	// +kubebuilder:default="6Gi"
	Storage Quantity `json:"storage,omitempty"`
	// StorageClass is the default class of the goldens. Empty leaves it
	// to CDI (the default class). Pools that clone a golden must use the
	// same class; for pools on several classes, use storageClasses.
	StorageClass DNSSubdomain `json:"storageClass,omitempty"`
	// StorageClasses keeps every image on each of these classes: one
	// golden per (schematicID, version, architecture, class), so a pool
	// clones the golden of its own class. Set it or storageClass, not
	// both. An existing golden keeps its name on the class it was made
	// on; a new golden on the first listed class is named as with
	// storageClass, one on another class
	// talos-worker-<schematicID>-<version>-<arch>-<10 hex of the class
	// name's SHA-256>. A golden whose class is no longer listed leaves the
	// catalog, kept while a pool still clones it.
	// +kubebuilder:validation:MaxItems=8
	// +listType=set
	StorageClasses []DNSSubdomain `json:"storageClasses,omitempty"`
	// Images are the golden images to keep, one entry per (schematicID,
	// version), one golden per architecture and StorageClass of it. A golden's URL, size and class cannot change (a
	// DataVolume spec is immutable): add a new entry, move the pools,
	// then remove the old one.
	// +kubebuilder:validation:MaxItems=256
	// +listType=map
	// +listMapKey=schematicID
	// +listMapKey=version
	Images []CatalogImage `json:"images,omitempty"`
	// ImageFactoryCA is the CA bundle (PEM certificates) CDI trusts when a
	// golden imports over HTTPS from the Image Factory or a mirror served
	// by an internal CA. Default: the function Input's
	// talos.imageFactoryCA. The catalog keeps it in the ConfigMap
	// workerimage-factory-ca-<catalog> in the golden namespace, which new
	// goldens name in source.http.certConfigMap; a rotation updates the
	// ConfigMap in place, which an importer reads on its next start, and
	// changes no golden. Private keys are refused.
	// +kubebuilder:validation:MaxLength=65536
	ImageFactoryCA string `json:"imageFactoryCA,omitempty"`
	// ImageFactoryAuth names the Secrets, in the golden namespace, that
	// authenticate new goldens' imports to an Image Factory that asks for
	// credentials (an Enterprise or self-hosted factory). The function
	// never reads them: CDI's importer does.
	ImageFactoryAuth *ImageFactoryAuth `json:"imageFactoryAuth,omitempty"`
	// Architectures are the CPU architectures of the goldens: one golden
	// per (schematicID, version, architecture), each importing
	// <platform>-<arch>.raw.xz. Default: the function Input's image.arch.
	// The golden named talos-worker-<schematicID>-<version> keeps the
	// architecture it was made with (the first listed, for a new one);
	// every other architecture's is talos-worker-<schematicID>-<version>-<arch>.
	// A golden whose architecture is no longer listed leaves the catalog.
	// +kubebuilder:validation:MaxItems=2
	// +listType=set
	Architectures []Architecture `json:"architectures,omitempty"`
}

// Architecture is a CPU architecture of a Talos disk image and a KubeVirt VM.
// +kubebuilder:validation:Enum=amd64;arm64
type Architecture = string

// ImageFactoryAuth names the Secrets CDI's importer authenticates with:
// source.http.secretRef and source.http.secretExtraHeaders of each new
// golden. A rotation keeps the Secrets' names, so it changes no golden.

type ImageFactoryAuth struct {
	// SecretRef is a Secret with the keys accessKeyId (user) and secretKey
	// (password), sent as HTTP basic authentication.
	SecretRef DNSSubdomain `json:"secretRef,omitempty"`
	// SecretExtraHeaders are Secrets each of whose values is one HTTP
	// header line sent with every request, such as
	// "Authorization: Bearer <token>".
	// +kubebuilder:validation:MaxItems=8
	// +listType=set
	SecretExtraHeaders []DNSSubdomain `json:"secretExtraHeaders,omitempty"`
}

// CatalogImage is one golden image of the catalog. Kept apart from the
// declaration: the list items have no description of their own.

// +kubebuilder:validation:XValidation:rule=`!(has(self.storageClass) && has(self.storageClasses))`,message="set storageClass or storageClasses, not both: list every class in storageClasses"
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
	// StorageClass overrides spec.storageClass and spec.storageClasses
	// for this image: its goldens live on this class alone.
	StorageClass DNSSubdomain `json:"storageClass,omitempty"`
	// StorageClasses overrides spec.storageClass and spec.storageClasses
	// for this image: a golden on each of them. Set it or storageClass,
	// not both.
	// +kubebuilder:validation:MaxItems=8
	// +listType=set
	StorageClasses []DNSSubdomain `json:"storageClasses,omitempty"`
	// ImageFactoryURL overrides spec.imageFactoryURL for this golden.
	ImageFactoryURL URL `json:"imageFactoryURL,omitempty"`
	// Checksum is the image's expected digest, sha256:<64 hex> or
	// sha512:<128 hex>, which CDI's importer verifies
	// (source.http.checksum); a mismatch fails the import for good.
	// +kubebuilder:validation:MaxLength=135
	// +kubebuilder:validation:Pattern=`^(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})$`
	Checksum string `json:"checksum,omitempty"`
	// Architectures overrides spec.architectures for this image.
	// +kubebuilder:validation:MaxItems=2
	// +listType=set
	Architectures []Architecture `json:"architectures,omitempty"`
}

// Talos holds the Talos defaults a tenant cluster hands to its pools.
// InstallerRepository empty means the Image Factory installer of the pool's
// factory and disk platform (talosimage.DefaultInstallerRepository).
type Talos struct {
	// Version is the default Talos release, vMAJOR.MINOR.PATCH[-pre].
	// +kubebuilder:default="v1.13.6"
	Version TalosVersion `json:"version,omitempty"`
	// SchematicID is the default Image Factory schematic (64 lowercase
	// hex characters for a real schematic), or a multi-segment path a
	// mirror serves (gpu/nvidia-open), which only osImage.factory can
	// import: a golden is named by a single-segment ID.
	// +kubebuilder:default="ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"
	SchematicID SchematicPath `json:"schematicID,omitempty"`
	// ImageFactoryURL is the default Talos Image Factory base URL, http(s) with no query or fragment,
	// and no dot segment (.., %2e%2e) or encoded slash (%2f) in its path.
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
	// ImageFactoryCA is the CA bundle (PEM certificates) CDI trusts when
	// this pool's worker disks import over HTTPS from its Image Factory or
	// mirror: a pool on a mirror of its own, served by an internal CA. It
	// replaces the function Input's talos.imageFactoryCA (the platform's
	// default) for the pool, in the ConfigMap <cluster>-<pool>-factory-ca its
	// HTTP disks name; a tenant cluster's applies to its pools. Private keys
	// are refused: the ConfigMap is readable by anything that reads the
	// namespace. Rotating it updates the ConfigMap and rolls no worker.
	// +kubebuilder:validation:MaxLength=65536
	ImageFactoryCA string `json:"imageFactoryCA,omitempty"`
	// RegistryMirrors are Talos registry mirrors, keyed by registry host
	// (host[:port], or * for every registry): machine.registries.mirrors
	// below Talos 1.12, one RegistryMirrorConfig document per registry from
	// 1.12 (decided on the version the pool resolves to).
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k.matches('^(\\*|(([A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?\\.)*[A-Za-z]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?|(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}|\\[(([0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|([0-9A-Fa-f]{1,4}:){1,7}:|([0-9A-Fa-f]{1,4}:){1,6}:[0-9A-Fa-f]{1,4}|([0-9A-Fa-f]{1,4}:){1,5}(:[0-9A-Fa-f]{1,4}){1,2}|([0-9A-Fa-f]{1,4}:){1,4}(:[0-9A-Fa-f]{1,4}){1,3}|([0-9A-Fa-f]{1,4}:){1,3}(:[0-9A-Fa-f]{1,4}){1,4}|([0-9A-Fa-f]{1,4}:){1,2}(:[0-9A-Fa-f]{1,4}){1,5}|[0-9A-Fa-f]{1,4}:(:[0-9A-Fa-f]{1,4}){1,6}|:((:[0-9A-Fa-f]{1,4}){1,7}|:))\\])(:([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?)$'))`,message="registryMirrors keys must be a registry host[:port] (a DNS name, an IPv4 address or a bracketed IPv6 address) or *"
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
	// SchematicID of the image, or a multi-segment path a mirror serves
	// (gpu/nvidia-open). Default talos.schematicID.
	SchematicID SchematicPath `json:"schematicID,omitempty"`
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

// EphemeralStorage is the ephemeral storage of a worker's virt-launcher Pod.
// +kubebuilder:validation:XValidation:rule=`!has(self.request) || !has(self.limit) || quantity(self.request).compareTo(quantity(self.limit)) <= 0`,message="ephemeralStorage.request cannot exceed ephemeralStorage.limit: a container cannot request more than its limit"
type EphemeralStorage struct {
	// Request of the virt-launcher Pod. Default limit/40.
	Request Quantity `json:"request,omitempty"`
	// Limit of the virt-launcher Pod. Default 2Gi.
	Limit Quantity `json:"limit,omitempty"`
}

// SystemDisk is where the system disk sits on the guest and its sector sizes.
type SystemDisk struct {
	// PCIAddress of the system disk on the guest, domain:bus:slot.function
	// (lowercase hex). A fixed address keeps the device's name stable
	// across KubeVirt releases. Default 0000:07:00.0.
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`
	// +kubebuilder:validation:MaxLength=12
	PCIAddress string `json:"pciAddress,omitempty"`
	// BlockSize is the disk's logical and physical sector size the guest
	// sees. Default 512/4096 (4K physical sectors, as replicated storage
	// such as LINSTOR/DRBD has).
	BlockSize *BlockSize `json:"blockSize,omitempty"`
}

// BlockSize is the sector sizes of a disk, in bytes.
// +kubebuilder:validation:XValidation:rule=`!has(self.logical) || !has(self.physical) || self.logical <= self.physical`,message="blockSize.logical cannot exceed blockSize.physical: a physical sector holds whole logical sectors"
type BlockSize struct {
	// Logical sector size: 512 or 4096. Default 512.
	// +kubebuilder:validation:Enum=512;4096
	Logical int32 `json:"logical,omitempty"`
	// Physical sector size: 512 or 4096. Default 4096.
	// +kubebuilder:validation:Enum=512;4096
	Physical int32 `json:"physical,omitempty"`
}

// Taint is a node taint registered at the kubelet's first start.
type Taint struct {
	// Key is the taint key (label-key syntax).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	Key string `json:"key,omitempty"`
	// Value is the taint value (label-value syntax); may be empty.
	Value LabelValue `json:"value,omitempty"`
	// Effect is NoSchedule, PreferNoSchedule or NoExecute.
	// +required
	// +kubebuilder:validation:Enum=NoSchedule;PreferNoSchedule;NoExecute
	Effect string `json:"effect,omitempty"`
}

// GPU is one GPU passed through to each worker VM.
type GPU struct {
	// Name is the device's resource name as KubeVirt's permitted host
	// devices list it, e.g. nvidia.com/AD102GL_L40S.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	Name string `json:"name,omitempty"`
}

// KernelModule is a kernel module loaded at boot.
type KernelModule struct {
	// Name is the module name as modprobe takes it, e.g. nvidia_uvm.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[a-z0-9_-]+$`
	Name string `json:"name,omitempty"`
	// Parameters are the module's parameters, each a bare key=value with
	// no whitespace, quotes, backslash, backtick or dollar.
	// +kubebuilder:validation:MaxItems=32
	Parameters []KernelModuleParameter `json:"parameters,omitempty"`
}

// Kubelet holds a pool's kubelet reservations and memory eviction
// thresholds; each omitted field is computed or defaulted.
type Kubelet struct {
	// SystemReservedMemory is reserved for the OS. Default: 5% of the
	// node's memory, clamped to [256Mi, 1Gi].
	SystemReservedMemory Quantity `json:"systemReservedMemory,omitempty"`
	// KubeReservedMemory is reserved for the kubelet and container
	// runtime. Default as systemReservedMemory.
	KubeReservedMemory Quantity `json:"kubeReservedMemory,omitempty"`
	// SystemReservedCPU is reserved for the OS, e.g. 100m or 0.5.
	// Default: 5% of the node's CPU, clamped to [50m, 500m].
	SystemReservedCPU CPUQuantity `json:"systemReservedCpu,omitempty"`
	// KubeReservedCPU is reserved for the kubelet and container runtime.
	// Default as systemReservedCpu.
	KubeReservedCPU CPUQuantity `json:"kubeReservedCpu,omitempty"`
	// EvictionHardMemory is the hard eviction threshold for
	// memory.available, a percentage (7%) or a quantity (500Mi). Default
	// 7%. Must be below evictionSoftMemory, in the same kind of unit.
	EvictionHardMemory EvictionThreshold `json:"evictionHardMemory,omitempty"`
	// EvictionSoftMemory is the soft eviction threshold for
	// memory.available (grace period 1m30s). Default 10%.
	EvictionSoftMemory EvictionThreshold `json:"evictionSoftMemory,omitempty"`
}

// PoolShape is what a tenant cluster says about each of its pools, and what a
// node pool inherits from it (NodePoolSpec inlines it, rules included). The
// doc comment below is the description of each spec.nodePools entry.

// A node pool.
// +kubebuilder:validation:XValidation:rule=`!(has(self.instanceType) && has(self.resources))`,message="set either instanceType (a KubeVirt instance type) or resources (cpu and memory), not both: an instance type already fixes the VM's CPU and memory"
// +kubebuilder:validation:XValidation:rule=`has(self.storageClass) || !has(oldSelf.storageClass)`,message="storageClass cannot be removed once set: the workers' disks live on that class; create a new pool to move to another class"
// +kubebuilder:validation:XValidation:rule=`!(has(self.replicas) && (has(self.minReplicas) || has(self.maxReplicas)))`,message="set either replicas (a fixed worker count) or minReplicas/maxReplicas (the cluster-autoscaler owns the count), not both"
// +kubebuilder:validation:XValidation:rule=`!has(self.minReplicas) || has(self.maxReplicas)`,message="minReplicas needs maxReplicas: the cluster-autoscaler needs both bounds of the pool"
// +kubebuilder:validation:XValidation:rule=`!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas`,message="minReplicas must not exceed maxReplicas"
// +kubebuilder:validation:XValidation:rule=`!has(self.maxNodeProvisionTime) || has(self.maxReplicas)`,message="maxNodeProvisionTime applies to an autoscaled pool only: set minReplicas/maxReplicas, or remove it"
type PoolShape struct {
	// Replicas is the fixed number of workers. Default 1 unless the pool
	// is autoscaled (minReplicas/maxReplicas), which excludes it.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Replicas *int32 `json:"replicas,omitempty"`
	// InstanceType is the KubeVirt instance type of the workers. When
	// neither instanceType nor resources is set the function uses
	// u1.medium.
	InstanceType DNSSubdomain `json:"instanceType,omitempty"`
	// Resources size the workers when no instanceType is given.
	Resources *Resources `json:"resources,omitempty"`
	// DiskSize is the size of each worker's system disk, a whole number
	// of bytes (20Gi; 1m is a thousandth of a byte, refused): no smaller
	// than the golden it clones, or, imported over HTTP, than the Talos
	// disk image (the function's storage.minimumImageStorage, 1246Mi).
	// +kubebuilder:default="20Gi"
	DiskSize Quantity `json:"diskSize,omitempty"`
	// StorageClass of the workers' system disks. Empty: the class of the
	// pool's already-cloned disks, else today's default class. A clone
	// must stay on the golden's class. Immutable once set.
	// +kubebuilder:validation:XValidation:rule=`self == oldSelf`,message="storageClass is immutable: the workers' disks live on the old class and a clone cannot cross classes; create a new pool on the new class and move the workload"
	StorageClass DNSSubdomain `json:"storageClass,omitempty"`
	// Architecture is the workers' CPU architecture: the disk image's
	// (<platform>-<arch>.raw.xz) and, when it is not the function Input's
	// image.arch (the default), the VM's spec.architecture, which KubeVirt
	// schedules on a node of that architecture. A builtin pool clones the
	// catalog's golden of this architecture. KubeVirt admits a VM of
	// another architecture than its control plane's only with its
	// MultiArchitecture feature gate on; without it the pool is held
	// (ArchitectureNotAdmitted) and composes no new template.
	Architecture Architecture `json:"architecture,omitempty"`

	// --- Issue 12, VM details: roles and the worker VM template (the
	// chart's nodegroup.yaml). Keep this block together. ---

	// Roles label each worker with node-role.kubernetes.io/<role>: "" on
	// its VirtualMachine, its virt-launcher Pod and its Machine (which
	// Cluster API syncs to the Node), e.g. [ingress-nginx] for the pool
	// that hosts the tenant ingress controller.
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	Roles []NodeRole `json:"roles,omitempty"`
	// LogSerialConsole streams each worker's serial console into a
	// guest-console-log container beside virt-launcher (kubectl logs): the
	// only view of a worker that stalls before Talos answers. Changing it
	// rolls the pool.
	LogSerialConsole bool `json:"logSerialConsole,omitempty"`
	// PodCPURequest is the CPU request of the worker's virt-launcher
	// compute container (what the scheduler reserves on the host), distinct
	// from resources.cpu (the guest's vCPUs). Needs resources sizing: KubeVirt
	// refuses it beside an instance type. 0 alone reserves nothing; 0 beside
	// podCpuLimit, or above podCpuLimit, is refused.
	PodCPURequest CPUQuantity `json:"podCpuRequest,omitempty"`
	// PodCPULimit is the CPU limit of the worker's virt-launcher compute
	// container. Needs resources sizing. KubeVirt copies a declared limit
	// into an undeclared request, so pair it with podCpuRequest to move the
	// ceiling alone. 0 means no ceiling and needs podCpuRequest 0 beside it.
	PodCPULimit CPUQuantity `json:"podCpuLimit,omitempty"`
	// EphemeralStorage is the virt-launcher Pod's ephemeral-storage request
	// and limit. Default limit 2Gi, request limit/40 (the chart's, through
	// cozy-lib's default allocation ratio): the worker's disks are
	// persistent volumes and do not count.
	EphemeralStorage *EphemeralStorage `json:"ephemeralStorage,omitempty"`
	// Disk places the system disk on the guest's PCI bus and sets its
	// sector sizes. Default pciAddress 0000:07:00.0, blockSize 512/4096.
	Disk *SystemDisk `json:"disk,omitempty"`

	// --- end of issue 12, VM details ---

	// OSImage selects where the workers' boot disk comes from: builtin
	// clones the catalog's golden, factory imports over HTTP, and an
	// empty osImage ({}) imports over HTTP with the talos defaults. At
	// most one member may be set.
	// +kubebuilder:default={builtin: {}}
	OSImage *OSImage `json:"osImage,omitempty"`

	// --- Issue 12, Talos machine config: node labels and taints, GPUs,
	// kernel modules, kubelet reservations (internal/talosconfig/node.go). ---

	// Labels are set on every worker node (Talos machine.nodeLabels).
	// Keys are label keys ([prefix/]name); values label values. gpu and
	// node-role.kubernetes.io/* are managed by the function (gpus, roles)
	// and refused here.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule=`self.all(k, size(k) <= 317 && k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'))`,message="labels keys must be label keys: an optional DNS-subdomain prefix and a slash, then up to 63 letters, digits, '-', '_' or '.', starting and ending alphanumeric"
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k != 'gpu' && !k.startsWith('node-role.kubernetes.io/'))`,message="labels: gpu and node-role.kubernetes.io/* are managed by the function; use gpus for the gpu label and roles for node-role labels"
	Labels map[string]LabelValue `json:"labels,omitempty"`
	// Taints are registered on every worker node (Talos
	// machine.nodeTaints, written key: value:effect, or key: effect
	// without a value). One taint per key.
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=key
	Taints []Taint `json:"taints,omitempty"`
	// GPUs are passed through to every worker VM (KubeVirt
	// domain.devices.gpus, named gpu1, gpu2, ...); a pool with GPUs also
	// gets the node label gpu=on. The NVIDIA driver needs at least 4Gi of
	// memory.
	// +kubebuilder:validation:MaxItems=16
	GPUs []GPU `json:"gpus,omitempty"`
	// KernelModules are loaded on every worker at boot (Talos
	// machine.kernel.modules), in order. Omitted: a pool with an
	// nvidia.com/* GPU gets nvidia (NVreg_NvLinkDisable=1), nvidia_uvm,
	// nvidia_drm, nvidia_modeset, any other pool none. A list replaces
	// that choice; [] loads none even on a GPU pool. The modules must be
	// in the image: the schematic (osImage schematicID) carries them.
	// +kubebuilder:validation:MaxItems=64
	KernelModules *[]KernelModule `json:"kernelModules,omitempty"`
	// Kubelet tunes the kubelet's reservations and eviction thresholds.
	// Omitted fields are computed as the cozystack chart does: system and
	// kube reserved memory are each 5% of the node's memory, clamped to
	// [256Mi, 1Gi], CPU 5% of its CPU clamped to [50m, 500m] (node size
	// from resources, else the instance type); eviction hard 7%, soft 10%.
	Kubelet *Kubelet `json:"kubelet,omitempty"`
	// --- Issue 12, Cluster API part: autoscaling, health check, rollout ---

	// MinReplicas is the cluster-autoscaler floor of the pool. Setting
	// minReplicas or maxReplicas hands the worker count to the
	// cluster-autoscaler: the MachineDeployment then carries the
	// autoscaler's node-group size annotations and no spec.replicas, so a
	// reconcile never resets the count the autoscaler chose. Default 0
	// when maxReplicas is set. Cannot be combined with replicas.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	MinReplicas *int32 `json:"minReplicas,omitempty"`
	// MaxReplicas is the cluster-autoscaler ceiling of the pool, at least
	// minReplicas and at least 1. Required once minReplicas is set.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`
	// MaxNodeProvisionTime is how long the cluster-autoscaler waits for a
	// new worker of an autoscaled pool to register as a Node before it
	// treats it as unregistered, a whole number of s, m or h (30m, 1h30m).
	// Default 30m on an autoscaled pool; only for autoscaled pools.
	MaxNodeProvisionTime PositiveDuration `json:"maxNodeProvisionTime,omitempty"`
	// HealthCheck tunes the pool's MachineHealthCheck, which remediates
	// (replaces) workers that do not become or stay Ready. Every pool has
	// one.
	HealthCheck *HealthCheck `json:"healthCheck,omitempty"`
	// Rollout tunes how a changed template rolls the pool's workers.
	Rollout *Rollout `json:"rollout,omitempty"`
	// --- Bootstrap (issue 12: Talos machine config for the cluster's
	// control plane) ---

	// Bootstrap says where the workers' Talos machine config comes from,
	// which depends on the cluster's control plane. It is part of the
	// pool's shape so that a tenant cluster's pools carry it too.
	// +kubebuilder:default={}
	Bootstrap *Bootstrap `json:"bootstrap,omitempty"`

	// TemplateRevision is bumped to take this function release's rendering
	// of the pool's templates. A running pool keeps its templates while what
	// it asks for (this spec, the Input values and the cluster facts that
	// enter them) is unchanged, however a later release would render them;
	// a bump is such a change, and rolls the pool once if the running
	// release renders it differently. The Input's templateRevision does the
	// same for every pool.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000000
	TemplateRevision int64 `json:"templateRevision,omitempty"`
}

// HealthCheck tunes a pool's MachineHealthCheck. Omitted fields take the
// kubernetes-nodes chart's defaults.
type HealthCheck struct {
	// MaxUnhealthy is how many unhealthy workers the check tolerates
	// before it stops remediating: a count ("1") or a percentage of the
	// pool ("50%", rounded down: at 50% a pool of one never remediates).
	// Default "50%".
	MaxUnhealthy CountOrPercent `json:"maxUnhealthy,omitempty"`
	// NodeStartupTimeout is how long a new worker may take to become a
	// Ready Node before it is replaced, a whole number of s, m or h, at
	// least 30s. Default 20m.
	// +kubebuilder:validation:XValidation:rule=`!self.matches('^[1-9][0-9]{0,4}[smh]([0-9]{1,5}[smh]){0,2}$') || duration(self) >= duration('30s')`,message="nodeStartupTimeout must be at least 30s, the least Cluster API's MachineHealthCheck webhook accepts"
	NodeStartupTimeout PositiveDuration `json:"nodeStartupTimeout,omitempty"`
	// ReadyUnknownTimeout is how long a Node may report Ready=Unknown
	// before its worker is replaced. Default 5m.
	ReadyUnknownTimeout PositiveDuration `json:"readyUnknownTimeout,omitempty"`
	// ReadyFalseTimeout is how long a Node may report Ready=False before
	// its worker is replaced. Default 10m.
	ReadyFalseTimeout PositiveDuration `json:"readyFalseTimeout,omitempty"`
}

// Rollout is the MachineDeployment's rolling update.
type Rollout struct {
	// MaxSurge is how many workers above the desired count a roll may
	// create, a count or a percentage. Default: maxReplicas of an
	// autoscaled pool, else replicas (at least 1): the whole pool at once.
	MaxSurge CountOrPercent `json:"maxSurge,omitempty"`
	// MaxUnavailable is how many workers a roll may take away before
	// their replacements are Ready, a count or a percentage. Default "1".
	MaxUnavailable CountOrPercent `json:"maxUnavailable,omitempty"`
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
	// GoldenNamespace is the namespace of the catalog's golden DataVolumes that builtin images clone from:
	// the function Input's goldenNamespace, cozy-public, or one of the Input's goldenNamespaces; any other is refused.
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
	// GoldenNamespace is the namespace of the catalog's golden DataVolumes that builtin images clone from:
	// the function Input's goldenNamespace, cozy-public, or one of the Input's goldenNamespaces; any other is refused.
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
