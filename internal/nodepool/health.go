package nodepool

import (
	"fmt"
	"strings"

	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/internal/cdistate"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/labels"
)

// ConditionCloneHealthy reports how the pool's worker disks were cloned.
const ConditionCloneHealthy = "CloneHealthy"

// cloneWithoutSource is CDI's Bound and Ready reason for a clone whose source
// PVC is missing, which it waits for forever (pvc-clone-controller.go).
const cloneWithoutSource = cdistate.ReasonCloneWithoutSource

// cloneTypeCopy is the cloneType CDI records for a host-assisted copy.
const cloneTypeCopy = string(cdiv1.CloneStrategyHostAssisted)

// cloneHealth surfaces worker disks whose clone waits without a source,
// has not moved for polling.stallAfter.clones, or whose import over HTTP
// has not for polling.stallAfter.imports (clones, stall.go), or fell
// back to a host-assisted copy: CDI fails none of them, and each defeats the
// golden (a disk that never boots, one that copies the image per worker). Both are
// on the DataVolume: CDI copies the claim's cloneType onto it (CDI v1.65.0
// pvc-clone-controller.go, snapshot-clone-controller.go). A settled pool
// healthy when last read is not read again (reads.go).
//
// A copy the Input chose is no such surprise: a disk made on the copy path
// (copyChosen) is not listed, and copying, the copy path of the template
// the workers are made from, makes the condition True with reason
// HostAssistedCopy and a message that says what each worker costs. It
// comes from the template, not the disks, so a settled pool that reads
// none keeps saying it.
func cloneHealth(p pool, img image, dvs []cdiv1.DataVolume, clones []cloneInFlight, rd reads, limit int32, bounds config.StallBounds, copying *copyPath) compose.Condition {
	if rd.TooManyWorkers {
		return compose.Condition{Type: ConditionCloneHealthy, Status: compose.StatusUnknown, Reason: ReasonTooManyWorkerDisks, Message: msgTooManyWorkerDisks(p, rd.WorkerDisks, limit)}
	}
	var stuck, copied []string
	for _, dv := range dvs {
		switch {
		case isCloneWithoutSource(dv):
			stuck = append(stuck, dv.Name)
		case dv.Annotations[labels.AnnCDICloneType] == cloneTypeCopy && !copyChosen(dv):
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
		return compose.Condition{Type: ConditionCloneHealthy, Status: compose.StatusFalse, Reason: cloneWithoutSource, Message: fmt.Sprintf("Node pool %q: %s.", p.Ref(), strings.Join(msgs, "; "))}
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

// copyingResult is the Warning event of a pool that takes the copy path:
// CloneHealthy turns True with reason HostAssistedCopy, which
// compose.Transition reports no event for (it is no fault), yet every
// worker now costs a full copy of the image over the pod network, which the
// operator should see once. Only on the transition, as every result.
func copyingResult(c compose.Condition, previous []compose.ObservedCondition) (compose.Result, bool) {
	if c.Status != compose.StatusTrue || c.Reason != ReasonHostAssistedCopy {
		return compose.Result{}, false
	}
	if prev, ok := compose.ConditionOf(previous, c.Type); ok && prev.Status == string(c.Status) && prev.Reason == c.Reason {
		return compose.Result{}, false
	}
	return compose.Result{Severity: compose.SeverityWarning, Reason: c.Reason, Message: c.Message}, true
}
