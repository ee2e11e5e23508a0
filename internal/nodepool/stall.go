package nodepool

import (
	"fmt"
	"strings"
	"time"

	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/stall"
)

// ReasonCloneStalled is the CloneHealthy reason of worker disks that stayed
// in a clone phase, unmoved, for the Input's polling.stallAfter.clones.
const ReasonCloneStalled = "CloneStalled"

// cloneInFlight is one of the pool's worker disks in a clone phase: when it
// was first seen at its phase, progress and restarts, and whether that is
// polling.stallAfter.clones ago.
type cloneInFlight struct {
	DataVolume string
	stall.Record
	Stalled bool
}

// trackClones records each worker disk in a clone phase (stall.Cloning)
// from the previous status's record of the same disk (status.image.clones),
// kept while the disk has not moved. CDI gives up on no clone: CDI #2721
// shows one 16 minutes in CloneScheduled, #3470 one left in
// RebindInProgress with its temporary claim Lost. Disks this call did not
// read (a settled pool healthy when last read, reads.go) have no record, so
// a settled pool's status lists none; a disk waiting for a missing source is
// CloneWithoutSource's to report, not a stall. dvs are sorted by name.
func trackClones(dvs []cdiv1.DataVolume, prev []v1alpha1.CloneProgress, now time.Time, after time.Duration) []cloneInFlight {
	before := make(map[string]v1alpha1.CloneProgress, len(prev))
	for _, c := range prev {
		before[c.DataVolume] = c
	}
	var out []cloneInFlight
	for i := range dvs {
		dv := &dvs[i]
		if !stall.Cloning(dv) || isCloneWithoutSource(*dv) {
			continue
		}
		c := before[dv.Name]
		rec, ok := stall.Track(stall.Recorded(c.Phase, c.Progress, c.Restarts, c.ProgressSince), stall.Of(dv), now)
		if !ok {
			continue
		}
		out = append(out, cloneInFlight{DataVolume: dv.Name, Record: rec, Stalled: rec.Stalled(now, after)})
	}
	return out
}

// cloneProgress is status.image.clones.
func cloneProgress(clones []cloneInFlight) []v1alpha1.CloneProgress {
	if len(clones) == 0 {
		return nil
	}
	out := make([]v1alpha1.CloneProgress, 0, len(clones))
	for _, c := range clones {
		out = append(out, v1alpha1.CloneProgress{DataVolume: c.DataVolume, Phase: c.Phase, Progress: c.Progress, Restarts: c.Restarts, ProgressSince: stall.FormatSince(c.Since)})
	}
	return out
}

// stalledClonesText names the stalled disks, where each stopped, and what
// to check: CDI's temporary claim of a CSI clone or snapshot is
// tmp-pvc-<UID of the disk's PVC> in the source's namespace
// (pkg/controller/clone/planner.go createDesiredClaim, in the namespace of
// the VolumeCloneSource, which the DataVolume controller creates in the
// source's: datavolume/clone-controller-base.go reconcileVolumeCloneSourceCR).
func stalledClonesText(p pool, img image, clones []cloneInFlight, after time.Duration) string {
	var stuck []string
	for _, c := range clones {
		if !c.Stalled {
			continue
		}
		at := c.Phase
		if c.Progress != "" && c.Progress != "N/A" {
			at += ", " + c.Progress
		}
		stuck = append(stuck, fmt.Sprintf("%s (%s)", c.DataVolume, at))
	}
	if len(stuck) == 0 {
		return ""
	}
	source := "its golden's namespace"
	if img.GoldenNamespace != "" {
		source = "namespace " + img.GoldenNamespace
	}
	return fmt.Sprintf("worker DataVolumes %s in namespace %s have not moved for at least %s (Input polling.stallAfter.clones), and CDI gives up on no clone: check each one's PVC events (kubectl -n %s describe pvc <name>) and CDI's temporary claim tmp-pvc-<UID of that PVC> in %s, which a storage backend under load can leave Pending or Lost (CDI #2323, #3470); a disk in PendingPopulation waits for its VM to be scheduled. CDI continues once the claim binds; a disk that cannot is replaced by deleting its Machine",
		strings.Join(stuck, ", "), p.Namespace, stall.Bound(after), p.Namespace, source)
}
