package rules

import (
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MinPollingInterval is the shortest response TTL accepted: a shorter one
// would have Crossplane call the function in a tight loop.
const MinPollingInterval = time.Second

// PollingInterval checks one of the Input's response TTLs.
func PollingInterval(path *field.Path, d time.Duration) field.ErrorList {
	if d < MinPollingInterval {
		return field.ErrorList{field.Invalid(path, d.String(), "must be at least 1s; it is how long Crossplane waits before calling the function again")}
	}
	return nil
}

// MinStallBound is the shortest stall bound accepted: CDI refreshes a
// DataVolume's progress only every few seconds while its worker pod runs
// (controller-base.go reconcileProgressUpdate requeues after 2s), and a
// phase lasts at least a reconcile, so a shorter bound reports healthy
// imports and clones as stalled.
const MinStallBound = time.Minute

// StallBound checks one of the Input's polling.stallAfter bounds.
func StallBound(path *field.Path, d time.Duration) field.ErrorList {
	if d < MinStallBound {
		return field.ErrorList{field.Invalid(path, d.String(), "must be at least 1m; it is how long an import or a clone may go without its phase, progress or restart count changing before it is reported stalled")}
	}
	return nil
}
