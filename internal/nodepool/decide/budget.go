package decide

import (
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; CAPI v1.11 still serves it.

	"github.com/cozystack/function-worker-image/internal/clonebudget"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/storageclass"
)

// BudgetPlan is the clone budget's decision for this call, and what it was
// decided for.
type BudgetPlan struct {
	clonebudget.Decision
	// Applies is false on the HTTP path and while the pool is held: nothing
	// new clones on this call.
	Applies bool
	// Class is the class the new clones land on ("" when unknown).
	Class string
	// Golden is "namespace/name".
	Golden string
	Pool   clonebudget.Pool
	// OthersRead is false when other pools' clones were not read: the pool
	// starts none on this call (read/reads.go).
	OthersRead bool
	// Claims are CDI's claims of other pools' clones on Class, those
	// counted and those it left behind (clonebudget.CountClaims), and
	// LeakedAfter the Input's bound they were sorted by.
	Claims      clonebudget.Claims
	LeakedAfter time.Duration
	// Capacity is the prediction of the clones this call starts against
	// the class's published free capacity (capacity.go).
	Capacity CapacityPlan
}

// DecideBudget bounds what the deployment asks for by the clone budget of
// its golden and class (clonebudget.Decide) and the class's published
// capacity (capacity.go); BudgetPlan.Bounded writes the bound into the shape
// the deployment is rendered from. Other pools' clones are the claims CDI
// runs them through, less those it left behind by now
// (clonebudget.CountClaims). Nothing new clones on the HTTP path or while
// the pool is held: no bound.
func DecideBudget(pl Plan, cfg config.Config, rd read.Reads, now time.Time) BudgetPlan {
	img := pl.Image
	if img.Source != pool.SourceClone || pl.Hold != nil {
		return BudgetPlan{}
	}
	class := pl.StorageClass.Name
	if class == "" {
		class = storageclass.Default(pl.Required.StorageClasses).Name
	}
	b := BudgetPlan{Applies: true, Class: class, Golden: img.GoldenRef(), Pool: budgetPool(pl), OthersRead: rd.Budget, LeakedAfter: cfg.CloneBudget.LeakedClaimAfter}
	b.Claims = clonebudget.CountClaims(pl.Required.CloneClaims, class, now, b.LeakedAfter)
	in := clonebudget.InFlight{Own: OwnClones(pl, rd), Others: int32(len(b.Claims.Live))} //nolint:gosec // claims a request carries, far below 2^31
	b.Decision = clonebudget.Decide(cfg.CloneBudget.For(class), in, b.Pool)
	b.Capacity = PredictCapacity(pl, cfg, &b)
	return b
}

// Bounded is the shape the deployment is rendered from within the budget:
// a fixed pool's replicas, an autoscaled pool's maximum (the autoscaler's
// max-size annotation) and the rollout's surge, each lowered to what the
// budget lets start. The shape itself is left as the spec asks: the pool's
// status reports what was asked.
func (b BudgetPlan) Bounded(s pool.Shape) pool.Shape {
	if !b.Applies {
		return s
	}
	if !b.Pool.Autoscaled {
		s.Replicas = b.Replicas
	}
	if b.SurgeLowered {
		s.Scaling.MaxSurge = intstr.FromInt32(b.MaxSurge)
	}
	if b.Pool.Autoscaled && b.MaxSize < b.Pool.Max {
		s.Scaling.Max = b.MaxSize
	}
	return s
}

// budgetPool is how the pool asks to scale and roll, against the observed
// deployment.
func budgetPool(pl Plan) clonebudget.Pool {
	s := pl.Shape.Scaling
	p := clonebudget.Pool{Autoscaled: s.Autoscaled, Wanted: pl.Shape.Replicas, Min: s.Min, Max: s.Max}
	md := pl.Composed.Deployment
	if md != nil && md.Spec.Replicas != nil {
		current := *md.Spec.Replicas
		p.Current = &current
	}
	// Cluster API scales a percentage against the deployment's replicas,
	// the surge rounded up and the unavailable down
	// (machinedeployment/mdutil/util.go ResolveFenceposts).
	base := p.Wanted
	if s.Autoscaled {
		base = s.Min
		if p.Current != nil {
			base = *p.Current
		}
	}
	surge, unavailable := s.MaxSurge, s.MaxUnavailable
	n, _ := intstr.GetScaledValueFromIntOrPercent(&surge, int(base), true)
	u, _ := intstr.GetScaledValueFromIntOrPercent(&unavailable, int(base), false)
	p.Surge, p.Unavailable = int32(n), int32(u)
	running, bootstrap := pl.Composed.InEffect()
	p.Rolling = md != nil && (repoints(pl, running, bootstrap) || replacing(pl.Required.MachineSets, running, bootstrap))
	return p
}

// repoints reports a plan that moves the deployment onto other templates
// than machine and bootstrap, the ones it runs: a roll starts.
func repoints(pl Plan, machine, bootstrap string) bool {
	m, b := pl.DeploymentRefs()
	return m != machine || b != bootstrap
}

// replacing reports a roll under way: a MachineSet that still asks for
// Machines on templates other than the ones the deployment runs, which
// Cluster API scales down as it brings the new one up. A deployment that
// scales on its templates, or waits for its Machines to be ready (a pool
// growing, or the last clones of a roll finishing), replaces none.
func replacing(sets []clusterv1.MachineSet, machine, bootstrap string) bool {
	for _, ms := range sets {
		if ms.Spec.Replicas == nil || *ms.Spec.Replicas == 0 {
			continue
		}
		spec := ms.Spec.Template.Spec
		if spec.InfrastructureRef.Name != machine || spec.Bootstrap.ConfigRef != nil && spec.Bootstrap.ConfigRef.Name != bootstrap {
			return true
		}
	}
	return false
}

// OwnClones counts the pool's clones of its golden in flight: its disks of
// the golden neither Succeeded nor Failed, and its Machines on a template
// of the golden whose disk does not exist yet (KubeVirt creates it with the
// VM, after Cluster API, CAPK and the bootstrap provider took their turns).
// Without the disks (too many to read, or a settled pool), a Machine not
// ready is counted instead: a disk is cloned before its Node can be Ready.
func OwnClones(pl Plan, rd read.Reads) int32 {
	golden := pl.Image.GoldenRef()
	hash := labels.GoldenHash(pl.Image.GoldenNamespace, pl.Image.GoldenName)
	var machines, notReady, allMachines int32
	for _, ms := range pl.Required.MachineSets {
		n := int32(0)
		if ms.Spec.Replicas != nil {
			n = *ms.Spec.Replicas
		}
		allMachines += n
		if tc, ok := pl.Composed.ObservedClone(ms.Spec.Template.Spec.InfrastructureRef.Name); ok && tc.Golden == golden {
			machines += n
			notReady += max(n-ms.Status.ReadyReplicas, 0)
		}
	}
	// A scale the deployment took that its MachineSets have not yet.
	if md := pl.Composed.Deployment; md != nil && md.Spec.Replicas != nil {
		running, _ := pl.Composed.InEffect()
		if tc, ok := pl.Composed.ObservedClone(running); ok && tc.Golden == golden {
			unpropagated := max(*md.Spec.Replicas-allMachines, 0)
			machines += unpropagated
			notReady += unpropagated
		}
	}
	if !rd.Workers {
		return notReady
	}
	var disks, cloning int32
	for _, dv := range pl.Required.WorkerDVs {
		if dv.Labels[labels.Golden] != hash {
			continue
		}
		disks++
		if dv.Status.Phase != cdiv1.Succeeded && dv.Status.Phase != cdiv1.Failed {
			cloning++
		}
	}
	return cloning + max(machines-disks, 0)
}
