package nodepool

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/cloneplan"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/goldensnapshot"
	"github.com/cozystack/function-worker-image/internal/required"
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
	reqGoldenSnapshot        = "golden-snapshot"
	reqGoldenSnapshotContent = "golden-snapshot-content"
)

// ReasonGoldenSnapshotNotReady: the class prefers snapshot sources and the
// golden's VolumeSnapshot is not ready to use (not taken yet, pending,
// failed or being deleted); a new clone template waits for it.
const ReasonGoldenSnapshotNotReady = "GoldenSnapshotNotReady"

// snapshotDecision is whether a new clone template restores from the
// golden's snapshot, and why.
type snapshotDecision struct {
	Use   bool
	Pref  goldensnapshot.Preference
	State goldensnapshot.State
}

// decideSnapshot follows the StorageProfile of the class the template lands
// on; the golden is on the same class (the StorageClass gate).
func decideSnapshot(cfg config.Config, img image, class string, w world) snapshotDecision {
	if img.Source != SourceClone || !cfg.SnapshotGoldens {
		return snapshotDecision{}
	}
	pref := goldensnapshot.Preferred(class, findProfile(w.Clone.Profiles, class))
	return snapshotDecision{Use: pref.Snapshot, Pref: pref, State: goldensnapshot.StateOf(w.GoldenSnapshot)}
}

// gateOnGoldenSnapshot holds a new template that restores from a snapshot
// not ready to use: CDI would refuse a failed one (common/util.go
// IsSnapshotValidForClone), and restoring from one not cut yet would wait
// on it anyway, with every new Machine.
func gateOnGoldenSnapshot(p pool, img image, d snapshotDecision) *hold {
	if !d.Use || d.State.Ready() {
		return nil
	}
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
	return &hold{Reason: ReasonGoldenSnapshotNotReady, Message: fmt.Sprintf("Node pool %q: the new worker template restores its disks from golden image %q's VolumeSnapshot (%s), and %s: %s. Running workers are not affected.",
		p.Ref(), ref, d.Pref.Why, d.State.Describe(ref), next)}
}

// predictSnapshotClone is what CDI will do with a worker disk restored from
// the golden's snapshot (cloneplan.PredictSnapshot), on the target
// predictClone builds.
func predictSnapshotClone(img image, class string, diskSize resource.Quantity, w world) cloneplan.Plan {
	return cloneplan.PredictSnapshot(cloneplan.SnapshotInput{
		SourceNamespace: img.GoldenNamespace,
		SourceName:      img.GoldenName,
		Snapshot:        w.GoldenSnapshot,
		Content:         w.GoldenSnapshotContent,
		Target:          cloneTargetFor(class, diskSize, w),
	})
}

// goldenSnapshotContent asks for the content the golden's snapshot is bound
// to, once the snapshot is read: CDI's planner compares its driver and
// source volume mode with the worker disk's class (clone/planner.go
// computeStrategyForSourceSnapshot).
func (c *call) goldenSnapshotContent(got required.Resolved) required.Selectors {
	if c.img.Source != SourceClone || !c.reads.Clone || !c.r.Config.SnapshotGoldens {
		return nil
	}
	for _, u := range got[reqGoldenSnapshot] {
		if !is(u, c.img.GoldenNamespace, c.img.GoldenName) {
			continue
		}
		name, _, _ := unstructured.NestedString(u.Object, "status", "boundVolumeSnapshotContentName")
		if name == "" {
			return nil
		}
		return required.Selectors{reqGoldenSnapshotContent: required.ByName(goldensnapshot.APIVersion, goldensnapshot.ContentKind, "", name)}
	}
	return nil
}

// restoresSnapshot reports whether a machine template's system disk
// restores from a VolumeSnapshot, and which.
func restoresSnapshot(u *composed.Unstructured) (namespace, name string, ok bool) {
	m := systemDiskTemplate(u)
	namespace, _, _ = unstructured.NestedString(m, "spec", "source", "snapshot", "namespace")
	name, _, _ = unstructured.NestedString(m, "spec", "source", "snapshot", "name")
	return namespace, name, name != ""
}

// systemDiskTemplate is a machine template's dataVolumeTemplate of the
// system disk, nil when it has none. It is the template's own map, not a
// copy (a copy of every dataVolumeTemplate was most of what the capacity,
// copy-path and snapshot checks allocated, several times a call): callers
// only read it.
func systemDiskTemplate(u *composed.Unstructured) map[string]any {
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
		if n, _, _ := unstructured.NestedString(m, "metadata", "name"); n == diskTemplateName {
			return m
		}
	}
	return nil
}

// snapshotUsageTarget is the Usage of the golden's VolumeSnapshot that a
// template restoring from it adds to its golden's (usage.go).
var snapshotUsageTarget = usageTarget{"volumesnapshot", goldensnapshot.APIVersion, goldensnapshot.Kind}
