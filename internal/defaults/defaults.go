// Package defaults is the one place the product's defaults live. The catalog's
// shipped default entry, the tenant cluster, the node pool, the Input and the
// XRD schemas all take their Talos image defaults from here, and a test fails
// when the shipped examples drift from them.
package defaults

import "time"

const (
	// GoldenNamespace is the shared namespace that holds the golden DataVolumes.
	GoldenNamespace = "cozy-public"

	// TalosVersion is the default Talos release of a pool.
	TalosVersion = "v1.13.6"
	// TalosSchematicID is the Image Factory schematic of the default golden.
	TalosSchematicID = "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"
	// ImageFactoryURL is the public Talos Image Factory.
	ImageFactoryURL = "https://factory.talos.dev"
	// No installer repository default: the installer must match the disk's
	// platform, so each pool derives it (talosimage.DefaultInstallerRepository;
	// factory.talos.dev/openstack-installer with these defaults).

	// KubernetesVersion is the default Kubernetes minor of a tenant cluster.
	KubernetesVersion = "v1.35"

	// ImagePlatform is the Talos platform of the boot image. CAPK always attaches
	// a config-2 config drive, which only the openstack platform image reads.
	ImagePlatform = "openstack"
	// ImageArch is the CPU architecture of the boot image.
	ImageArch = "amd64"

	// VMServiceAccount is a worker VM's account: KubeVirt's default unless
	// the VM mounts a serviceAccount volume, which CAPK never does.
	VMServiceAccount = "default"

	// GoldenStorage is the default size of a golden DataVolume.
	GoldenStorage = "6Gi"
	// MinimumImageStorage is the smallest golden accepted: the raw metal,
	// nocloud and openstack Talos disks are 1246 MiB uncompressed.
	MinimumImageStorage = "1246Mi"
	// DiskSize is the default size of a worker's system disk.
	DiskSize = "20Gi"

	// Replicas is the default number of workers in a pool.
	Replicas int32 = 1
	// InstanceType is the default KubeVirt instance type of a worker when the
	// pool gives neither an instance type nor resources.
	InstanceType = "u1.medium"

	// The worker VM template's details every pool gets, as the cozystack
	// chart renders them (packages/apps/kubernetes-nodes/templates/
	// nodegroup.yaml:151-158, 176-177 @69da032).

	// EphemeralStorageLimit is the virt-launcher Pod's ephemeral-storage
	// limit: the worker's disks are persistent volumes and do not count.
	EphemeralStorageLimit = "2Gi"
	// EphemeralStorageRatio divides the limit into the request, as cozy-lib
	// does (packages/library/cozy-lib/templates/_resources.tpl @69da032).
	EphemeralStorageRatio = 40
	// SystemDiskPCIAddress is the system disk's guest PCI address.
	SystemDiskPCIAddress = "0000:07:00.0"
	// SystemDiskLogicalBlockSize and SystemDiskPhysicalBlockSize are the
	// guest's sector sizes: 4K physical, as replicated storage has.
	SystemDiskLogicalBlockSize  int32 = 512
	SystemDiskPhysicalBlockSize int32 = 4096
)

// MaxWorkerDisks is the Input's cloneHealth.maxWorkerDisks: 256 worker
// DataVolumes (CDI v1.65.0) are ~1.6 MB of request, room for a rollout to
// double them under the 4 MiB default (docs/performance.md).
const MaxWorkerDisks int32 = 256

// CloneBudget is the Input's cloneBudget.default: clones of one golden in
// flight on one StorageClass. Below the 20 concurrent clones at which CDI
// issue #2781 reports host-assisted failures and far below ceph-csi's
// 250-snapshot flattening threshold (minsnapshotsonimage), a temporary
// snapshot per RBD clone; on LINSTOR it keeps the transient peak (golden +
// disk per clone, times the replicas) to ten disks' worth; a 30-worker pool
// comes up ten clones at a time, a new one starting as one finishes
// (docs/platform.md, "Clone budget and capacity").
const CloneBudget int32 = 10

// LeakedClaimAfter is the Input's cloneBudget.leakedClaimAfter. A claim CDI
// runs a clone through (tmp-pvc-<target UID> in the golden's namespace) is
// Pending until the provisioner has cut the clone, seconds for a CSI clone,
// and Lost from the rebind until the clone populator's cleanup deletes it, a
// reconcile or two (CDI v1.65.0 pkg/controller/clone/planner.go,
// populators/clone-populator.go reconcileDone). The leaks reported stay for
// hours or for good: CDI #2323 (Pending, never bound), #3470 (Lost beside a
// DataVolume stuck in CSICloneInProgress), cozystack #2908 (a WaitForFirst-
// Consumer tmp-pvc Pending for hours). Ten minutes is far above the first
// and far below the second: a new pool waits at most that long behind claims
// no clone runs through.
const LeakedClaimAfter = 10 * time.Minute

// ImportStallAfter and CloneStallAfter are the Input's
// polling.stallAfter.imports and .clones: how long an import or a clone may
// stay at one phase, progress and restart count before it is reported
// stalled (internal/stall).
//
// Imports, 30 minutes: CDI v1.65.0's importer cancels an HTTP transfer after
// 10 minutes without a byte (pkg/importer/http-datasource.go
// NewHTTPDataSource starts pollProgress with a 10-minute idle time) and
// exits, and the kubelet restarts it with a back-off of at most 5 minutes,
// which CDI counts (status.restartCount): a stall mid-body moves the count
// within 15 minutes, and three restarts are reported as failing
// (cdistate.RestartLoopThreshold). Twice that cycle without any change is
// something with no timeout at all: a server that accepts the connection
// and never answers (createHTTPClient sets no timeout, so the HEAD in
// getContentLength and the GET in createHTTPReader wait for ever, before
// pollProgress starts), a claim or scratch claim that never binds, an
// importer pod never scheduled.
//
// Clones, 20 minutes: CDI issue #2721 shows clones that sat 16 minutes in
// CloneScheduled before they finished; a few minutes past that, a
// temporary claim left Pending or Lost (CDI #2323, #3470) or a CSI clone
// that never completes (#3939) is likelier than a slow clone.
const (
	ImportStallAfter = 30 * time.Minute
	CloneStallAfter  = 20 * time.Minute
)

// The Cluster API defaults of a pool, the kubernetes-nodes chart's
// (packages/apps/kubernetes-nodes/values.yaml:38-42, 70-83 and
// templates/nodegroup.yaml:540-544 at cozystack/cozystack@69da032).
const (
	// MinReplicas is the autoscaler's floor when a pool sets only maxReplicas.
	MinReplicas int32 = 0
	// MaxNodeProvisionTime is how long the autoscaler waits for a new node.
	MaxNodeProvisionTime = "30m"
	// MaxUnhealthy is the share of unhealthy workers the MachineHealthCheck
	// tolerates before it stops remediating.
	MaxUnhealthy = "50%"
	// NodeStartupTimeout is how long a new worker may take to become Ready.
	NodeStartupTimeout = "20m"
	// ReadyUnknownTimeout and ReadyFalseTimeout are how long a Node may
	// report Ready=Unknown or Ready=False before its worker is replaced.
	ReadyUnknownTimeout = "5m"
	ReadyFalseTimeout   = "10m"
	// MaxUnavailable is how many workers a roll may take away at once.
	MaxUnavailable = "1"
)

// BootstrapMode is a pool's default Talos bootstrap mode: CABPT generates
// the worker config (a TalosControlPlane cluster).
const BootstrapMode = "Generate"

// The Join bootstrap mode's defaults: where cozystack's kubernetes chart and
// Kamaji publish a cluster's join facts, and the tenant network the chart
// configures (packages/apps/kubernetes-nodes/templates/talos-reconcile-job.yaml
// and _talosconfigtemplate.tpl, cozystack/cozystack@69da032 and @4206b9a).
const (
	JoinTalosSecretsSuffix      = "-talos-secrets"
	JoinTalosCASuffix           = "-talos-ca"
	JoinKubernetesCASuffix      = "-ca"
	JoinAPIServerServiceSuffix  = ""
	JoinDNSServiceNamespace     = "kube-system"
	JoinDNSServiceName          = "kube-dns"
	JoinManagementClusterDomain = "cozy.local"
	JoinClusterDomain           = "cluster.local"
	JoinPodSubnet               = "10.243.0.0/16"
	JoinServiceSubnet           = "10.95.0.0/16"
	JoinControlPlaneAPIVersion  = "controlplane.cluster.x-k8s.io/v1alpha1"
	JoinControlPlaneKind        = "KamajiControlPlane"
)
