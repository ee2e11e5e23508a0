// Package v1beta1 contains the input type for this function.
// +kubebuilder:object:generate=true
// +groupName=workerimage.fn.crossplane.io
// +versionName=v1beta1
package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Mode is what the function composes for the composite it is called for.
// +kubebuilder:validation:Enum=Catalog;TenantCluster;NodePool
type Mode string

// Modes of the function.
const (
	ModeCatalog       Mode = "Catalog"
	ModeTenantCluster Mode = "TenantCluster"
	ModeNodePool      Mode = "NodePool"
)

// CloneRBACScope says which service accounts may clone the goldens.
// +kubebuilder:validation:Enum=PinningNamespaces;AllServiceAccounts
type CloneRBACScope string

// Clone RBAC scopes.
const (
	// CloneRBACPinningNamespaces binds the clone role to the service accounts of
	// the namespaces whose templates pin a golden, and to no others.
	CloneRBACPinningNamespaces CloneRBACScope = "PinningNamespaces"
	// CloneRBACAllServiceAccounts binds it to every service account.
	CloneRBACAllServiceAccounts CloneRBACScope = "AllServiceAccounts"
)

// Input configures function-worker-image. Crossplane never installs this CRD
// and never defaults or validates it: the function applies the defaults named
// here and refuses invalid values with a fatal result.
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:categories=crossplane
type Input struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Mode selects what to compose. When omitted it is inferred from the
	// composite's kind: XWorkerImageCatalog, XTenantCluster or XNodePool.
	// +optional
	Mode Mode `json:"mode,omitempty"`

	// GoldenNamespace is the namespace of the golden DataVolumes, used when the
	// composite does not name one.
	// +optional
	// +kubebuilder:default=cozy-public
	GoldenNamespace string `json:"goldenNamespace,omitempty"`

	// GoldenNamespaces are further namespaces an XNodePool or XTenantCluster
	// may name in its goldenNamespace, such as a second catalog's while
	// pools move onto it. goldenNamespace and cozy-public (the composites'
	// schema default) are always allowed. A composite naming any other
	// namespace is refused: a tenant's pool would otherwise read another
	// namespace's golden-named objects and protect them with Usages.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	GoldenNamespaces []string `json:"goldenNamespaces,omitempty"`

	// Image selects the Talos disk image artifact.
	// +optional
	Image ImageOptions `json:"image,omitempty"`

	// Talos holds the Talos defaults used when a composite leaves them out.
	// +optional
	Talos TalosDefaults `json:"talos,omitempty"`

	// Storage holds sizing defaults and limits.
	// +optional
	Storage StorageOptions `json:"storage,omitempty"`

	// SupportMatrix extends or replaces the built-in Talos to Kubernetes
	// support matrix.
	// +optional
	SupportMatrix *SupportMatrix `json:"supportMatrix,omitempty"`

	// CloneRBAC says who may clone the goldens.
	// +optional
	CloneRBAC CloneRBACOptions `json:"cloneRBAC,omitempty"`

	// Usages configures the deletion protection of the goldens that templates
	// clone from.
	// +optional
	Usages UsageOptions `json:"usages,omitempty"`

	// ClonePreflight configures the check of what CDI's clone planner will do
	// before a new clone template is composed.
	// +optional
	ClonePreflight ClonePreflightOptions `json:"clonePreflight,omitempty"`

	// CloneHealth bounds how many worker disks a node pool reads for its
	// CloneHealthy condition.
	// +optional
	CloneHealth CloneHealthOptions `json:"cloneHealth,omitempty"`

	// CloneBudget bounds how many worker disks of one golden clone at once
	// on one StorageClass, across every pool (docs/platform.md, "Clone
	// budget and capacity").
	// +optional
	CloneBudget CloneBudgetOptions `json:"cloneBudget,omitempty"`

	// SnapshotGoldens keeps each golden also as a VolumeSnapshot where its
	// StorageClass's CDI StorageProfile prefers snapshot sources, and clones
	// new worker disks from it (docs/platform.md, "Snapshot goldens").
	// +optional
	SnapshotGoldens SnapshotGoldenOptions `json:"snapshotGoldens,omitempty"`

	// Polling sets how soon Crossplane calls the function again.
	// +optional
	Polling PollingOptions `json:"polling,omitempty"`

	// Join says where a cluster's control plane publishes the facts the
	// Join bootstrap mode builds a worker's Talos config from. The defaults
	// are the names cozystack's kubernetes chart and Kamaji use.
	// +optional
	Join JoinOptions `json:"join,omitempty"`
	// ClusterAPI selects the Cluster API contract the node pools'
	// MachineDeployments and MachineHealthChecks are written in.
	// +optional
	ClusterAPI ClusterAPIOptions `json:"clusterAPI,omitempty"`
	// Scheduling places the worker VMs of every pool.
	// +optional
	Scheduling SchedulingOptions `json:"scheduling,omitempty"`
	// TemplateRevision is bumped to take this function release's rendering
	// of every node pool's templates: a running pool keeps its templates
	// until what it asks for changes, and a bump is such a change. Each pool
	// that this release renders differently rolls once; the others roll
	// nothing. A pool's own spec.templateRevision does the same for one pool.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000000
	TemplateRevision int64 `json:"templateRevision,omitempty"`
}

// JoinOptions locate a cluster's join facts. Each object is named
// <cluster><suffix> in the pool's namespace, <cluster> being the pool's
// clusterName (the CAPI Cluster's name).
type JoinOptions struct {
	// TalosSecretsSuffix names the Secret holding the cluster's Talos
	// secrets: keys token (machine token), clusterId, clusterSecret and
	// bootstrapToken (<id>.<secret>).
	// +optional
	// +kubebuilder:default="-talos-secrets"
	TalosSecretsSuffix *string `json:"talosSecretsSuffix,omitempty"`
	// TalosCASuffix names the Secret holding the Talos CA certificate
	// (key tls.crt).
	// +optional
	// +kubebuilder:default="-talos-ca"
	TalosCASuffix *string `json:"talosCASuffix,omitempty"`
	// KubernetesCASuffix names the Secret holding the cluster's Kubernetes
	// CA certificate (key ca.crt).
	// +optional
	// +kubebuilder:default="-ca"
	KubernetesCASuffix *string `json:"kubernetesCASuffix,omitempty"`
	// APIServerServiceSuffix names the Service of the cluster's API server
	// (Kamaji's); empty: the cluster's name itself.
	// +optional
	APIServerServiceSuffix *string `json:"apiServerServiceSuffix,omitempty"`
	// DNSServiceNamespace and DNSServiceName locate the management
	// cluster's DNS Service, the workers' host resolver.
	// +optional
	// +kubebuilder:default=kube-system
	DNSServiceNamespace string `json:"dnsServiceNamespace,omitempty"`
	// +optional
	// +kubebuilder:default=kube-dns
	DNSServiceName string `json:"dnsServiceName,omitempty"`
	// ManagementClusterDomain is the management cluster's DNS domain: the
	// workers' search domains, so that short Service names such as an NFS
	// server's resolve on the host.
	// +optional
	// +kubebuilder:default=cozy.local
	ManagementClusterDomain string `json:"managementClusterDomain,omitempty"`
	// ClusterDomain is the tenant cluster's DNS domain.
	// +optional
	// +kubebuilder:default=cluster.local
	ClusterDomain string `json:"clusterDomain,omitempty"`
	// PodSubnet and ServiceSubnet are the tenant cluster's networks; they
	// must be the control plane's.
	// +optional
	// +kubebuilder:default="10.243.0.0/16"
	PodSubnet string `json:"podSubnet,omitempty"`
	// +optional
	// +kubebuilder:default="10.95.0.0/16"
	ServiceSubnet string `json:"serviceSubnet,omitempty"`
	// ControlPlaneAPIVersion and ControlPlaneKind are the kind of the
	// cluster's control plane, named like the cluster; a Join pool whose
	// Kubernetes minor is ahead of its spec.version is held.
	// +optional
	// +kubebuilder:default="controlplane.cluster.x-k8s.io/v1alpha1"
	ControlPlaneAPIVersion string `json:"controlPlaneAPIVersion,omitempty"`
	// +optional
	// +kubebuilder:default=KamajiControlPlane
	ControlPlaneKind string `json:"controlPlaneKind,omitempty"`
}

// SchedulingOptions places the worker VMs (issue 12, VM details).
type SchedulingOptions struct {
	// TopologySpreadConstraints go on every worker's virt-launcher Pod
	// (the cozystack chart's _cluster.scheduling.globalAppTopologySpreadConstraints).
	// A constraint without a labelSelector spreads the workers of the pool's
	// cluster: the function sets matchLabels cluster.x-k8s.io/cluster-name
	// (which CAPK puts on every worker Pod) to the pool's cluster.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	// ApplicationLabels puts on every worker's virt-launcher Pod the labels
	// cozystack's application lineage and quota accounting select on, as
	// its kubernetes-nodes chart does: apps.cozystack.io/application.group
	// apps.cozystack.io, application.kind Kubernetes, application.name the
	// pool's cluster, and cluster.x-k8s.io/deployment-name the pool's
	// MachineDeployment. Off by default: they mean nothing outside
	// cozystack. Turning it on or off rolls every pool once (a running VM's
	// Pod keeps the labels it started with).
	// +optional
	ApplicationLabels bool `json:"applicationLabels,omitempty"`
}

// ImageOptions selects the Image Factory artifact
// <factory>/image/<schematicID>/<version>/<platform>-<arch>.raw.xz.
type ImageOptions struct {
	// Platform is the Talos platform of the disk image. CAPK attaches a
	// config-2 config drive, which only the openstack image reads.
	// +optional
	// +kubebuilder:default=openstack
	Platform string `json:"platform,omitempty"`

	// Arch is the CPU architecture of the disk image.
	// +optional
	// +kubebuilder:default=amd64
	Arch string `json:"arch,omitempty"`
}

// TalosDefaults are the Talos image defaults.
type TalosDefaults struct {
	// +optional
	Version string `json:"version,omitempty"`
	// +optional
	SchematicID string `json:"schematicID,omitempty"`
	// +optional
	ImageFactoryURL string `json:"imageFactoryURL,omitempty"`
	// ImageFactoryCA is the CA bundle (PEM certificates) CDI trusts, beside
	// its system pool, when a worker disk imports over HTTPS from the Image
	// Factory: for a self-hosted factory or mirror served by an internal CA,
	// which CDI otherwise refuses (x509: certificate signed by unknown
	// authority). Each pool then composes the ConfigMap <cluster>-<pool>-factory-ca
	// in its namespace (CDI reads certConfigMap from the DataVolume's
	// namespace) and names it in its HTTP disks' source.http.certConfigMap.
	// Private keys are refused: the ConfigMap is readable by anything that
	// reads the namespace.
	// +optional
	ImageFactoryCA string `json:"imageFactoryCA,omitempty"`
	// InstallerRepository, when set, is the installer repository of every
	// pool that names none, used verbatim. Unset, each pool gets the Image
	// Factory installer that matches its disk: <factory host>/<platform>-installer
	// (factory.talos.dev/openstack-installer by default; plain installer for
	// metal and for Talos before 1.10).
	// +optional
	InstallerRepository string `json:"installerRepository,omitempty"`
	// KubernetesVersion is the default Kubernetes minor, e.g. v1.35.
	// +optional
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
}

// StorageOptions holds sizing defaults.
type StorageOptions struct {
	// GoldenStorage is the size of a golden when neither the entry nor the
	// catalog gives one.
	// +optional
	// +kubebuilder:default="6Gi"
	GoldenStorage string `json:"goldenStorage,omitempty"`

	// MinimumImageStorage is the smallest golden size accepted: the raw Talos
	// disk image must fit.
	// +optional
	// +kubebuilder:default="1246Mi"
	MinimumImageStorage string `json:"minimumImageStorage,omitempty"`

	// DiskSize is the worker system disk size when a pool gives none.
	// +optional
	// +kubebuilder:default="20Gi"
	DiskSize string `json:"diskSize,omitempty"`
}

// SupportMatrix lists which Kubernetes minors each Talos minor supports.
type SupportMatrix struct {
	// Replace drops the built-in table instead of extending it.
	// +optional
	Replace bool `json:"replace,omitempty"`

	// Entries add to (or override, per Talos minor) the built-in table.
	// +optional
	// +listType=map
	// +listMapKey=talos
	Entries []SupportMatrixEntry `json:"entries,omitempty"`

	// KubernetesReleases map a Kubernetes minor to the patch release its
	// pools run: the MachineDeployment's version (which CABPT also takes
	// the kubelet image from) and, in the Join bootstrap mode, the kubelet
	// image. They add to (or override, per minor) the built-in table,
	// which follows cozystack's kubernetes-nodes chart (files/versions.yaml);
	// Replace drops it too. A minor in neither runs its .0 release.
	// +optional
	// +listType=map
	// +listMapKey=minor
	KubernetesReleases []KubernetesRelease `json:"kubernetesReleases,omitempty"`
}

// KubernetesRelease says that pools of Kubernetes minor Minor run Release.
type KubernetesRelease struct {
	// Minor is a Kubernetes minor, e.g. v1.35.
	// +kubebuilder:validation:Pattern=`^v[0-9]+\.[0-9]+$`
	Minor string `json:"minor"`
	// Release is a patch release of that minor, e.g. v1.35.6.
	// +kubebuilder:validation:Pattern=`^v[0-9]+\.[0-9]+\.[0-9]+$`
	Release string `json:"release"`
}

// SupportMatrixEntry says that Talos minor Talos supports Kubernetes minors
// MinKubernetes through MaxKubernetes.
type SupportMatrixEntry struct {
	// Talos is a Talos minor, e.g. v1.13.
	// +kubebuilder:validation:Pattern=`^v[0-9]+\.[0-9]+$`
	Talos string `json:"talos"`
	// MinKubernetes is the oldest supported Kubernetes minor, e.g. v1.31.
	// +kubebuilder:validation:Pattern=`^v[0-9]+\.[0-9]+$`
	MinKubernetes string `json:"minKubernetes"`
	// MaxKubernetes is the newest supported Kubernetes minor, e.g. v1.36.
	// +kubebuilder:validation:Pattern=`^v[0-9]+\.[0-9]+$`
	MaxKubernetes string `json:"maxKubernetes"`
}

// CloneRBACOptions says who may clone the goldens.
type CloneRBACOptions struct {
	// Scope is PinningNamespaces (default: only namespaces whose templates pin
	// a golden) or AllServiceAccounts.
	// +optional
	// +kubebuilder:default=PinningNamespaces
	Scope CloneRBACScope `json:"scope,omitempty"`

	// ServiceAccountName is the service account the worker VMs run as in
	// each tenant namespace. KubeVirt authorizes a VM's clone as this
	// account (the VM's own, "default" unless its template mounts another;
	// CAPK mounts none), so PinningNamespaces binds exactly this account of
	// each pinning namespace, and a pool waits until it is bound.
	// +optional
	// +kubebuilder:default=default
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// WaitForGrant holds a pool's MachineDeployment, on a golden the pool has
	// not cloned yet, until a clone RoleBinding of the function in the golden
	// namespace grants the VM service account create on that golden's
	// datavolumes/source. Without the grant KubeVirt refuses the worker's
	// DataVolume (UnauthorizedDataVolumeCreate) and retries later. Set it to
	// false only when the platform manages clone RBAC itself.
	// +optional
	// +kubebuilder:default=true
	WaitForGrant *bool `json:"waitForGrant,omitempty"`
}

// UsageOptions configures the Crossplane Usages a node pool composes.
type UsageOptions struct {
	// Enabled composes, for every template a pool keeps that clones a golden,
	// a protection.crossplane.io/v1beta1 Usage of the golden DataVolume and
	// one of its PVC, by that template, so that Crossplane refuses every
	// deletion of a golden a template still clones from (the catalog's, the
	// garbage collector's, kubectl's) and replays it once the last such
	// template is gone. Set it to false only for a Crossplane that runs with
	// --enable-usages=false or without its webhooks, which has no Usage API
	// or does not enforce it; the goldens are then protected only by the
	// catalog's retention, not against a deletion of the catalog or of the
	// golden itself.
	// +optional
	// +kubebuilder:default=true
	Enabled *bool `json:"enabled,omitempty"`
}

// ClonePreflightOptions configures the clone-strategy pre-flight.
type ClonePreflightOptions struct {
	// AllowHostAssistedCopy composes a new clone template even when CDI's
	// clone planner would fall back to a host-assisted copy over the pod
	// network (the target class cannot expand a disk larger than the golden,
	// or the snapshot strategy has no VolumeSnapshotClass). The copy is then
	// reported by the CloneHealthy condition instead of holding the pool.
	// It accepts fallbacks of a pool on its golden's own StorageClass, in
	// every class; it never lets a pool clone across classes, which
	// HostAssistedCopy chooses per class.
	// +optional
	AllowHostAssistedCopy bool `json:"allowHostAssistedCopy,omitempty"`

	// HostAssistedCopy chooses host-assisted copies across StorageClasses,
	// per class (docs/platform.md, "When storage misbehaves: a copy from a
	// golden on another class").
	// +optional
	HostAssistedCopy HostAssistedCopyOptions `json:"hostAssistedCopy,omitempty"`

	// ReadVolumeSnapshotClasses reads the snapshot.storage.k8s.io
	// VolumeSnapshotClasses, which CDI's snapshot clone strategy needs for
	// the class's driver. Crossplane fails a reconcile whose required kind
	// is not served, so set it to false on a cluster without the
	// snapshot.storage.k8s.io API; the pre-flight then sees no
	// VolumeSnapshotClass, as CDI does.
	// +optional
	// +kubebuilder:default=true
	ReadVolumeSnapshotClasses *bool `json:"readVolumeSnapshotClasses,omitempty"`
}

// HostAssistedCopyOptions chooses, per StorageClass, to copy worker disks
// from a golden on another class.
type HostAssistedCopyOptions struct {
	// StorageClasses are the classes whose pools copy each worker disk from
	// the golden of their image on another class, by CDI's host-assisted
	// clone: CDI's cdi-cloner pod reads the golden where it is and
	// cdi-upload-server writes the disk on the pool's class, one full copy
	// per worker over the pod network, bounded by the clone budget. A pool
	// on a listed class is then not held for its golden's other class
	// (StorageClassMismatch), and its new template asks CDI for the copy
	// (cdi.kubevirt.io/cloneType: copy on its disk), since CDI would hand
	// two classes of one CSI driver to the driver as a cross-class clone.
	// This is how a node-local class (a one-replica LINSTOR class without
	// remote access, TopoLVM, local-path) gets its disks from a golden
	// every node reaches. A pool on its golden's own class is not affected;
	// running templates never change.
	// +optional
	// +listType=set
	StorageClasses []string `json:"storageClasses,omitempty"`
}

// CloneHealthOptions configures the node pool's CloneHealthy condition.
type CloneHealthOptions struct {
	// MaxWorkerDisks is the largest pool, in worker disks (one per Machine),
	// whose DataVolumes are read for the CloneHealthy condition. They are
	// read only while the pool's MachineDeployment rolls, scales or replaces
	// a Machine, or while the condition is not True. Crossplane sends each
	// as CDI left it (~6 KiB with its clone tokens and managedFields) and
	// the function refuses a request above --max-recv-message-size (4 MiB
	// by default), so a larger pool reports CloneHealthy Unknown instead of
	// not reconciling at all. Raise it only together with
	// --max-recv-message-size: about 600 disks fit in 4 MiB.
	// +optional
	// +kubebuilder:default=256
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	MaxWorkerDisks *int32 `json:"maxWorkerDisks,omitempty"`
}

// CloneBudgetOptions bounds the clones of one golden in flight on one
// StorageClass. CDI bounds none (CDIConfigSpec has no such field, and the
// clone controllers' MaxConcurrentReconciles caps reconcile workers, not
// clones), so a 100-worker pool, or many pools rolling onto a new golden,
// would start every clone at once; the storage under them has limits of its
// own (docs/platform.md, "Clone budget and capacity").
type CloneBudgetOptions struct {
	// Default is the budget of a StorageClass that StorageClasses does not
	// name: how many worker disks of one golden may clone at once onto it.
	// 0 means unbounded.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	Default *int32 `json:"default,omitempty"`

	// StorageClasses is the budget of each named StorageClass, in place of
	// Default; 0 means unbounded.
	// +optional
	StorageClasses map[string]int32 `json:"storageClasses,omitempty"`

	// LeakedClaimAfter is how long a claim CDI made in the golden's
	// namespace for a clone may stay Pending or Lost (timed from its
	// creation), or terminating (from its deletion), before it is taken for
	// one CDI left behind: it no longer counts against the budget, and the
	// pool's CloneCapacity condition names it with the command that removes
	// it. Both states last seconds in a clone that runs; at least 1m
	// (docs/platform.md, "When storage misbehaves: leaked clone claims").
	// +optional
	// +kubebuilder:default="10m"
	LeakedClaimAfter *metav1.Duration `json:"leakedClaimAfter,omitempty"`
}

// SnapshotGoldenOptions configure the snapshot goldens. Where the golden's
// StorageClass has a CDI StorageProfile whose
// status.dataImportCronSourceFormat is snapshot (CDI sets it for the
// provisioners it knows to prefer snapshots, such as Ceph RBD, or from the
// profile's spec, and only while a VolumeSnapshotClass of the driver
// exists), the catalog takes one VolumeSnapshot of each imported golden,
// named as the golden, and a new clone template restores its worker disks
// from it: one snapshot and N restores instead of one temporary snapshot
// of the golden per clone. A running template is never changed for it.
type SnapshotGoldenOptions struct {
	// Enabled follows the StorageProfiles; false keeps every golden a PVC
	// only, as before. The catalog's and the pools' Compositions must
	// agree: a pool that expects a snapshot waits for it. It needs
	// clonePreflight.readVolumeSnapshotClasses (the snapshot API).
	// +optional
	// +kubebuilder:default=true
	Enabled *bool `json:"enabled,omitempty"`
}

// PollingOptions sets the response TTL: how soon Crossplane calls again.
type PollingOptions struct {
	// Steady is the TTL when nothing is in progress.
	// +optional
	// +kubebuilder:default="60s"
	Steady *metav1.Duration `json:"steady,omitempty"`

	// InProgress is the TTL while a golden imports or a change is held back.
	// +optional
	// +kubebuilder:default="15s"
	InProgress *metav1.Duration `json:"inProgress,omitempty"`

	// StallAfter is how long a golden's import, or a worker disk's clone,
	// may stay at one phase, progress and restart count before it is
	// reported stalled.
	// +optional
	StallAfter StallAfterOptions `json:"stallAfter,omitempty"`
}

// StallAfterOptions bound how long CDI may work on a DataVolume without it
// moving before the function reports it stalled: CDI gives up on neither an
// import nor a clone that hangs, and keeps no time that moves with progress,
// so the function records when it last saw one move (internal/stall).
type StallAfterOptions struct {
	// Imports bounds a golden's import (status.goldens[].reason Stalled, and
	// GoldenStalled on the pools that wait for it). CDI's importer cancels a
	// transfer after 10 minutes without a byte and is restarted with the
	// kubelet's back-off (at most 5 minutes), so a transfer stalled mid-body
	// shows as restarts well inside 30 minutes; what stays put longer waits
	// on something without a timeout: response headers, a claim or scratch
	// claim that never binds, an importer pod that is never scheduled.
	// +optional
	// +kubebuilder:default="30m"
	Imports *metav1.Duration `json:"imports,omitempty"`

	// Clones bounds a worker disk's clone in one clone phase (the pool's
	// CloneHealthy, reason CloneStalled). CDI issue #2721 shows clones that
	// sat 16 minutes in CloneScheduled and then finished; past 20 minutes a
	// temporary claim left Pending or Lost (CDI #2323, #3470) is likelier
	// than a slow clone.
	// +optional
	// +kubebuilder:default="20m"
	Clones *metav1.Duration `json:"clones,omitempty"`
}

// ClusterAPIVersion is a served version of cluster.x-k8s.io.
// +kubebuilder:validation:Enum=v1beta1;v1beta2
type ClusterAPIVersion string

// Cluster API versions the function writes.
const (
	// ClusterAPIV1Beta1 is the contract CAPK v0.11 and CABPT speak; Cluster
	// API serves it until v1.16.
	ClusterAPIV1Beta1 ClusterAPIVersion = "v1beta1"
	// ClusterAPIV1Beta2 is the hub from Cluster API v1.11.
	ClusterAPIV1Beta2 ClusterAPIVersion = "v1beta2"
)

// ClusterAPIOptions configures what the node pools write for Cluster API.
type ClusterAPIOptions struct {
	// Version is the cluster.x-k8s.io version of the MachineDeployment and
	// MachineHealthCheck (and of the MachineSets the function reads):
	// v1beta1, or v1beta2 for Cluster API v1.11 and later (v1beta1 stops
	// being served in v1.16). The templates they reference are the
	// providers' own kinds and do not change. Switching rewrites every
	// pool's deployment in the new version without rolling a worker.
	// +optional
	// +kubebuilder:default=v1beta1
	Version ClusterAPIVersion `json:"version,omitempty"`
	// SyncMachineLabels are the regular expressions (Go RE2) the Cluster
	// API manager is started with as --additional-sync-machine-labels.
	// Cluster API copies a Machine's labels that match them, and those of
	// its own node-role.kubernetes.io, node-restriction.kubernetes.io and
	// node.cluster.x-k8s.io namespaces, to the Node and keeps them in sync.
	// A pool label it syncs is set on the MachineDeployment's Machines, not
	// in the Talos config, so changing it rolls no worker. List only what
	// the manager syncs: a label listed here that it does not sync never
	// reaches the Node.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=256
	// +listType=atomic
	SyncMachineLabels []string `json:"syncMachineLabels,omitempty"`
}
