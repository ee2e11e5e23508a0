package decide

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cozystack/function-worker-image/internal/cloneplan"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/goldensnapshot"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
)

// SnapshotDecision is whether a new clone template restores from the
// golden's snapshot, and why.
type SnapshotDecision struct {
	Use   bool
	Pref  goldensnapshot.Preference
	State goldensnapshot.State
}

// DecideSnapshot follows the StorageProfile of the class the template lands
// on; the golden is on the same class (the StorageClass gate).
func DecideSnapshot(cfg config.Config, img pool.Image, class string, w read.Required) SnapshotDecision {
	if img.Source != pool.SourceClone || !cfg.SnapshotGoldens {
		return SnapshotDecision{}
	}
	pref := goldensnapshot.Preferred(class, read.FindProfile(w.Clone.Profiles, class))
	return SnapshotDecision{Use: pref.Snapshot, Pref: pref, State: goldensnapshot.StateOf(w.GoldenSnapshot)}
}

// GateOnGoldenSnapshot holds a new template that restores from a snapshot
// not ready to use: CDI would refuse a failed one (common/util.go
// IsSnapshotValidForClone), and restoring from one not cut yet would wait
// on it anyway, with every new Machine.
func GateOnGoldenSnapshot(p pool.Pool, img pool.Image, d SnapshotDecision) *Hold {
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
	return &Hold{Reason: ReasonGoldenSnapshotNotReady, Message: fmt.Sprintf("Node pool %q: the new worker template restores its disks from golden image %q's VolumeSnapshot (%s), and %s: %s. Running workers are not affected.",
		p.Ref(), ref, d.Pref.Why, d.State.Describe(ref), next)}
}

// PredictSnapshotClone is what CDI will do with a worker disk restored from
// the golden's snapshot (cloneplan.PredictSnapshot), on the target
// predictClone builds.
func PredictSnapshotClone(img pool.Image, class string, diskSize resource.Quantity, w read.Required) cloneplan.Plan {
	return cloneplan.PredictSnapshot(cloneplan.SnapshotInput{
		SourceNamespace: img.GoldenNamespace,
		SourceName:      img.GoldenName,
		Snapshot:        w.GoldenSnapshot,
		Content:         w.GoldenSnapshotContent,
		Target:          cloneTargetFor(class, diskSize, w),
	})
}
