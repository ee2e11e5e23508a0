package read

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
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
// of the pool's ask (render/ask.go), as a snapshot source is not, so a
// running template is kept as it is and no pool rolls when the list
// changes.

// CopyPath is a pool's copy of its golden from another class: the class
// its disks land on (listed), the golden and the golden's class.
type CopyPath struct {
	Class       string
	Golden      string
	GoldenClass string
}

// CopyOf is the copy path a machine template's disk asks for: its disk
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

// CopyChosen reports a worker disk made by the copy path: KubeVirt gives
// each DataVolume its template's annotations.
func CopyChosen(dv cdiv1.DataVolume) bool {
	return dv.Annotations[labels.AnnCopyFromStorageClass] != ""
}

// RestoresSnapshot reports whether a machine template's system disk
// restores from a VolumeSnapshot, and which.
func RestoresSnapshot(u *composed.Unstructured) (namespace, name string, ok bool) {
	m := SystemDiskTemplate(u)
	namespace, _, _ = unstructured.NestedString(m, "spec", "source", "snapshot", "namespace")
	name, _, _ = unstructured.NestedString(m, "spec", "source", "snapshot", "name")
	return namespace, name, name != ""
}

// SystemDiskTemplate is a machine template's dataVolumeTemplate of the
// system disk, nil when it has none. It is the template's own map, not a
// copy (a copy of every dataVolumeTemplate was most of what the capacity,
// copy-path and snapshot checks allocated, several times a call): callers
// only read it.
func SystemDiskTemplate(u *composed.Unstructured) map[string]any {
	if u == nil {
		return nil
	}
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates")
	dvts, _ := v.([]any)
	for _, d := range dvts {
		m, isMap := d.(map[string]any)
		if !isMap {
			continue
		}
		if n, _, _ := unstructured.NestedString(m, "metadata", "name"); n == pool.DiskTemplateName {
			return m
		}
	}
	return nil
}

// CloneSource is the golden a template clones from, read back from the
// annotations every clone template carries: kept templates may clone an
// older golden than the spec names now.
func CloneSource(u *composed.Unstructured) (namespace, name string, ok bool) {
	a := u.GetAnnotations()
	if a[labels.AnnSourceType] != string(pool.SourceClone) {
		return "", "", false
	}
	namespace, name, ok = strings.Cut(a[labels.AnnGolden], "/")
	return namespace, name, ok && namespace != "" && name != ""
}
