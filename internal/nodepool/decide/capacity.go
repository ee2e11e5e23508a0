package decide

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/cozystack/function-worker-image/internal/capacity"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
)

// ReasonInsufficientStorageCapacity: the clones the pool would start do
// not fit in the free capacity its class publishes.
const ReasonInsufficientStorageCapacity = "InsufficientStorageCapacity"

// CapacityPlan is the capacity prediction of the clones this call starts.
type CapacityPlan struct {
	capacity.Prediction
	// Published is what the class publishes.
	Published capacity.Published
	// Golden is the size of the golden each clone starts from; zero when
	// the disks restore from the golden's snapshot (FromSnapshot) or are
	// copied from a golden on another class (Copy).
	Golden       resource.Quantity
	FromSnapshot bool
	Copy         bool
	// Disk is the worker disk's size.
	Disk resource.Quantity
	// Limited is true when fewer clones start than the budget allowed.
	Limited bool
}

// PredictCapacity predicts the transient peak of the clones the budget's
// decision starts on this call (a fixed pool's growth, an autoscaled
// pool's new headroom under its max, a roll's surge beyond what already
// runs) and, where fewer fit in what the class publishes, lowers the
// decision to what fits: the budget's rule, with room = what fits.
func PredictCapacity(pl Plan, cfg config.Config, b *BudgetPlan) CapacityPlan {
	p, d := b.Pool, &b.Decision
	current := ptr.Deref(p.Current, 0)
	var starting int32
	switch {
	case p.Autoscaled:
		current = ptr.Deref(p.Current, p.Min)
		starting = max(d.MaxSize-current, 0)
	case d.Replicas > current:
		starting = d.Replicas - current
	}
	rollStarting := int32(0)
	if p.Rolling {
		// A roll replaces at most the deployment's Machines: a fixed
		// pool's count, an autoscaled pool's current one (its Wanted is
		// the spec's replicas, which it does not set).
		size := p.Wanted
		if p.Autoscaled {
			size = current
		}
		rollStarting = max(min(d.MaxSurge+p.Unavailable, size)-d.InFlight.Own, 0)
	}
	sc := read.FindClass(pl.Required.StorageClasses, b.Class)
	replicas, from := capacity.Replicas(sc)
	cp := CapacityPlan{Published: capacity.Of(b.Class, pl.Required.StorageCapacities), Disk: pl.Shape.DiskSize}
	// A restore from the golden's snapshot makes the disk alone: CDI
	// restores it into CDI's claim and grows it there (clone/planner.go
	// planSmartCloneFromSnapshot), with no copy or snapshot of the golden
	// per clone, which is what the golden's term counts.
	// A copy from the golden on another class makes the disk alone on this
	// class: CDI's temporary claim in the golden's namespace has the
	// disk's class and size and becomes the disk (clone/planner.go
	// planHostAssistedFromPVC, createDesiredClaim), a clone target gets no
	// scratch claim (upload-controller.go createScratchPvcNameFromPvc), and
	// the cdi-cloner pod reads the golden where it is.
	_, _, cp.FromSnapshot = read.RestoresSnapshot(pl.MachineTemplate.Desired)
	if cp.Copy = read.CopyOf(pl.MachineTemplate.Desired) != nil; !cp.FromSnapshot && !cp.Copy {
		cp.Golden = GoldenSize(pl, cfg)
	}
	cp.Prediction = capacity.Predict(starting+rollStarting, cp.Disk, cp.Golden, replicas, from, cp.Published)
	if cp.Fit >= cp.Starting {
		return cp
	}
	cp.Limited = true
	// What fits goes to the growth first, the roll's surge after it.
	grow := min(cp.Fit, starting)
	surgeRoom := cp.Fit - grow
	switch {
	case p.Autoscaled:
		d.MaxSize = min(p.Max, max(current+grow, current, p.Min))
		d.Waiting = p.Max - d.MaxSize
	case starting > 0:
		d.Replicas = current + grow
		d.Waiting = p.Wanted - d.Replicas
	}
	if rollStarting > surgeRoom {
		floor := int32(0)
		if p.Unavailable == 0 {
			floor = 1
		}
		d.MaxSurge = min(d.MaxSurge, max(d.InFlight.Own+surgeRoom-p.Unavailable, floor))
		d.SurgeLowered = d.MaxSurge < p.Surge
	}
	return cp
}

// GoldenSize is what a clone of the golden starts at: its claim's
// capacity, else its DataVolume's request, else the Input's golden
// storage.
func GoldenSize(pl Plan, cfg config.Config) resource.Quantity {
	if pvc := pl.Required.GoldenPVC; pvc != nil {
		if c, ok := pvc.Status.Capacity[corev1.ResourceStorage]; ok {
			return c
		}
	}
	if dv := pl.Required.GoldenDV; dv != nil && dv.Spec.Storage != nil {
		if r, ok := dv.Spec.Storage.Resources.Requests[corev1.ResourceStorage]; ok {
			return r
		}
	}
	return cfg.GoldenStorage
}
