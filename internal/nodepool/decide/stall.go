package decide

import (
	"fmt"
	"strings"
	"time"

	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/stall"
)

// ReasonCloneStalled is the CloneHealthy reason of worker disks that stayed
// in a clone phase, unmoved, for the Input's polling.stallAfter.clones.
const ReasonCloneStalled = "CloneStalled"

// ReasonImportStalled is the CloneHealthy reason of worker disks on the
// HTTP path that stayed in an import phase, unmoved, for the Input's
// polling.stallAfter.imports: each imports the image from the Image
// Factory itself, which is where a factory's stall bites (cozystack #3244).
const ReasonImportStalled = "ImportStalled"

// CloneInFlight is one of the pool's worker disks in a clone or import
// phase: when it was first seen at its phase, progress and restarts, and
// whether that is the bound of its kind ago.
type CloneInFlight struct {
	DataVolume string
	stall.Record
	// Import is true for a disk importing over HTTP rather than cloning.
	Import  bool
	Stalled bool
}

// TrackClones records each worker disk in a clone phase (stall.Cloning) or
// an import phase (stall.Importing) from the previous status's record of
// the same disk (status.image.clones), kept while the disk has not moved.
// CDI gives up on no clone: CDI #2721 shows one 16 minutes in
// CloneScheduled, #3470 one left in RebindInProgress with its temporary
// claim Lost. An importer that receives no headers waits for ever, and one
// whose body stalls is restarted after 10 minutes without a byte, which
// moves the disk (its restart count): a factory that stalls at the same
// point every time is told by the restarts. Disks this call did not read
// (a settled pool healthy when last read, read/reads.go) have no record, so a
// settled pool's status lists none; a disk waiting for a missing source is
// CloneWithoutSource's to report, not a stall. dvs are sorted by name.
func TrackClones(dvs []cdiv1.DataVolume, prev []v1alpha1.CloneProgress, now time.Time, bounds config.StallBounds) []CloneInFlight {
	before := make(map[string]v1alpha1.CloneProgress, len(prev))
	for _, c := range prev {
		before[c.DataVolume] = c
	}
	var out []CloneInFlight
	for i := range dvs {
		dv := &dvs[i]
		importing := stall.Importing(dv)
		if !importing && (!stall.Cloning(dv) || isCloneWithoutSource(*dv)) {
			continue
		}
		c := before[dv.Name]
		rec, ok := stall.Track(stall.Recorded(c.Phase, c.Progress, c.Restarts, c.ProgressSince), stall.Of(dv), now)
		if !ok {
			continue
		}
		after := bounds.Clones
		if importing {
			after = bounds.Imports
		}
		out = append(out, CloneInFlight{DataVolume: dv.Name, Record: rec, Import: importing, Stalled: rec.Stalled(now, after)})
	}
	return out
}

// stalledClonesText names the stalled disks, where each stopped, and what
// to check: CDI's temporary claim of a CSI clone or snapshot is
// tmp-pvc-<UID of the disk's PVC> in the source's namespace
// (pkg/controller/clone/planner.go createDesiredClaim, in the namespace of
// the VolumeCloneSource, which the DataVolume controller creates in the
// source's: datavolume/clone-controller-base.go reconcileVolumeCloneSourceCR).
func stalledClonesText(p pool.Pool, img pool.Image, clones []CloneInFlight, bounds config.StallBounds) string {
	stuck := stalledDisks(clones, false)
	if len(stuck) == 0 {
		return ""
	}
	source := "its golden's namespace"
	if img.GoldenNamespace != "" {
		source = "namespace " + img.GoldenNamespace
	}
	return fmt.Sprintf("worker DataVolumes %s in namespace %s have not moved for at least %s (Input polling.stallAfter.clones), and CDI gives up on no clone: check each one's PVC events (kubectl -n %s describe pvc <name>) and CDI's temporary claim tmp-pvc-<UID of that PVC> in %s, which a storage backend under load can leave Pending or Lost (CDI #2323, #3470); a disk in PendingPopulation waits for its VM to be scheduled. CDI continues once the claim binds; a disk that cannot is replaced by deleting its Machine",
		strings.Join(stuck, ", "), p.Namespace, stall.Bound(bounds.Clones), p.Namespace, source)
}

// stalledImportsText names the stalled disks on the HTTP path and the
// fixes: CDI's importer (pkg/importer/http-datasource.go, v1.65.0) has no
// timeout for response headers and gives up on a body only after 10
// minutes without a byte, so a factory that accepts the connection and
// sends nothing holds the disk for ever; CDI names the importer pod
// importer-<claim name> (pkg/controller/import-controller.go
// createImporterPod; importer-prime-<claim UID> on the populator path).
func stalledImportsText(p pool.Pool, clones []CloneInFlight, bounds config.StallBounds) string {
	stuck := stalledDisks(clones, true)
	if len(stuck) == 0 {
		return ""
	}
	return fmt.Sprintf("worker DataVolumes %s in namespace %s have not moved for at least %s (Input polling.stallAfter.imports): each imports the image from the Image Factory itself, and CDI's importer has no timeout for response headers and gives up on a body only after 10 minutes without a byte. Check the importer pods (kubectl -n %s get pods -l app=containerized-data-importer) and that the factory serves the image, then delete a stuck importer pod so CDI starts a new attempt; or point spec.talos.imageFactoryURL at a mirror that answers; or, to import the image once for every worker, move the pool to osImage.builtin (a golden of the XWorkerImageCatalog, cloned per worker)",
		strings.Join(stuck, ", "), p.Namespace, stall.Bound(bounds.Imports), p.Namespace)
}

// stalledDisks names the stalled disks of one kind with where each stopped.
func stalledDisks(clones []CloneInFlight, imports bool) []string {
	var stuck []string
	for _, c := range clones {
		if !c.Stalled || c.Import != imports {
			continue
		}
		at := c.Phase
		if c.Progress != "" && c.Progress != "N/A" {
			at += ", " + c.Progress
		}
		stuck = append(stuck, fmt.Sprintf("%s (%s)", c.DataVolume, at))
	}
	return stuck
}
