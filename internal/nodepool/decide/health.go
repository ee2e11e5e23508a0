package decide

import (
	"fmt"
	"strings"

	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/internal/cdistate"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
)

// msgCopying is CloneHealthy's message for a pool on the copy path.
func msgCopying(p pool.Pool, c *read.CopyPath) string {
	return fmt.Sprintf("Node pool %q copies each worker disk from golden image %q on StorageClass %q onto StorageClass %q by CDI's host-assisted clone, as the Input's clonePreflight.hostAssistedCopy.storageClasses lists %q: a full copy of the image per worker over the pod network, at most the clone budget of class %q at once. This was chosen, not a fault; for CSI clones instead, put the pool's disks on the golden's class %q (a new pool: storageClass is immutable). Removing %q from the list holds the pool's next new template and changes no running one.",
		p.Ref(), c.Golden, c.GoldenClass, c.Class, c.Class, c.Class, c.GoldenClass, c.Class)
}

// ConditionCloneHealthy reports how the pool's worker disks were cloned.
const ConditionCloneHealthy = "CloneHealthy"

// CloneWithoutSource is CDI's Bound and Ready reason for a clone whose source
// PVC is missing, which it waits for forever (pvc-clone-controller.go).
const CloneWithoutSource = cdistate.ReasonCloneWithoutSource

// cloneTypeCopy is the cloneType CDI records for a host-assisted copy.
const cloneTypeCopy = string(cdiv1.CloneStrategyHostAssisted)

// CloneHealth surfaces worker disks whose clone waits without a source,
// has not moved for polling.stallAfter.clones, or whose import over HTTP
// has not for polling.stallAfter.imports (clones, stall.go), or fell
// back to a host-assisted copy: CDI fails none of them, and each defeats the
// golden (a disk that never boots, one that copies the image per worker). Both are
// on the DataVolume: CDI copies the claim's cloneType onto it (CDI v1.65.0
// pvc-clone-controller.go, snapshot-clone-controller.go). A settled pool
// healthy when last read is not read again (read/reads.go).
//
// A copy the Input chose is no such surprise: a disk made on the copy path
// (copyChosen) is not listed, and copying, the copy path of the template
// the workers are made from, makes the condition True with reason
// HostAssistedCopy and a message that says what each worker costs. It
// comes from the template, not the disks, so a settled pool that reads
// none keeps saying it.
func CloneHealth(p pool.Pool, img pool.Image, dvs []cdiv1.DataVolume, clones []CloneInFlight, rd read.Reads, limit int32, bounds config.StallBounds, copying *read.CopyPath) compose.Condition {
	if rd.TooManyWorkers {
		return compose.Condition{Type: ConditionCloneHealthy, Status: compose.StatusUnknown, Reason: ReasonTooManyWorkerDisks, Message: MsgTooManyWorkerDisks(p, rd.WorkerDisks, limit)}
	}
	var stuck, copied []string
	for _, dv := range dvs {
		switch {
		case isCloneWithoutSource(dv):
			stuck = append(stuck, dv.Name)
		case dv.Annotations[labels.AnnCDICloneType] == cloneTypeCopy && !read.CopyChosen(dv):
			copied = append(copied, dv.Name)
		}
	}
	var msgs []string
	if len(stuck) > 0 {
		msgs = append(msgs, fmt.Sprintf("worker DataVolumes %s in namespace %s wait for a clone source that does not exist (CloneWithoutSource); restore the golden image through the XWorkerImageCatalog, or move the pool to an image that exists", strings.Join(stuck, ", "), p.Namespace))
	}
	stalled := stalledClonesText(p, img, clones, bounds)
	if stalled != "" {
		msgs = append(msgs, stalled)
	}
	imports := stalledImportsText(p, clones, bounds)
	if imports != "" {
		msgs = append(msgs, imports)
	}
	if len(copied) > 0 {
		msgs = append(msgs, fmt.Sprintf("worker DataVolumes %s in namespace %s were cloned by a host-assisted copy instead of a CSI clone (CDI's cloneType %s; the reason CDI gives is the %s annotation of each one's PVC); check that the golden and the pool share a StorageClass, CSI driver and volume mode, and that the class allows volume expansion", strings.Join(copied, ", "), p.Namespace, cloneTypeCopy, labels.AnnCDICloneFallbackReason))
	}
	switch {
	case len(stuck) > 0:
		return compose.Condition{Type: ConditionCloneHealthy, Status: compose.StatusFalse, Reason: CloneWithoutSource, Message: fmt.Sprintf("Node pool %q: %s.", p.Ref(), strings.Join(msgs, "; "))}
	case stalled != "":
		return compose.Condition{Type: ConditionCloneHealthy, Status: compose.StatusFalse, Reason: ReasonCloneStalled, Message: fmt.Sprintf("Node pool %q: %s.", p.Ref(), strings.Join(msgs, "; "))}
	case imports != "":
		return compose.Condition{Type: ConditionCloneHealthy, Status: compose.StatusFalse, Reason: ReasonImportStalled, Message: fmt.Sprintf("Node pool %q: %s.", p.Ref(), strings.Join(msgs, "; "))}
	case len(copied) > 0:
		return compose.Condition{Type: ConditionCloneHealthy, Status: compose.StatusFalse, Reason: "HostAssistedClone", Message: fmt.Sprintf("Node pool %q: %s.", p.Ref(), strings.Join(msgs, "; "))}
	case copying != nil:
		return compose.Condition{Type: ConditionCloneHealthy, Status: compose.StatusTrue, Reason: ReasonHostAssistedCopy, Message: msgCopying(p, copying)}
	}
	return compose.Condition{Type: ConditionCloneHealthy, Status: compose.StatusTrue, Reason: "NoCloneProblems", Message: fmt.Sprintf("No worker disk of node pool %q is waiting for a missing clone source or was cloned by a host-assisted copy.", p.Ref())}
}

func isCloneWithoutSource(dv cdiv1.DataVolume) bool {
	return cdistate.Of(&dv, nil).Kind == cdistate.WaitingForSource
}

// ReasonTooManyWorkerDisks is the CloneHealthy reason of a pool whose worker
// disks were not read: more than the Input's cloneHealth.maxWorkerDisks.
const ReasonTooManyWorkerDisks = "TooManyWorkerDisks"

func MsgTooManyWorkerDisks(p pool.Pool, disks, limit int32) string {
	return fmt.Sprintf("Node pool %q runs up to %d workers, one disk each, more than the %d (Input cloneHealth.maxWorkerDisks) whose DataVolumes one call reads: Crossplane sends each whole (~6 KiB as CDI leaves it) and a request above the function's --max-recv-message-size (4 MiB by default) is refused, which would stop the pool from reconciling. Stuck or host-assisted clones of this pool are not reported; split the pool, or raise cloneHealth.maxWorkerDisks together with --max-recv-message-size (about 600 disks fit in 4 MiB).", p.Ref(), disks, limit)
}
