package decide

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/cdistate"
	"github.com/cozystack/function-worker-image/internal/cloneplacement"
	"github.com/cozystack/function-worker-image/internal/cloneplan"
	"github.com/cozystack/function-worker-image/internal/goldensnapshot"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/stall"
	"github.com/cozystack/function-worker-image/internal/talosimage"
)

// Hold is why a gate holds the change back. A nil *Hold is an open gate.
type Hold struct {
	Reason  string
	Message string
	// DeploymentOnly holds only the MachineDeployment: the new templates are
	// what makes the catalog grant the clone the deployment waits for.
	DeploymentOnly bool
}

// decideHold is what holds the pool back: the first of its holds that
// applies, in this order, which is the order that wins:
//  1. adoption: an existing pool another tool made would roll, or another
//     controller owns it (adopt.go); nothing is composed;
//  2. KubeVirt's admission of the VM's architecture (multiarch.go):
//     without it no VM runs, whatever it clones;
//  3. the clone gates of a new clone template: the golden's architecture,
//     readiness, class and size (gate.go);
//  4. the golden's snapshot, for a template restoring from it (snapshot.go);
//  5. the clone pre-flight: what CDI would do with the clone it is
//     predicted to make, a CSI clone on a node-local class last
//     (preflight.go);
//  6. an unknown node size (reservations.go);
//  7. the Join mode's holds, which hold everything (joinplan.go);
//  8. the clone grant, which holds the deployment alone (gate.go).
//
// Only a new or changed disk template waits for its golden (2-5): one that
// is composed, or adopted, runs already. The clone prediction is returned
// whenever the pre-flight looked at it.
func decideHold(in Input, pl Plan, gate GateInput, adoption, sizeHold *Hold) (*Hold, cloneplan.Plan) {
	p, img, s, w := pl.Pool, pl.Image, pl.Shape, pl.Required
	_, composed := pl.Composed.Resources[read.MachineTemplateResource(pl.MachineTemplate.Name)]
	newTemplate := !composed && pl.Adopted == nil
	var arch, clone, snapshot, preflight, join, grant *Hold
	var cp cloneplan.Plan
	if newTemplate && in.Reads.KubeVirt {
		arch = GateOnMultiArchitecture(p, img, w.KubeVirt)
	}
	if arch == nil && newTemplate && img.Source == pool.SourceClone {
		clone = GateClone(gate)
		if clone == nil {
			snapshot = GateOnGoldenSnapshot(p, img, pl.Snapshot)
		}
		if clone == nil && snapshot == nil {
			cp = predict(pl, s, w)
			preflight = GateOnClonePlan(PreflightInput{
				Pool: p, Image: img, Class: pl.StorageClass.Name, AllowCopy: in.Config.AllowHostAssistedCopy, CopyChosen: pl.Copy != nil,
				GoldenWaived: gate.Cloned && !gate.Golden.Ready(), Recheck: in.Config.InProgressTTL,
				Placement: PlacementOf(gate.GoldenClass.Name, pl.StorageClass.Name, w),
			}, cp)
		}
	}
	if pl.Join != nil {
		join = JoinHold(pl.Join, p, s)
	}
	// The grant is checked whether or not the template is composed yet: a
	// pool's first template is composed while its deployment waits. A
	// deployment that already runs the current template has been let
	// through; holding it would change nothing but the pool's readiness
	// (say, when the catalog's RoleBinding goes with the catalog).
	running, _ := pl.Composed.InEffect()
	if img.Source == pool.SourceClone && in.Config.WaitForCloneGrant && running != pl.MachineTemplate.Name && pl.Adopted == nil {
		grant = GateOnCloneGrant(p, img, in.Config.VMServiceAccount, w, gate.Cloned)
	}
	return first(adoption, arch, clone, snapshot, preflight, sizeHold, join, grant), cp
}

// predict is the clone CDI is predicted to make of a new template's disk:
// a restore of the golden's snapshot, a copy the pool asked for, or a clone
// of the golden's PVC as CDI plans it.
func predict(pl Plan, s pool.Shape, w read.Required) cloneplan.Plan {
	switch {
	case pl.Snapshot.Use:
		return PredictSnapshotClone(pl.Image, pl.StorageClass.Name, s.DiskSize, w)
	case pl.Copy != nil:
		return PredictCopy(pl.Image, pl.StorageClass.Name, s.DiskSize, w)
	}
	return PredictClone(pl.Image, pl.StorageClass.Name, s.DiskSize, w)
}

// first is the first hold that applies.
func first(holds ...*Hold) *Hold {
	for _, h := range holds {
		if h != nil {
			return h
		}
	}
	return nil
}

// Hold reasons of adoption.
const (
	ReasonAdoptionWouldRoll        = "AdoptionWouldRoll"
	ReasonDeploymentOwnedElsewhere = "DeploymentOwnedElsewhere"
	ReasonTemplateOwnedElsewhere   = "TemplateOwnedElsewhere"
	ReasonAdopted                  = "Adopted"
)

// msgAdoptionWouldRoll says why an existing pool is not adopted, what
// differs, and how to accept the roll.
func msgAdoptionWouldRoll(p pool.Pool, e *read.Existing, diffs []string) string {
	more := ""
	if len(diffs) > maxDiffs {
		more = fmt.Sprintf(" and %d more", len(diffs)-maxDiffs)
		diffs = diffs[:maxDiffs]
	}
	return fmt.Sprintf("Node pool %q: MachineDeployment %s/%s exists (made by another tool, such as the kubernetes-nodes chart) and runs on templates that differ from what this pool asks for: %s%s. Adopting it would roll every worker, so nothing is composed and the pool keeps running as it is. Make the pool's spec match the running pool, or set spec.templateRevision to 1 to accept the roll onto this pool's templates.",
		p.Ref(), e.Deployment.GetNamespace(), e.Deployment.GetName(), strings.Join(diffs, "; "), more)
}

// copyFix is the StorageClassMismatch fix that chooses the copy path.
func copyFix(poolClass string) string {
	return fmt.Sprintf("or, to copy each worker disk from this golden by CDI's host-assisted clone (one full copy per worker over the pod network, in the cluster), list %q in the Input's clonePreflight.hostAssistedCopy.storageClasses", poolClass)
}

// Gate states, as written to status.gate.state.
const (
	GateOpen = v1alpha1.GateOpen
	GateHeld = v1alpha1.GateHeld
)

// cdiSays quotes CDI's reason and message, when it gave one.
func cdiSays(st cdistate.State) string {
	switch {
	case st.Reason != "" && st.Message != "":
		return fmt.Sprintf(", CDI says %s: %q", st.Reason, st.Message)
	case st.Reason != "":
		return ", CDI says " + st.Reason
	}
	return ""
}

func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// Reasons of the Join mode: the holds, and JoinFactsCurrent's.
const (
	ReasonJoinFactsMissing   = "JoinFactsMissing"
	ReasonJoinFactsInvalid   = "JoinFactsInvalid"
	ReasonControlPlaneBehind = "ControlPlaneBehind"
	ReasonJoinFactsCurrent   = "FactsCurrent"
	ReasonJoinFactsChanged   = "JoinFactsChanged"
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
// fix. The gates (gate.go, preflight.go, ...) decide; these only say it.

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
// pool's class (read/goldenchoice.go): a pool that names its class clones it.
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

// The Join mode's holds' messages name objects and keys, never a value of a
// Secret.

func msgJoinFactsMissing(p pool.Pool, missing, invalid []string) string {
	extra := ""
	if len(invalid) > 0 {
		extra = " Also unusable: " + strings.Join(invalid, "; ") + "."
	}
	return fmt.Sprintf("Node pool %q builds its workers' Talos config from cluster %q's join facts (bootstrap mode Join), and these are not there yet: %s. The pool's new or changed templates are held back and its existing resources are kept as they are; the hold lifts by itself once the control plane publishes them. If the cluster's control plane publishes them under other names, set the function Input's join options; if the cluster has a TalosControlPlane, set spec.bootstrap.mode to Generate.%s",
		p.Ref(), p.Cluster, strings.Join(missing, "; "), extra)
}

func msgJoinFactsInvalid(p pool.Pool, invalid []string) string {
	return fmt.Sprintf("Node pool %q builds its workers' Talos config from cluster %q's join facts (bootstrap mode Join), and these cannot be used: %s. A worker would not join with them, so the pool's new or changed templates are held back and its existing resources are kept as they are. Fix the objects named (the control plane's Secrets and Services).",
		p.Ref(), p.Cluster, strings.Join(invalid, "; "))
}

func msgControlPlaneBehind(p pool.Pool, r read.JoinRefs, version pool.Setting, controlPlane string) string {
	return fmt.Sprintf("Node pool %q runs Kubernetes %s (%s), ahead of its control plane %s %s/%s at %s: a kubelet may not be newer than its API server. A pool may lag its control plane (the control plane is upgraded first, then each pool), not lead it. The pool's change is held back and its existing resources are kept as they are; the hold lifts once the control plane runs %s or later, or set %s to at most the control plane's minor.",
		p.Ref(), version.Value, version.Field, r.ControlPlaneKind, r.Namespace, r.Cluster, controlPlane, version.Value, version.Field)
}

// Reasons the clone pre-flight holds a new template.
const (
	// ReasonHostAssistedCopy: CDI copies every disk over the pod network.
	// It has two meanings, one per condition, on purpose: on
	// WorkerImageReady and status.gate (Held) the pre-flight predicted a
	// copy nobody chose and holds the new template; on CloneHealthy (True)
	// the pool is on the copy path the Input chose (copy.go, health.go).
	ReasonHostAssistedCopy = "HostAssistedCopy"
	// ReasonCloneWouldFail: CDI would refuse the worker disks outright.
	ReasonCloneWouldFail = "CloneWouldFail"
	// ReasonClonePlanPending: CDI cannot plan the clone yet (no golden PVC,
	// status.capacity or StorageProfile) and retries; the pre-flight waits.
	ReasonClonePlanPending = "ClonePlanPending"
	// ReasonNodeLocalClass: the CSI driver would make every worker disk on
	// the golden's node, or none a worker scheduled elsewhere can use.
	ReasonNodeLocalClass = "NodeLocalClass"
)

// msgNodeLocalClass says which class confines the clones, by which
// statement, what that does to the workers at the class's binding mode,
// and the two ways out: a golden every node reaches, or copies.
func msgNodeLocalClass(p pool.Pool, golden string, plan cloneplan.Plan, pl cloneplacement.Placement) string {
	outcome := "each worker disk would be made on the golden's node, the only node that can attach it, and every worker VM would run on that one node"
	if pl.WaitForFirstConsumer {
		outcome = "CDI asks for each worker disk on the node its VM was scheduled to (volumeBindingMode WaitForFirstConsumer: it copies the claim's volume.kubernetes.io/selected-node onto the clone's claim and pins its prep pod there), but the driver makes it on the golden's node, so a worker scheduled on any other node never gets its disk"
	}
	return fmt.Sprintf("Node pool %q: CDI would have the CSI driver make each worker disk from golden image %q on StorageClass %q (%s, %s), and that class is node-local: it states %s, and %s. So %s; the new worker template is held back. To fix it, have the catalog keep this image on a StorageClass whose volumes every node can reach (its spec.storageClass, or the image entry's storageClass) and put the pool on that class; or keep the pool's disks on StorageClass %q and copy them over the pod network from a golden on such a class, which lands each disk on its worker's node: allow it for this class in the Input's clonePreflight.hostAssistedCopy.storageClasses.",
		p.Ref(), golden, pl.Class, plan.Strategy, plan.Via, pl.Statement, pl.Driver, outcome, pl.Class)
}

func msgClonePlanPending(p pool.Pool, golden, class string, b cloneplan.Blocked, fixes string, recheck time.Duration) string {
	return fmt.Sprintf("Node pool %q: CDI cannot plan the clone of golden image %q onto StorageClass %q yet, because %s (CDI reports %s: %q and retries). Until it can, the pre-flight cannot tell a CSI clone from a host-assisted copy, so the new worker template is held back, re-checked every %s (the Input's polling.inProgress), and the pool's existing resources are kept as they are. No action is needed, the hold lifts by itself; %s.",
		p.Ref(), golden, classText(class), b.Awaits, b.Reason, b.Message, recheck, orDefault(fixes, "if it persists, check the golden's PVC and the StorageClass's CDI StorageProfile"))
}

func classText(class string) string {
	if class == "" {
		return "<none>"
	}
	return class
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ReasonInstanceTypeMissing holds a pool it cannot size reservations by.
const ReasonInstanceTypeMissing = "InstanceTypeMissing"

func msgInstanceTypeMissing(p pool.Pool, name string) string {
	return fmt.Sprintf("Node pool %q runs on instance type %q, but no %s of that name exists, so the kubelet reservations (5%% of the node's memory and CPU) cannot be computed and KubeVirt could not start the workers either; the pool's new templates are held back and its existing resources are kept as they are. Create the instance type, or set spec.instanceType to one the cluster offers, or size the pool with spec.resources.",
		p.Ref(), name, pool.InstancetypeKind)
}

// ReasonGoldenSnapshotNotReady: the class prefers snapshot sources and the
// golden's VolumeSnapshot is not ready to use (not taken yet, pending,
// failed or being deleted); a new clone template waits for it.
const ReasonGoldenSnapshotNotReady = "GoldenSnapshotNotReady"

func msgDeploymentOwnedElsewhere(p pool.Pool, e *read.Existing, owner string) string {
	return fmt.Sprintf("Node pool %q: MachineDeployment %s/%s exists and another controller owns it (uid %s), so it cannot be composed; delete the other owner's pool, or give this pool another poolName.",
		p.Ref(), e.Deployment.GetNamespace(), e.Deployment.GetName(), owner)
}

func msgTemplateOwnedElsewhere(p pool.Pool, u *unstructured.Unstructured, o *metav1.OwnerReference) string {
	return fmt.Sprintf("Node pool %q: %s %s/%s, which the existing MachineDeployment runs on, is equivalent to what the pool asks for, but %s %s controls it, and an object has one controller, so the pool cannot compose it. Remove that entry of its metadata.ownerReferences (docs/platform.md, \"Migrating from the kubernetes-nodes chart\"); nothing rolls.",
		p.Ref(), u.GetKind(), u.GetNamespace(), u.GetName(), o.Kind, o.Name)
}

func msgCloneWouldFail(p pool.Pool, golden, class string, b cloneplan.Blocked, fixes string) string {
	return fmt.Sprintf("Node pool %q: CDI would refuse every worker disk cloned from golden image %q on StorageClass %q (%s: %s), so the new worker template is held back. To fix it, %s.",
		p.Ref(), golden, classText(class), b.Reason, b.Message, orDefault(fixes, "check the StorageClass and its CDI StorageProfile"))
}

// msgHostAssistedCopy says why CDI would copy, and the fixes: only a clone
// that must grow is fixed by a disk of the golden's size; a driver,
// snapshot class or volume mode is not.
func msgHostAssistedCopy(p pool.Pool, golden, class string, plan cloneplan.Plan, fixes string) string {
	why := "because " + plan.Via + " is copy"
	if plan.Fallback != nil {
		why = fmt.Sprintf("because its clone planner would fall back (%s: %q)", plan.Fallback.Reason, plan.Fallback.Message)
	}
	sameSize := ""
	if plan.Fallback != nil && plan.Fallback.Reason == cloneplan.ReasonNoVolumeExpansion {
		sameSize = "; or set diskSize to the golden's size"
	}
	return fmt.Sprintf("Node pool %q: CDI would clone each worker disk from golden image %q on StorageClass %q as a host-assisted copy over the pod network, %s, so the new worker template is held back. To get a CSI clone or a snapshot, %s%s; or, to accept the copies, set the Input's clonePreflight.allowHostAssistedCopy to true.",
		p.Ref(), golden, classText(class), why, orDefault(fixes, "set the StorageProfile's spec.cloneStrategy"), sameSize)
}

// msgGoldenSnapshotNotReady says what the golden's snapshot waits for, by
// its state, and what lets the pool through.
func msgGoldenSnapshotNotReady(p pool.Pool, img pool.Image, d SnapshotDecision) string {
	ref := img.GoldenRef()
	var next string
	switch d.State.Kind {
	case goldensnapshot.Missing:
		next = fmt.Sprintf("the catalog takes it once the golden has imported; if no XWorkerImageCatalog of this function keeps golden %s, or its Composition sets snapshotGoldens.enabled: false, none ever will: set snapshotGoldens.enabled: false in this pool's Composition too, or spec.dataImportCronSourceFormat: pvc on the StorageProfile", ref)
	case goldensnapshot.Deleting:
		next = "once it is gone the catalog takes a new one, and the pool proceeds when that one is readyToUse"
	case goldensnapshot.Failed:
		next = "the CSI snapshotter retries by itself; check the VolumeSnapshotContent and the snapshotter's logs, or set spec.dataImportCronSourceFormat: pvc on the StorageProfile to clone the golden's PVC instead"
	default:
		next = "the snapshot controller and the CSI driver finish it by themselves; the pool proceeds once it is readyToUse"
	}
	return fmt.Sprintf("Node pool %q: the new worker template restores its disks from golden image %q's VolumeSnapshot (%s), and %s: %s. Running workers are not affected.",
		p.Ref(), ref, d.Pref.Why, d.State.Describe(ref), next)
}
