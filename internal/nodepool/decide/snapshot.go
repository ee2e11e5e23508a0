package decide

import (
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
	return &Hold{Reason: ReasonGoldenSnapshotNotReady, Message: msgGoldenSnapshotNotReady(p, img, d)}
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
