package read

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/crossplane/function-sdk-go/resource/composed"

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
type CopyPath struct {
	Class       string
	Golden      string
	GoldenClass string
}

// copyOf is the copy path a machine template's disk asks for: its disk
// template carries both copyAnnotations. nil for any other template, and
// for none.
func CopyOf(u *composed.Unstructured) *CopyPath {
	disk := SystemDiskTemplate(u)
	if disk == nil {
		return nil
	}
	a, _, _ := unstructured.NestedStringMap(disk, "metadata", "annotations")
	if a[labels.AnnCDICloneType] != string(cdiv1.CloneStrategyHostAssisted) || a[labels.AnnCopyFromStorageClass] == "" {
		return nil
	}
	c := &CopyPath{GoldenClass: a[labels.AnnCopyFromStorageClass], Golden: a[labels.AnnGolden]}
	c.Class, _, _ = unstructured.NestedString(disk, "spec", "storage", "storageClassName")
	return c
}

// copyChosen reports a worker disk made by the copy path: KubeVirt gives
// each DataVolume its template's annotations.
func CopyChosen(dv cdiv1.DataVolume) bool {
	return dv.Annotations[labels.AnnCopyFromStorageClass] != ""
}
