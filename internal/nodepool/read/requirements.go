package read

import (
	"github.com/cozystack/function-worker-image/internal/labels"
)

// Adoption: a pool that composes no MachineDeployment yet may find one of
// its name that another tool made, the kubernetes-nodes chart above all
// (the same <cluster>-<pool> name). Composing ours in its place would
// point it at new template names, and Cluster API rolls a MachineDeployment
// whose template references change (MachineTemplateUpToDate,
// internal/controllers/machinedeployment/mdutil/util.go, v1.11.4). So the
// running templates are read, and kept when they are equivalent to what
// the pool asks for (templateDiffs); otherwise the pool is held, saying what
// differs, until its owner accepts the roll (spec.templateRevision).

// Requirement names of adoption.
const (
	ReqExistingDeployment = "existing-machinedeployment"
	ReqExistingMachine    = "existing-kubevirtmachinetemplate"
	ReqExistingBootstrap  = "existing-talosconfigtemplate"
)

// ReqCloneClaims are the claims CDI makes in the golden's namespace for the
// clones of the pool's golden that run now (clonebudget.InFlight.Others).
const ReqCloneClaims = "golden-clone-claims"

// ReqStorageCapacities are the CSIStorageCapacity objects of every driver,
// in every namespace: a driver publishes them in its own namespace, and
// only their storageClassName says which class they are of.
const ReqStorageCapacities = "csistoragecapacities"

// Instance type identifiers. The chart reads the same version
// (nodegroup.yaml:301@69da032, lookup "instancetype.kubevirt.io/v1beta1").
const (
	InstancetypeAPIVersion = "instancetype.kubevirt.io/v1beta1"
	ReqInstancetype        = "instancetype"
)

// Snapshot goldens (docs/platform.md, "Snapshot goldens"). Where the class a
// new clone template lands on prefers snapshot sources (its StorageProfile,
// goldensnapshot.Preferred), the template's disk restores from the golden's
// VolumeSnapshot, which the catalog takes once the golden imported, instead
// of cloning the golden's PVC: one snapshot and N restores, where a PVC
// clone takes a snapshot of the golden per worker on such drivers.
//
// Only a new template is rendered so: a running template is kept for the
// pool's unchanged ask (render/ask.go), so a pool that clones the PVC goes
// on doing so until its owner changes what it asks for, and one that
// restores from the snapshot goes on restoring from it if the profile later
// prefers PVCs. Which source a template's disk names is not part of the
// ask: it is a fact of the cluster, as the golden's readiness is.

// Requirement names of the golden's snapshot and its content.
const (
	ReqGoldenSnapshot        = "golden-snapshot"
	ReqGoldenSnapshotContent = "golden-snapshot-content"
)

// Requirement names.
// workerDVAnnotations are the annotations of a worker DataVolume clone
// health reads (decide/health.go): CDI's cloneType, and the copy path's mark
// (copyChosen), without which a disk the copy path made, once CDI records
// cloneType copy on it, reads as a fallback (HostAssistedClone, False):
// seen on the real chain (test/e2e TestCopyPathOnRealCDI).
var WorkerDVAnnotations = []string{labels.AnnCDICloneType, labels.AnnCopyFromStorageClass}

const (
	ReqGoldenDataVolume = "golden-datavolume"
	ReqGoldenPVC        = "golden-pvc"
	// ReqGoldenPV is the golden PVC's PV, by its name (goldenVolumeToRead).
	ReqGoldenPV        = "golden-pv"
	ReqStorageClasses  = "storageclasses"
	ReqWorkerDVs       = "worker-datavolumes"
	ReqWorkerPVCs      = "worker-pvcs"
	ReqMachineSets     = "machinesets"
	ReqCloneBindings   = "clone-rolebindings"
	ReqCloneRoles      = "clone-clusterroles"
	ReqStorageProfiles = "storageprofiles"
	ReqSnapshotClasses = "volumesnapshotclasses"
	ReqCDI             = "cdi"
	ReqCDIConfig       = "cdiconfig"
	// reqInstancetype (decide/reservations.go) is the pool's instance type.
)
