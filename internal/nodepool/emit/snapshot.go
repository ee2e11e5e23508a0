package emit

import (
	"github.com/cozystack/function-worker-image/internal/goldensnapshot"
)

// snapshotUsageTarget is the Usage of the golden's VolumeSnapshot that a
// template restoring from it adds to its golden's (usage.go).
var snapshotUsageTarget = usageTarget{"volumesnapshot", goldensnapshot.APIVersion, goldensnapshot.Kind}
