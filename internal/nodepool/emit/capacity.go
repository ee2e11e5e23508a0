package emit

import (
	"fmt"

	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
)

// CapacityText says what the prediction found, for CloneCapacity.
func CapacityText(cp decide.CapacityPlan, class string) string {
	if class == "" {
		return "the default class's free capacity is unknown"
	}
	if !cp.Known {
		return fmt.Sprintf("the free capacity of class %s is unknown: its driver publishes no CSIStorageCapacity for it", class)
	}
	free := fmt.Sprintf("class %s publishes %s free in %d CSIStorageCapacity segment(s)", class, cp.Free.String(), cp.Published.Segments)
	if cp.Starting == 0 {
		return free
	}
	per := fmt.Sprintf("each clone needs (disk %s + golden %s) × %d cop(ies) (%s) = %s", cp.Disk.String(), cp.Golden.String(), cp.Replicas, cp.ReplicasFrom, cp.PerClone.String())
	switch {
	case cp.FromSnapshot:
		per = fmt.Sprintf("each restore from the golden's snapshot needs disk %s × %d cop(ies) (%s) = %s", cp.Disk.String(), cp.Replicas, cp.ReplicasFrom, cp.PerClone.String())
	case cp.Copy:
		per = fmt.Sprintf("each host-assisted copy from the golden on another class needs disk %s × %d cop(ies) (%s) = %s", cp.Disk.String(), cp.Replicas, cp.ReplicasFrom, cp.PerClone.String())
	}
	if cp.TooLarge {
		return fmt.Sprintf("%s, but the disk of %s is larger than the largest volume one of its segments takes (%s, its maximumVolumeSize or, where it publishes none, its capacity)", free, cp.Disk.String(), cp.Published.LargestVolume.String())
	}
	if cp.Limited {
		return fmt.Sprintf("%s; %s; %d clone(s) were to start and %d fit", free, per, cp.Starting, cp.Fit)
	}
	h := cp.Headroom()
	return fmt.Sprintf("%s; %s; the %d starting need %s, leaving %s", free, per, cp.Starting, cp.Need.String(), h.String())
}
