package emit

import (
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
)

// CopyingResult is the Warning event of a pool that takes the copy path:
// CloneHealthy turns True with reason HostAssistedCopy, which
// compose.Transition reports no event for (it is no fault), yet every
// worker now costs a full copy of the image over the pod network, which the
// operator should see once. Only on the transition, as every result.
func CopyingResult(c compose.Condition, previous []compose.ObservedCondition) (compose.Result, bool) {
	if c.Status != compose.StatusTrue || c.Reason != decide.ReasonHostAssistedCopy {
		return compose.Result{}, false
	}
	if prev, ok := compose.ConditionOf(previous, c.Type); ok && prev.Status == string(c.Status) && prev.Reason == c.Reason {
		return compose.Result{}, false
	}
	return compose.Result{Severity: compose.SeverityWarning, Reason: c.Reason, Message: c.Message}, true
}
