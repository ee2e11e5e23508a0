package decide

import (
	"cmp"
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cozystack/function-worker-image/internal/cdistate"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/stall"
	"github.com/cozystack/function-worker-image/internal/talosimage"
)

// Reasons a gate holds a new or changed template back. They are also the
// WorkerImageReady condition's reasons.
const (
	ReasonGoldenMissing        = "GoldenMissing"
	ReasonGoldenImporting      = "GoldenImporting"
	ReasonGoldenFailing        = "GoldenFailing"
	ReasonGoldenStalled        = "GoldenStalled"
	ReasonGoldenFailed         = "GoldenFailed"
	ReasonStorageClassMismatch = "StorageClassMismatch"
	ReasonDiskTooSmall         = "DiskTooSmall"
	ReasonCloneNotAuthorized   = "CloneNotAuthorized"
	// ReasonArchitectureNotAdmitted: KubeVirt would refuse the pool's VMs
	// for their architecture (multiarch.go).
	ReasonArchitectureNotAdmitted = "ArchitectureNotAdmitted"
)

// The messages of the gates, one builder per reason, beside the reasons:
// each names the pool, the golden, what CDI or KubeVirt would do, and the
// fix. The gates (gate.go) decide; these only say it.

func msgGoldenMissing(p pool.Pool, golden string, img pool.Image) string {
	return fmt.Sprintf("Node pool %q clones golden image %q (schematicID %s, version %s), which exists neither as a DataVolume nor as a PVC, so the new worker template is held back and the pool's existing resources are kept as they are. Add an entry for this schematicID and version to the XWorkerImageCatalog, or switch the pool to osImage.factory.",
		p.Ref(), golden, img.SchematicID.Value, img.Version.Value)
}

// msgGoldenArchitectureMissing names the catalog field that adds the
// pool's architecture.
func msgGoldenArchitectureMissing(p pool.Pool, img pool.Image, c read.GoldenChoice) string {
	base := img.GoldenNamespace + "/" + talosimage.GoldenName(img.SchematicID.Value, img.Version.Value)
	has := fmt.Sprintf("golden %s does not exist either", base)
	if c.Base.Exists {
		has = fmt.Sprintf("golden %s is %s", base, cmp.Or(c.Base.Arch, "of another architecture"))
	}
	return fmt.Sprintf("Node pool %q runs %s workers (%s) and clones the golden of schematicID %s, version %s for %s, %q, which the catalog does not keep (%s), so the new worker template is held back and the pool's existing resources are kept as they are: a worker would boot a disk of another architecture. Add %s to the XWorkerImageCatalog's spec.architectures, or to architectures of its images[] entry for this schematicID and version, or switch the pool to osImage.factory.",
		p.Ref(), c.Arch, img.Arch.Field, img.SchematicID.Value, img.Version.Value, c.Arch, img.GoldenNamespace+"/"+c.Name, has, c.Arch)
}

// msgArchitectureNotAdmitted says why KubeVirt would refuse the pool's VMs,
// or why the function cannot tell, and both fixes: the feature gate, or a
// pool of the control plane's architecture.
func msgArchitectureNotAdmitted(p pool.Pool, img pool.Image, kv read.KubeVirtGate) string {
	const fix = "Enable the MultiArchitecture feature gate in the KubeVirt CR's spec.configuration.developerConfiguration.featureGates"
	var why, other string
	switch {
	case kv.Unreadable != "":
		why = fmt.Sprintf("the KubeVirt CR %s cannot be read (%s), so whether KubeVirt admits it is unknown", kv.Name, kv.Unreadable)
		other = "or use a pool of the control plane's architecture (leave spec.architecture unset for the Input's image.arch)"
	case kv.Default == "":
		why = fmt.Sprintf("the KubeVirt CR %s has the MultiArchitecture feature gate off and reports no control plane architecture yet (status.defaultArchitecture), so whether KubeVirt admits it is unknown; the hold lifts once virt-operator reports it and it is %s", kv.Name, img.Arch.Value)
		other = "or use a pool of the control plane's architecture (leave spec.architecture unset for the Input's image.arch)"
	default:
		why = fmt.Sprintf("the KubeVirt CR %s has the MultiArchitecture feature gate off and its control plane is %s (status.defaultArchitecture), and KubeVirt refuses a VM of another architecture than its control plane's without that gate", kv.Name, kv.Default)
		other = fmt.Sprintf("or use a pool of the control plane's architecture (spec.architecture %s, or unset when it is the Input's image.arch)", kv.Default)
	}
	return fmt.Sprintf("Node pool %q: %s is %q, which its worker VMs carry as spec.template.spec.architecture, but %s; so the new worker template is held back and the pool's existing resources are kept as they are. %s, %s.",
		p.Ref(), img.Arch.Field, img.Arch.Value, why, fix, other)
}

func msgGoldenFailed(p pool.Pool, golden string, st cdistate.State, src cdistate.Golden) string {
	fix := cdistate.GoldenFix(st.Cause(), src)
	if fix == "" {
		fix = st.Remedy()
	}
	return fmt.Sprintf("Node pool %q clones golden image %q, which CDI will not import (phase %s%s); cloning it would block the pool's workers indefinitely, so the new worker template is held back. To fix it: %s; or switch the pool to osImage.factory.",
		p.Ref(), golden, st.PhaseText(), cdiSays(st), fix)
}

// msgGoldenFailing says why the golden's import keeps failing, by the
// cause CDI reports (cdistate.Cause), with the catalog's fix.
func msgGoldenFailing(p pool.Pool, golden string, img pool.Image, st cdistate.State, src cdistate.Golden) string {
	if fix := cdistate.GoldenFix(st.Cause(), src); fix != "" {
		return fmt.Sprintf("Node pool %q clones golden image %q, whose import keeps failing (phase %s, %d importer restarts%s), so the new worker template is held back and the pool's existing resources are kept as they are. The catalog's operator can fix it: %s; or switch the pool to osImage.factory.",
			p.Ref(), golden, st.PhaseText(), st.Restarts, cdiSays(st), fix)
	}
	return fmt.Sprintf("Node pool %q clones golden image %q, whose import keeps failing (phase %s, %d importer restarts%s); the new worker template is held back until an import attempt succeeds, which lifts the hold by itself. Check the importer pod logs in namespace %s (an unreachable Image Factory is the usual cause), or switch the pool to osImage.factory.",
		p.Ref(), golden, st.PhaseText(), st.Restarts, cdiSays(st), img.GoldenNamespace)
}

// msgGoldenStalled says where the golden's import stopped, as the catalog
// found it (stall.Mark), what CDI says, and the catalog's fix.
func msgGoldenStalled(p pool.Pool, golden string, st cdistate.State, mark stall.Mark, src cdistate.Golden) string {
	at := "phase " + st.PhaseText()
	if st.Progress != "" {
		at += ", " + st.Progress
	}
	cause := st
	cause.Reason, cause.Message = st.StallCause()
	return fmt.Sprintf("Node pool %q clones golden image %q, whose import has not moved for at least %s (the catalog's polling.stallAfter.imports; %s, %d importer restarts%s), so the new worker template is held back and the pool's existing resources are kept as they are. The catalog's operator can fix it: %s; or switch the pool to osImage.factory.",
		p.Ref(), golden, stall.Bound(mark.After), at, st.Restarts, cdiSays(cause), cdistate.StalledFix(st, src))
}

func msgGoldenImporting(p pool.Pool, golden string, img pool.Image, st cdistate.State, progress string) string {
	if st.Awaits != "" {
		return fmt.Sprintf("Node pool %q clones golden image %q, which CDI has not started importing (phase %s%s): %s. The new worker template is held back until the golden is Succeeded and the pool's existing resources are kept as they are; if that StorageClass is not on its way, correct the golden's storageClass in the XWorkerImageCatalog.",
			p.Ref(), golden, st.PhaseText(), cdiSays(st), st.Awaits)
	}
	return fmt.Sprintf("Node pool %q clones golden image %q, which is still importing (phase %s%s); the new worker template is held back until the golden is Succeeded and the pool's existing resources are kept as they are. No action is needed; if the import never finishes, check the importer pod in namespace %s.",
		p.Ref(), golden, st.PhaseText(), progress, img.GoldenNamespace)
}

func msgStorageClassMismatch(p pool.Pool, img pool.Image, poolClass, goldenClass pool.Class, detail string) string {
	return fmt.Sprintf("Node pool %q is on StorageClass %q (from %s) but its golden image %q is on %q (from %s); across StorageClasses CDI falls back to a host-assisted copy over the pod network or leaves the clone to the CSI driver, which can hang, so the new worker template is held back.%s Neither side can move in place: a golden's class is fixed for its lifetime and a pool's storageClass is immutable. %s; %s; or switch the pool to osImage.factory.",
		p.Ref(), poolClass.Name, poolClass.From, img.GoldenNamespace+"/"+img.GoldenName, goldenClass.Name, goldenClass.From, detail, classFix(img, poolClass), copyFix(poolClass.Name))
}

// classFix is the StorageClassMismatch fix that keeps a golden on the
// pool's class (goldenchoice.go): a pool that names its class clones it.
func classFix(img pool.Image, poolClass pool.Class) string {
	golden := img.GoldenNamespace + "/" + read.ClassGoldenName(img, poolClass.Name)
	list := fmt.Sprintf("Add %q to the XWorkerImageCatalog's spec.storageClasses (or to images[].storageClasses of schematicID %s, version %s)", poolClass.Name, img.SchematicID.Value, img.Version.Value)
	if poolClass.From == "spec.storageClass" {
		return fmt.Sprintf("%s: the catalog then keeps golden %s on that class, which this pool clones as soon as it is Succeeded (a node-local class cannot serve clones to every node: for one, copy instead)", list, golden)
	}
	return fmt.Sprintf("%s and create the pool with spec.storageClass %q: a pool that names its class clones the golden the catalog keeps on it, %s", list, poolClass.Name, golden)
}

func msgDiskTooSmall(p pool.Pool, img pool.Image, diskSize resource.Quantity, goldenStorage *resource.Quantity) string {
	return fmt.Sprintf("Node pool %q: spec.diskSize %s is smaller than golden image %q storage %s; a CDI clone target must be at least the source size, so the new worker template is held back. Raise spec.diskSize to %s or larger.",
		p.Ref(), diskSize.String(), img.GoldenNamespace+"/"+img.GoldenName, goldenStorage.String(), goldenStorage.String())
}

func msgCloneNotAuthorized(p pool.Pool, img pool.Image, serviceAccount string) string {
	return fmt.Sprintf("Node pool %q: its worker VMs run as service account %q of namespace %s, which may not clone golden image %q yet: no clone RoleBinding in namespace %s grants it create on cdi.kubevirt.io datavolumes/source for that golden, and KubeVirt would refuse every worker disk (UnauthorizedDataVolumeCreate). The worker template is composed, and its Usage of the golden asks for the grant (label workerimage.cozystack.io/clone-grant-request), so the XWorkerImageCatalog that lists the golden binds the namespace on its next reconcile; the MachineDeployment is held until then. If this persists, check that a catalog lists the golden, or set the Input's cloneRBAC.waitForGrant to false when the platform grants the clone permission itself.",
		p.Ref(), serviceAccount, p.Namespace, img.GoldenNamespace+"/"+img.GoldenName, img.GoldenNamespace)
}

// ReasonTooManyWorkerDisks is the CloneHealthy reason of a pool whose worker
// disks were not read: more than the Input's cloneHealth.maxWorkerDisks.
const ReasonTooManyWorkerDisks = "TooManyWorkerDisks"

func MsgTooManyWorkerDisks(p pool.Pool, disks, limit int32) string {
	return fmt.Sprintf("Node pool %q runs up to %d workers, one disk each, more than the %d (Input cloneHealth.maxWorkerDisks) whose DataVolumes one call reads: Crossplane sends each whole (~6 KiB as CDI leaves it) and a request above the function's --max-recv-message-size (4 MiB by default) is refused, which would stop the pool from reconciling. Stuck or host-assisted clones of this pool are not reported; split the pool, or raise cloneHealth.maxWorkerDisks together with --max-recv-message-size (about 600 disks fit in 4 MiB).", p.Ref(), disks, limit)
}
