package read

import (
	"maps"

	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/goldensnapshot"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/observed"
	"github.com/cozystack/function-worker-image/internal/required"
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

// Selectors are the pool's requirements: only what rd says this call reads
// (reads.go). MachineSets, few and telling which templates are in use, are
// read always; worker disks on the HTTP path too, since a pool that moved
// off a golden still has clone disks.
func Selectors(p pool.Pool, img pool.Image, instanceType string, cfg config.Config, rd Reads) required.Selectors {
	sel := required.Selectors{
		ReqMachineSets: required.ByLabels(clusterapi.APIVersion(cfg.ClusterAPIVersion), clusterapi.KindMachineSet, p.Namespace, map[string]string{clusterapi.LabelDeploymentName: p.DeploymentName()}),
	}
	if rd.Workers {
		// Not their PVCs: the DataVolumes carry what cloneHealth reads.
		sel[ReqWorkerDVs] = required.ByLabels(observed.CDIAPIVersion, observed.KindDataVolume, p.Namespace, map[string]string{labels.Pool: p.Hash()})
	}
	if rd.DiskClass && img.Source == pool.SourceClone {
		// The claims of this golden's disks: the class a clone was bound on.
		sel[ReqWorkerPVCs] = required.ByLabels(observed.CoreAPIVersion, observed.KindPVC, p.Namespace, map[string]string{labels.Pool: p.Hash(), labels.Golden: labels.GoldenHash(img.GoldenNamespace, img.GoldenName)})
	}
	if rd.Budget && img.Source == pool.SourceClone {
		// What the clones about to start are compared with (decide/capacity.go),
		// and the golden's claim and the classes they are sized from.
		sel[ReqStorageCapacities] = required.ByLabels(observed.StorageAPIVersion, pool.KindCSIStorageCapacity, "", map[string]string{})
		sel[ReqGoldenPVC] = required.ByName(observed.CoreAPIVersion, observed.KindPVC, img.GoldenNamespace, img.GoldenName)
		sel[ReqStorageClasses] = required.ByLabels(observed.StorageAPIVersion, observed.KindStorageClass, "", map[string]string{})
		// CDI's claims of the clones of this golden that run now: they
		// carry the target disk's labels (decide/budget.go).
		sel[ReqCloneClaims] = required.ByLabels(observed.CoreAPIVersion, observed.KindPVC, img.GoldenNamespace, map[string]string{labels.Golden: labels.GoldenHash(img.GoldenNamespace, img.GoldenName)})
	}
	if instanceType != "" {
		// What the kubelet reservations are computed from.
		sel[ReqInstancetype] = required.ByName(InstancetypeAPIVersion, pool.InstancetypeKind, "", instanceType)
	}
	if img.Source != pool.SourceClone {
		return sel
	}
	if rd.Clone {
		sel[ReqGoldenDataVolume] = required.ByName(observed.CDIAPIVersion, observed.KindDataVolume, img.GoldenNamespace, img.GoldenName)
		sel[ReqGoldenPVC] = required.ByName(observed.CoreAPIVersion, observed.KindPVC, img.GoldenNamespace, img.GoldenName)
		// The default-class markers are annotations, not labels, so every
		// class is read; there are few of them.
		sel[ReqStorageClasses] = required.ByLabels(observed.StorageAPIVersion, observed.KindStorageClass, "", map[string]string{})
		// What CDI's clone planner decides from: few objects, all read.
		everything := map[string]string{}
		sel[ReqStorageProfiles] = required.ByLabels(observed.CDIAPIVersion, observed.KindStorageProfile, "", everything)
		if cfg.ReadSnapshotClasses {
			sel[ReqSnapshotClasses] = required.ByLabels(observed.SnapshotAPIVersion, observed.KindVolumeSnapshotClass, "", everything)
		}
		if cfg.SnapshotGoldens {
			// The golden's VolumeSnapshot, by its name (decide/snapshot.go).
			sel[ReqGoldenSnapshot] = required.ByName(goldensnapshot.APIVersion, goldensnapshot.Kind, img.GoldenNamespace, img.GoldenName)
		}
		sel[ReqCDI] = required.ByLabels(observed.CDIAPIVersion, observed.KindCDI, "", everything)
		sel[ReqCDIConfig] = required.ByLabels(observed.CDIAPIVersion, observed.KindCDIConfig, "", everything)
	}
	if rd.Grant {
		// The catalogs' clone RBAC in the golden namespace, by its label.
		cloneRBAC := map[string]string{labels.CloneRBAC: "true"}
		sel[ReqCloneBindings] = required.ByLabels(pool.RbacAPIVersion, pool.KindRoleBinding, img.GoldenNamespace, cloneRBAC)
		sel[ReqCloneRoles] = required.ByLabels(pool.RbacAPIVersion, pool.KindClusterRole, "", cloneRBAC)
	}
	return sel
}

// asked is got without the requirements rd does not ask for.
func asked(got required.Resolved, rd Reads) required.Resolved {
	out := maps.Clone(got)
	if !rd.Clone {
		for _, n := range []string{ReqGoldenDataVolume, ReqGoldenPV, ReqStorageProfiles, ReqSnapshotClasses, ReqCDI, ReqCDIConfig, ReqGoldenSnapshot, ReqGoldenSnapshotContent} {
			delete(out, n)
		}
		if !rd.Budget {
			delete(out, ReqGoldenPVC)
			delete(out, ReqStorageClasses)
		}
	}
	if !rd.Budget {
		delete(out, ReqStorageCapacities)
	}
	if !rd.KubeVirt {
		delete(out, ReqKubeVirt)
	}
	if !rd.Grant {
		delete(out, ReqCloneBindings)
		delete(out, ReqCloneRoles)
	}
	return out
}
