package v1alpha1

// The status the function writes on each composite. The objects inside a
// status (each golden, each pool, image, gate) keep unknown fields
// (x-kubernetes-preserve-unknown-fields), so that what a newer function
// reports under an older XRD is not pruned. The structs whose schemas are list
// items or map values keep their comment apart from the declaration, as in
// patterns.go: the API gives those items no description.

// WorkerImageCatalogStatus is the status of an XWorkerImageCatalog.
type WorkerImageCatalogStatus struct {
	// Goldens lists every golden the catalog keeps, including retiring ones.
	// +listType=atomic
	Goldens []GoldenStatus `json:"goldens,omitempty"`
}

// GoldenStatus is one golden in the catalog's status.goldens.
// +kubebuilder:pruning:PreserveUnknownFields

type GoldenStatus struct {
	// Name of the golden DataVolume.
	Name string `json:"name"`
	// Namespace of the golden DataVolume.
	Namespace string `json:"namespace"`
	// SchematicID the golden holds.
	SchematicID string `json:"schematicID,omitempty"`
	// Version (Talos release) the golden holds.
	Version string `json:"version,omitempty"`
	// Architecture of the golden's disk image, as its source URL names it.
	Architecture string `json:"architecture,omitempty"`
	// Phase of the golden DataVolume (e.g. ImportInProgress, Succeeded, Failed).
	Phase string `json:"phase,omitempty"`
	// Progress of the import, e.g. 42.0%.
	Progress string `json:"progress,omitempty"`
	// Restarts is the importer's restart count as CDI reports it, recorded
	// with ProgressSince.
	Restarts int32 `json:"restarts,omitempty"`
	// ProgressSince is when the function first saw the import at this
	// phase, progress and restart count (RFC 3339); one that stays there
	// for the Input's polling.stallAfter.imports is reported Stalled. Kept
	// only while the golden imports: CDI records no such time.
	ProgressSince string `json:"progressSince,omitempty"`
	// Storage is the golden's size.
	Storage string `json:"storage,omitempty"`
	// StorageClass is the golden's class (declared, else its PVC's).
	StorageClass string `json:"storageClass,omitempty"`
	// Source is the URL the golden imports from, as its DataVolume says
	// (a golden keeps the source it was made with; a default changed
	// since applies to new goldens only), any userinfo masked.
	Source string `json:"source,omitempty"`
	// Reason says why the golden is not ready when it needs someone to
	// act: the import's cause as CDI reports it (UntrustedCertificate,
	// Unauthorized, ImageNotFound, Unresolvable, Unreachable,
	// ChecksumMismatch, TooSmall, CredentialsMissing, ...), Stalled for
	// an import that has not moved for polling.stallAfter.imports, or
	// Recreating while the catalog re-creates a golden that never
	// succeeded to give it the catalog's new CA, credentials or checksum.
	Reason string `json:"reason,omitempty"`
	// Message is the reason's detail and fix.
	Message string `json:"message,omitempty"`
	// PinnedBy lists the templates (<namespace>/<name>) that clone this
	// golden; only with Usages off, when the catalog reads them (with
	// Usages on, InUse says it is pinned).
	// +listType=atomic
	PinnedBy []string `json:"pinnedBy,omitempty"`
	// InUse is true while a Crossplane Usage protects the golden: with
	// Usages on, every template that clones it has one.
	InUse bool `json:"inUse,omitempty"`
	// Retiring is true when the entry was removed but pools still pin the golden.
	Retiring bool `json:"retiring,omitempty"`
	// Ready is true when the golden's import succeeded.
	Ready bool `json:"ready"`
	// Snapshot is the golden's VolumeSnapshot, kept where its
	// StorageClass's StorageProfile prefers snapshot sources; new clone
	// templates restore their worker disks from it.
	Snapshot *GoldenSnapshotStatus `json:"snapshot,omitempty"`
}

// GoldenSnapshotStatus is a golden's VolumeSnapshot.
type GoldenSnapshotStatus struct {
	// Name of the VolumeSnapshot, in the golden's namespace: the golden's.
	Name string `json:"name"`
	// VolumeSnapshotClass it is taken with.
	VolumeSnapshotClass string `json:"volumeSnapshotClass,omitempty"`
	// State is Missing (not taken yet), Pending, Ready, Failed or Deleting.
	State string `json:"state"`
	// RestoreSize is the size a restore of it needs at least.
	RestoreSize string `json:"restoreSize,omitempty"`
	// Message is the snapshot's status.error, when Failed.
	Message string `json:"message,omitempty"`
}

// TenantClusterStatus is the status of an XTenantCluster.
type TenantClusterStatus struct {
	// Pools summarises each node pool, keyed by pool name.
	Pools map[string]PoolStatus `json:"pools,omitempty"`
}

// PoolStatus is one entry of the cluster's status.pools: what the pool's
// XNodePool reports, summarised.
// +kubebuilder:pruning:PreserveUnknownFields

type PoolStatus struct {
	// Image is the boot image the pool resolved to.
	Image *NodePoolImage `json:"image,omitempty"`
	// SourceType is Clone (the disks clone a golden) or HTTP (each disk imports from the factory).
	SourceType string `json:"sourceType,omitempty"`
	// Template is the name of the pool's current KubevirtMachineTemplate.
	Template string `json:"template,omitempty"`
	// Ready is true when the pool's XNodePool is ready.
	Ready bool `json:"ready"`
	// Gate is the pool's gate, when its XNodePool reports one.
	Gate *Gate `json:"gate,omitempty"`
}

// NodePoolStatus is the status node-pool mode writes on an XNodePool, and the
// contract tenant-cluster mode reads back. Pointers tell "not reported" from
// a zero value on the reading side.
type NodePoolStatus struct {
	// Image is the boot image the pool resolved to, and the pool's worker
	// disks still cloning it.
	Image *NodePoolImageStatus `json:"image,omitempty"`
	// Template is the name of the KubevirtMachineTemplate the MachineDeployment points at.
	Template string `json:"template"`
	// BootstrapTemplate is the name of the TalosConfigTemplate the MachineDeployment points at.
	BootstrapTemplate string `json:"bootstrapTemplate"`
	// Gate says whether a change is held back (golden not ready, StorageClass mismatch) and why.
	Gate *Gate `json:"gate,omitempty"`
	// A MachineDeployment counts replicas in int32, hence the schema format;
	// int64 here so that reading a status back accepts any integer.

	// Replicas of the MachineDeployment.
	// +kubebuilder:validation:Format=int32
	Replicas *int64 `json:"replicas,omitempty"`
	// ReadyReplicas of the MachineDeployment.
	// +kubebuilder:validation:Format=int32
	ReadyReplicas *int64 `json:"readyReplicas,omitempty"`
}

// NodePoolImage is the image a pool resolved to.
// +kubebuilder:pruning:PreserveUnknownFields
type NodePoolImage struct {
	// SchematicID of the resolved image.
	SchematicID string `json:"schematicID,omitempty"`
	// Version (Talos release) of the resolved image.
	Version string `json:"version,omitempty"`
	// SourceType is Clone (the disks clone a golden) or HTTP (each disk imports from the factory).
	SourceType string `json:"sourceType,omitempty"`
	// Golden is <namespace>/<name> of the golden DataVolume a clone reads.
	Golden string `json:"golden,omitempty"`
	// ImageURL is the disk image URL an HTTP import reads.
	ImageURL string `json:"imageURL,omitempty"`
	// StorageClass is the class the pool's disks resolved to.
	StorageClass string `json:"storageClass,omitempty"`
}

// NodePoolImageStatus is the image a pool resolved to, as an XNodePool
// reports it: with its worker disks still cloning it. They are kept under
// image, whose object keeps unknown fields, so that a function upgraded
// before its XRD writes a status the older XRD accepts.
// +kubebuilder:pruning:PreserveUnknownFields
type NodePoolImageStatus struct {
	NodePoolImage `json:",inline"`
	// Clones are the pool's worker disks in a clone phase (or, on the
	// HTTP path, an import phase), each with when the function first saw
	// it at its phase, progress and restart count: CDI records no such
	// time. A disk that stays there for the Input's polling.stallAfter.clones
	// (imports) makes CloneHealthy False (CloneStalled, ImportStalled).
	// Only while some disk is in flight: a settled pool lists none.
	// +listType=atomic
	Clones []CloneProgress `json:"clones,omitempty"`
}

// CloneProgress is one worker disk of a pool in a clone phase.
// +kubebuilder:pruning:PreserveUnknownFields

type CloneProgress struct {
	// DataVolume is the worker disk's name, in the pool's namespace.
	DataVolume string `json:"dataVolume"`
	// Phase is its clone phase (CloneScheduled, CSICloneInProgress, ...).
	Phase string `json:"phase,omitempty"`
	// Progress is CDI's progress of the clone, e.g. 42.0% or N/A.
	Progress string `json:"progress,omitempty"`
	// Restarts is its worker pod's restart count as CDI reports it.
	Restarts int32 `json:"restarts,omitempty"`
	// ProgressSince is when the function first saw the disk at this phase,
	// progress and restart count (RFC 3339).
	ProgressSince string `json:"progressSince"`
}

// Gate says whether node-pool mode is holding a change back, and why.
// +kubebuilder:pruning:PreserveUnknownFields
type Gate struct {
	// State is Open (the current template is composed) or Held (a change waits; see message).
	State string `json:"state,omitempty"`
	// Reason is a CamelCase reason.
	Reason string `json:"reason,omitempty"`
	// Message names what holds the change back and the fix.
	Message string `json:"message,omitempty"`
}

// The Deletion condition of an XNodePool that was asked to go (a refused
// delete recorded by Crossplane, or its XTenantCluster's teardown
// annotation): DrainingWorkers while its MachineDeployment exists, Released
// once everything it composed is being deleted. An XTenantCluster deletes a
// pool it dropped from spec.nodePools only once it reads Released.
const (
	ConditionDeletion     = "Deletion"
	ReasonDrainingWorkers = "DrainingWorkers"
	ReasonReleased        = "Released"
)
