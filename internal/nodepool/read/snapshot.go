package read

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
)

// Snapshot goldens (docs/platform.md, "Snapshot goldens"). Where the class a
// new clone template lands on prefers snapshot sources (its StorageProfile,
// goldensnapshot.Preferred), the template's disk restores from the golden's
// VolumeSnapshot, which the catalog takes once the golden imported, instead
// of cloning the golden's PVC: one snapshot and N restores, where a PVC
// clone takes a snapshot of the golden per worker on such drivers.
//
// Only a new template is rendered so: a running template is kept for the
// pool's unchanged request (request.go), so a pool that clones the PVC goes
// on doing so until its owner changes what it asks for, and one that
// restores from the snapshot goes on restoring from it if the profile later
// prefers PVCs. Which source a template's disk names is not part of the
// request: it is a fact of the cluster, as the golden's readiness is.

// Requirement names of the golden's snapshot and its content.
const (
	ReqGoldenSnapshot        = "golden-snapshot"
	ReqGoldenSnapshotContent = "golden-snapshot-content"
)

// restoresSnapshot reports whether a machine template's system disk
// restores from a VolumeSnapshot, and which.
func RestoresSnapshot(u *composed.Unstructured) (namespace, name string, ok bool) {
	m := SystemDiskTemplate(u)
	namespace, _, _ = unstructured.NestedString(m, "spec", "source", "snapshot", "namespace")
	name, _, _ = unstructured.NestedString(m, "spec", "source", "snapshot", "name")
	return namespace, name, name != ""
}

// systemDiskTemplate is a machine template's dataVolumeTemplate of the
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
