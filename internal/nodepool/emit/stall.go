package emit

import (
	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/stall"
)

// CloneProgress is status.image.clones.
func CloneProgress(clones []decide.CloneInFlight) []v1alpha1.CloneProgress {
	if len(clones) == 0 {
		return nil
	}
	out := make([]v1alpha1.CloneProgress, 0, len(clones))
	for _, c := range clones {
		out = append(out, v1alpha1.CloneProgress{DataVolume: c.DataVolume, Phase: c.Phase, Progress: c.Progress, Restarts: c.Restarts, ProgressSince: stall.FormatSince(c.Since)})
	}
	return out
}
