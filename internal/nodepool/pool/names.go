package pool

import (
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/observed"
)

// AnnJoinBase is the hash of a Join TalosConfigTemplate's spec without the
// facts (joinBase), which tells a change of facts alone from one of the pool.
const AnnJoinBase = labels.Prefix + "join-base"

// Names inside the VM template. CAPK prefixes each DataVolume template name
// with the machine name, so every worker gets its own disk-system disk.
const (
	DiskTemplateName = "disk-system"
	SystemVolume     = "system"
	// HashLength hex characters of sha256 name a template: 40 bits make an
	// accidental collision between two revisions of one pool negligible.
	HashLength = 10
	// InstancetypeKind is the cluster-wide KubeVirt instance type kind.
	InstancetypeKind = "VirtualMachineClusterInstancetype"
	// CheckStrategyNone: Talos has no SSH for CAPK's bootstrap sentinel check.
	CheckStrategyNone = "none"
)

// AnnAsk records on each template the request it was rendered for
// (AskOf). A template that carries the pool's current ask is kept,
// whatever this release would render in its place.
const AnnAsk = "workerimage.cozystack.io/request"

// AnnRendering records on each template the RenderingRevision that rendered
// it; an adopted template, which another tool made, records 0.
const AnnRendering = "workerimage.cozystack.io/rendering"

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
