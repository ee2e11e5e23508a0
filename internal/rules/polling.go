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
