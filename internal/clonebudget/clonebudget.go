// Package clonebudget bounds how many worker disks of one golden clone at
// once onto one StorageClass, across every pool, without state between
// calls: what is in flight is read from what the cluster reports each call.
//
// CDI bounds nothing: CDIConfigSpec has no concurrency field, and the clone
// controllers' MaxConcurrentReconciles (3) caps reconcile workers, not
// clones in flight (containerized-data-importer v1.65.0
// pkg/controller/datavolume/pvc-clone-controller.go). So a pool grows, and a
// roll surges, in steps a budget allows; docs/platform.md ("Clone budget and
// capacity") states the rule for operators.
package clonebudget

// InFlight is what the cluster reports of one golden's clones onto one
// StorageClass.
type InFlight struct {
	// Own are the pool's own: worker disks neither Succeeded nor Failed,
	// and Machines whose disk does not exist yet (it will clone).
	Own int32
	// Others are the other pools': the claims CDI makes in the golden's
	// namespace for each clone it runs (clone/planner.go createDesiredClaim
	// names them tmp-pvc-<target UID> and copies the target's labels), less
	// those CDI left behind (CountClaims).
	Others int32
}

// Total is every clone in flight.
func (f InFlight) Total() int32 { return f.Own + f.Others }

// Pool is how the pool asks to scale and roll.
type Pool struct {
	// Autoscaled pools have their replicas set by the cluster-autoscaler,
	// bounded by Max; fixed pools by Wanted.
	Autoscaled bool
	// Wanted is a fixed pool's spec replicas.
	Wanted int32
	// Current is the observed MachineDeployment's spec.replicas; nil before
	// the deployment exists or when it has none.
	Current *int32
	// Min and Max are an autoscaled pool's node-group size.
	Min, Max int32
	// Surge and Unavailable are the spec's rolling update as counts, scaled
	// as Cluster API scales a percentage (surge rounded up, unavailable
	// down: MachineDeployment resolveFencepostsOrDie).
	Surge, Unavailable int32
	// Rolling is a deployment whose Machines are being replaced: the other
	// pools' clones then bound its surge too.
	Rolling bool
}

// Decision is what the budget lets the pool do on this call.
type Decision struct {
	// Budget is the budget in force; 0 is unbounded.
	Budget int32
	// InFlight is what was counted.
	InFlight InFlight
	// Replicas is a fixed pool's spec.replicas for its MachineDeployment.
	Replicas int32
	// MaxSurge is the deployment's maxSurge, as a count.
	MaxSurge int32
	// MaxSize is an autoscaled pool's node-group max-size annotation.
	MaxSize int32
	// Waiting is how many Machines a fixed pool asks for that wait for the
	// budget; for an autoscaled pool, how far MaxSize is below Max.
	Waiting int32
	// SurgeLowered is true when MaxSurge is below what the spec asks.
	SurgeLowered bool
}

// Bounded reports whether the budget holds the pool back on this call.
func (d Decision) Bounded() bool { return d.Waiting > 0 || d.SurgeLowered }

// Decide applies budget to the pool, given what is in flight:
//
//   - Room is the budget less every clone in flight, never below zero.
//   - A fixed pool grows by at most the room per call: spec.replicas goes
//     to min(wanted, current + room). A scale-down, or a pool already at its
//     count, takes the wanted count at once: the budget never shrinks a
//     pool, nor holds back one whose owner asked for fewer workers.
//   - A roll surges by at most what the budget leaves the pool: maxSurge
//     goes to min(spec's, budget - others - maxUnavailable), at least 1
//     when maxUnavailable is 0, which Cluster API's webhook requires. The
//     surge is the pool's own: a rolling deployment holds at most
//     replicas + maxSurge Machines and replaces at most maxUnavailable more
//     at once (machinedeployment_rolling.go), so its new clones in flight
//     never exceed maxSurge + maxUnavailable. maxUnavailable is the owner's
//     availability choice and is never changed, so it is the floor.
//   - An autoscaled pool's replicas stay the autoscaler's: only its
//     node-group max is bounded, to current + room, never below the
//     current count or the min, never above the spec's max.
func Decide(budget int32, f InFlight, p Pool) Decision {
	d := Decision{Budget: budget, InFlight: f, Replicas: p.Wanted, MaxSurge: p.Surge, MaxSize: p.Max}
	if budget <= 0 {
		return d
	}
	room := max(budget-f.Total(), 0)
	current := int32(0)
	if p.Current != nil {
		current = *p.Current
	}
	if p.Autoscaled {
		if p.Current == nil {
			current = p.Min
		}
		d.MaxSize = min(p.Max, max(current+room, current, p.Min))
		d.Waiting = p.Max - d.MaxSize
	} else if p.Wanted > current {
		d.Replicas = min(p.Wanted, current+room)
		d.Waiting = p.Wanted - d.Replicas
	}
	floor := int32(0)
	if p.Unavailable == 0 {
		floor = 1
	}
	others := int32(0)
	if p.Rolling {
		others = f.Others
	}
	d.MaxSurge = min(p.Surge, max(budget-others-p.Unavailable, floor))
	d.SurgeLowered = d.MaxSurge < p.Surge
	return d
}
