package nodepool

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/cdistate"
	"github.com/cozystack/function-worker-image/internal/cloneplan"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/labels"
)

// The copy path an operator chooses (docs/platform.md, "When storage
// misbehaves: a copy from a golden on another class"). A pool on a class
// the Input lists in clonePreflight.hostAssistedCopy.storageClasses, whose
// golden is on another class, copies each worker disk from that golden by
// CDI's host-assisted clone instead of being held StorageClassMismatch: the
// only way a node-local class gets its disks from a golden every node
// reaches, still in the cluster and with no Image Factory at boot.
//
// The copy must be asked for. CDI copies on its own only on a driver,
// volume mode, expansion or snapshot-class mismatch or an override (CDI
// v1.65.0 clone/planner.go computeStrategyForSourcePVC); two classes of one
// driver get a cross-class CSI clone, which the provisioner can refuse and
// leave Pending (cozystack #2908). The new template's disk therefore carries
// cdi.kubevirt.io/cloneType: copy: CDI copies a DataVolume's annotations
// onto its claim (datavolume/controller-base.go newPersistentVolumeClaim)
// and its clone populator takes a saved strategy without planning
// (populators/clone-populator.go getCloneStrategy). That is per disk and
// per template, where the StorageProfile's cloneStrategy would turn every
// clone onto the class into a copy, whoever makes it.
//
// Only a new template asks: which path a template's disk takes is no part
// of the pool's request (request.go), as a snapshot source is not, so a
// running template is kept as it is and no pool rolls when the list
// changes.

// copyPath is a pool's copy of its golden from another class: the class
// its disks land on (listed), the golden and the golden's class.
type copyPath struct {
	Class       string
	Golden      string
	GoldenClass string
}

// chooseCopy is the copy path of a clone pool whose class the Input lists
// and whose golden exists on another class; nil otherwise. A pool on its
// golden's own class clones as CDI plans it, its fallbacks accepted or not
// by clonePreflight.allowHostAssistedCopy alone.
func chooseCopy(cfg config.Config, img image, golden cdistate.State, poolClass, goldenClass class) *copyPath {
	if img.Source != SourceClone || golden.Kind == cdistate.Missing || goldenClass.Name == "" ||
		poolClass.Name == goldenClass.Name || !cfg.CopiesOnto(poolClass.Name) {
		return nil
	}
	return &copyPath{Class: poolClass.Name, Golden: img.GoldenRef(), GoldenClass: goldenClass.Name}
}

// diskSource is what a new clone template's disk is made from: by default
// a clone of the golden's PVC as CDI plans it.
type diskSource struct {
	// FromSnapshot restores the golden's VolumeSnapshot (snapshot.go).
	FromSnapshot bool
	// Copy asks CDI for a host-assisted copy of the golden's PVC.
	Copy *copyPath
}

// clonesPVC reports the default: what Requirements renders.
func (d diskSource) clonesPVC() bool { return !d.FromSnapshot && d.Copy == nil }

// copyAnnotations are what a disk template of the copy path carries beside
// diskAnnotations: CDI's cloneType, which asks CDI for the copy, and the
// golden's class, which says on the disk and its template that the copy was
// chosen and from where (copyOf, cloneHealth).
func copyAnnotations(c *copyPath) map[string]string {
	return map[string]string{
		labels.AnnCDICloneType:         string(cdiv1.CloneStrategyHostAssisted),
		labels.AnnCopyFromStorageClass: c.GoldenClass,
	}
}

// copyOf is the copy path a machine template's disk asks for: its disk
// template carries both copyAnnotations. nil for any other template, and
// for none.
func copyOf(u *composed.Unstructured) *copyPath {
	disk := systemDiskTemplate(u)
	if disk == nil {
		return nil
	}
	a, _, _ := unstructured.NestedStringMap(disk, "metadata", "annotations")
	if a[labels.AnnCDICloneType] != string(cdiv1.CloneStrategyHostAssisted) || a[labels.AnnCopyFromStorageClass] == "" {
		return nil
	}
	c := &copyPath{GoldenClass: a[labels.AnnCopyFromStorageClass], Golden: a[labels.AnnGolden]}
	c.Class, _, _ = unstructured.NestedString(disk, "spec", "storage", "storageClassName")
	return c
}

// copyChosen reports a worker disk made by the copy path: KubeVirt gives
// each DataVolume its template's annotations.
func copyChosen(dv cdiv1.DataVolume) bool {
	return dv.Annotations[labels.AnnCopyFromStorageClass] != ""
}

// predictCopy is what CDI does with a worker disk that asks for a copy:
// the target predictClone builds, with the cloneType it carries.
func predictCopy(img image, class string, diskSize resource.Quantity, w world) cloneplan.Plan {
	in := cloneInput(img, class, diskSize, w)
	in.Target.CloneType = cdiv1.CloneStrategyHostAssisted
	return cloneplan.Predict(in)
}

// workersTemplate is the machine template the pool's workers are made from
// once this call is applied: the one the plan's deployment names when
// nothing holds it back, else the one the observed deployment runs; nil
// when that is not composed.
func (pl plan) workersTemplate() *composed.Unstructured {
	name, _ := pl.Observed.inEffect()
	if pl.Hold == nil && pl.MachineDeployment != nil {
		name = pl.MachineDeployment.Spec.Template.Spec.InfrastructureRef.Name
	}
	if name == "" {
		return nil
	}
	if name == pl.MachineTemplate.Name {
		return pl.MachineTemplate.Desired
	}
	return pl.Observed.Resources[machineTemplateResource(name)]
}

// copyFix is the StorageClassMismatch fix that chooses the copy path.
func copyFix(poolClass string) string {
	return fmt.Sprintf("or, to copy each worker disk from this golden by CDI's host-assisted clone (one full copy per worker over the pod network, in the cluster), list %q in the Input's clonePreflight.hostAssistedCopy.storageClasses", poolClass)
}

// msgCopying is CloneHealthy's message for a pool on the copy path.
func msgCopying(p pool, c *copyPath) string {
	return fmt.Sprintf("Node pool %q copies each worker disk from golden image %q on StorageClass %q onto StorageClass %q by CDI's host-assisted clone, as the Input's clonePreflight.hostAssistedCopy.storageClasses lists %q: a full copy of the image per worker over the pod network, at most the clone budget of class %q at once. This was chosen, not a fault; for CSI clones instead, put the pool's disks on the golden's class %q (a new pool: storageClass is immutable). Removing %q from the list holds the pool's next new template and changes no running one.",
		p.Ref(), c.Golden, c.GoldenClass, c.Class, c.Class, c.Class, c.GoldenClass, c.Class)
}
