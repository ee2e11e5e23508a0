package nodepool

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; CAPI v1.11 still serves it.

	"github.com/cozystack/function-worker-image/internal/clonebudget"
	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/storageclass"
)

// ConditionCloneCapacity says how many clones of the pool's golden run on
// its class, how many of the pool's workers wait for the clone budget, and
// why.
const ConditionCloneCapacity = "CloneCapacity"

// CloneCapacity reasons.
const (
	// ReasonCloneBudgetUnbounded: the class has no budget (0).
	ReasonCloneBudgetUnbounded = "Unbounded"
	// ReasonWithinCloneBudget: nothing the spec asks for waits.
	ReasonWithinCloneBudget = "WithinBudget"
	// ReasonWaitingForCloneBudget: workers wait for clones to finish.
	ReasonWaitingForCloneBudget = "WaitingForCloneBudget"
	// ReasonNotCloning: the pool imports over HTTP, or is held before it
	// clones anything.
	ReasonNotCloning = "NotCloning"
)

// reqCloneClaims are the claims CDI makes in the golden's namespace for the
// clones of the pool's golden that run now (clonebudget.InFlight.Others).
const reqCloneClaims = "golden-clone-claims"

// budgetPlan is the clone budget's decision for this call, and what it was
// decided for.
type budgetPlan struct {
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
	// starts none on this call (reads.go).
	OthersRead bool
	// Claims are CDI's claims of other pools' clones on Class, those
	// counted and those it left behind (clonebudget.CountClaims), and
	// LeakedAfter the Input's bound they were sorted by.
	Claims      clonebudget.Claims
	LeakedAfter time.Duration
	// Capacity is the prediction of the clones this call starts against
	// the class's published free capacity (capacity.go).
	Capacity capacityPlan
}

// decideBudget bounds the deployment the plan emits by the clone budget of
// its golden and class (clonebudget.Decide) and writes the bound onto it.
// Other pools' clones are the claims CDI runs them through, less those it
// left behind by now (clonebudget.CountClaims).
func (pl *plan) decideBudget(cfg config.Config, rd reads, now time.Time) {
	img, md := pl.Image, pl.MachineDeployment
	if img.Source != SourceClone || md == nil || (pl.Hold != nil) {
		return
	}
	class := pl.StorageClass.Name
	if class == "" {
		class = storageclass.Default(pl.World.StorageClasses).Name
	}
	b := budgetPlan{Applies: true, Class: class, Golden: img.GoldenRef(), Pool: pl.budgetPool(), OthersRead: rd.Budget, LeakedAfter: cfg.CloneBudget.LeakedClaimAfter}
	b.Claims = clonebudget.CountClaims(pl.World.CloneClaims, class, now, b.LeakedAfter)
	in := clonebudget.InFlight{Own: pl.ownClones(rd), Others: int32(len(b.Claims.Live))} //nolint:gosec // claims a request carries, far below 2^31
	b.Decision = clonebudget.Decide(cfg.CloneBudget.For(class), in, b.Pool)
	b.Capacity = pl.predictCapacity(cfg, &b)
	pl.Budget = b
	if !b.Pool.Autoscaled {
		md.Spec.Replicas = &b.Replicas
	}
	if ru := md.Spec.Strategy; b.SurgeLowered && ru != nil && ru.RollingUpdate != nil {
		surge := intstr.FromInt32(b.MaxSurge)
		ru.RollingUpdate.MaxSurge = &surge
	}
	if b.Pool.Autoscaled && b.MaxSize < b.Pool.Max {
		md.Annotations[clusterapi.AnnAutoscalerMaxSize] = fmt.Sprint(b.MaxSize)
	}
}

// budgetPool is how the pool asks to scale and roll, against the observed
// deployment.
func (pl plan) budgetPool() clonebudget.Pool {
	s := pl.Shape.Scaling
	p := clonebudget.Pool{Autoscaled: s.Autoscaled, Wanted: pl.Shape.Replicas, Min: s.Min, Max: s.Max}
	md := pl.Observed.Deployment
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
	running, bootstrap := pl.Observed.inEffect()
	p.Rolling = md != nil && (repoints(pl.MachineDeployment, running, bootstrap) || replacing(pl.World.MachineSets, running, bootstrap))
	return p
}

// repoints reports a deployment the plan moves onto other templates: a
// roll starts.
func repoints(md *clusterv1.MachineDeployment, machine, bootstrap string) bool {
	if md == nil {
		return false
	}
	spec := md.Spec.Template.Spec
	return spec.InfrastructureRef.Name != machine || spec.Bootstrap.ConfigRef != nil && spec.Bootstrap.ConfigRef.Name != bootstrap
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

// ownClones counts the pool's clones of its golden in flight: its disks of
// the golden neither Succeeded nor Failed, and its Machines on a template
// of the golden whose disk does not exist yet (KubeVirt creates it with the
// VM, after Cluster API, CAPK and the bootstrap provider took their turns).
// Without the disks (too many to read, or a settled pool), a Machine not
// ready is counted instead: a disk is cloned before its Node can be Ready.
func (pl plan) ownClones(rd reads) int32 {
	golden := pl.Image.GoldenRef()
	hash := labels.GoldenHash(pl.Image.GoldenNamespace, pl.Image.GoldenName)
	var machines, notReady, allMachines int32
	for _, ms := range pl.World.MachineSets {
		n := int32(0)
		if ms.Spec.Replicas != nil {
			n = *ms.Spec.Replicas
		}
		allMachines += n
		if tc, ok := pl.Observed.observedClone(ms.Spec.Template.Spec.InfrastructureRef.Name); ok && tc.Golden == golden {
			machines += n
			notReady += max(n-ms.Status.ReadyReplicas, 0)
		}
	}
	// A scale the deployment took that its MachineSets have not yet.
	if md := pl.Observed.Deployment; md != nil && md.Spec.Replicas != nil {
		running, _ := pl.Observed.inEffect()
		if tc, ok := pl.Observed.observedClone(running); ok && tc.Golden == golden {
			unpropagated := max(*md.Spec.Replicas-allMachines, 0)
			machines += unpropagated
			notReady += unpropagated
		}
	}
	if !rd.Workers {
		return notReady
	}
	var disks, cloning int32
	for _, dv := range pl.World.WorkerDVs {
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

// isCloneClaim reports a claim CDI made in the golden's namespace for a
// clone of another pool's disk: it carries the target's labels, so a pool
// label, and is not the golden's own claim.
func isCloneClaim(pvc corev1.PersistentVolumeClaim, goldenNamespace, poolHash string) bool {
	owner := pvc.Labels[labels.Pool]
	return pvc.Namespace == goldenNamespace && owner != "" && owner != poolHash
}

// cloneCapacityCondition reports the budget's decision.
func (pl plan) cloneCapacityCondition() compose.Condition {
	b, ref := pl.Budget, pl.Pool.Ref()
	c := compose.Condition{Type: ConditionCloneCapacity}
	if !b.Applies {
		c.Status, c.Reason = compose.StatusTrue, ReasonNotCloning
		c.Message = fmt.Sprintf("Node pool %q starts no clone on this reconcile.", ref)
		if pl.Image.Source != SourceClone {
			c.Message = fmt.Sprintf("Node pool %q imports its worker disks over HTTP; no clone budget applies.", ref)
		}
		return c
	}
	on := "on class " + b.Class
	if b.Class == "" {
		on = "on the default class"
	}
	others := ""
	if len(b.Claims.Live) > 0 {
		others = fmt.Sprintf(": claim(s) %s in %s", namedClaims(b.Claims.Live, ", "), pl.Image.GoldenNamespace)
	}
	running := fmt.Sprintf("%d clone(s) of golden %s run %s (%d of this pool's, %d of other pools'%s)", b.InFlight.Total(), b.Golden, on, b.InFlight.Own, b.InFlight.Others, others)
	if !b.OthersRead {
		running = fmt.Sprintf("%d clone(s) of golden %s of this pool run %s (other pools' are read only while the pool may start clones)", b.InFlight.Own, b.Golden, on)
	}
	budget := "no clone budget bounds them (cloneBudget 0 in the Function's Input)"
	if b.Budget > 0 {
		budget = fmt.Sprintf("of a budget of %d", b.Budget)
	}
	budget += pl.leftBehindText()
	var held []string
	if b.Waiting > 0 && !b.Pool.Autoscaled {
		held = append(held, fmt.Sprintf("%d of %d worker(s) wait: replicas are %d for now", b.Waiting, b.Pool.Wanted, b.Replicas))
	}
	if b.Pool.Autoscaled && b.MaxSize < b.Pool.Max {
		held = append(held, fmt.Sprintf("the autoscaler may grow the pool to %d of its maxReplicas %d for now", b.MaxSize, b.Pool.Max))
	}
	if b.SurgeLowered {
		held = append(held, fmt.Sprintf("a roll replaces at most %d worker(s) at once (maxSurge %d, lowered from %d, plus maxUnavailable %d)", b.MaxSurge+b.Pool.Unavailable, b.MaxSurge, b.Pool.Surge, b.Pool.Unavailable))
	}
	storage := b.Capacity.capacityText(b.Class)
	if b.Capacity.Limited {
		c.Status, c.Reason = compose.StatusFalse, ReasonInsufficientStorageCapacity
		c.Message = fmt.Sprintf("Node pool %q: %s, %s; %s: %s. They start as capacity frees; add capacity to the class's storage, or free some (docs/platform.md, \"Clone budget and capacity\").", ref, running, budget, storage, strings.Join(held, "; "))
		return c
	}
	waiting := b.Budget > 0 && (b.Waiting > 0 && !b.Pool.Autoscaled ||
		b.Pool.Autoscaled && b.MaxSize <= max(ptr.Deref(b.Pool.Current, b.Pool.Min), b.Pool.Min) && b.MaxSize < b.Pool.Max ||
		b.Pool.Rolling && b.SurgeLowered)
	if !waiting {
		c.Status, c.Reason = compose.StatusTrue, ReasonWithinCloneBudget
		if b.Budget == 0 {
			c.Reason = ReasonCloneBudgetUnbounded
		}
		held = append([]string{"no worker waits for it", storage}, held...)
		c.Message = fmt.Sprintf("Node pool %q: %s, %s; %s.", ref, running, budget, strings.Join(held, "; "))
		return c
	}
	c.Status, c.Reason = compose.StatusFalse, ReasonWaitingForCloneBudget
	c.Message = fmt.Sprintf("Node pool %q: %s, %s; %s; %s. They start as clones finish; to start more at once, raise cloneBudget.storageClasses[%s] (or cloneBudget.default) in the Function's Input, within what the storage takes (docs/platform.md, \"Clone budget and capacity\").", ref, running, budget, strings.Join(held, "; "), storage, budgetClassKey(b.Class))
	return c
}

// maxNamedClaims is how many claims a message names; the rest it counts.
const maxNamedClaims = 5

// namedClaims is names (sorted) joined by sep, the first maxNamedClaims of
// them and how many more.
func namedClaims(names []string, sep string) string {
	if len(names) <= maxNamedClaims {
		return strings.Join(names, sep)
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxNamedClaims], sep), len(names)-maxNamedClaims)
}

// leftBehindText names, for CloneCapacity, the claims CDI left behind that
// the budget did not count, each kind with its fix; "" when there are none.
func (pl plan) leftBehindText() string {
	b, ns := pl.Budget, pl.Image.GoldenNamespace
	var out string
	if n := len(b.Claims.Leaked); n > 0 {
		names, more := b.Claims.Leaked, ""
		if n > maxNamedClaims {
			names = names[:maxNamedClaims]
			more = fmt.Sprintf(" (and %d more: kubectl get pvc -n %s -l %s=%s lists every clone claim of the golden with its status)", n-maxNamedClaims, ns, labels.Golden, labels.GoldenHash(ns, pl.Image.GoldenName))
		}
		out += fmt.Sprintf("; not counted: %d claim(s) CDI left behind in %s, Pending or Lost for over %s (cloneBudget.leakedClaimAfter), which no clone runs through; remove them with kubectl delete pvc -n %s %s%s",
			n, ns, b.LeakedAfter, ns, strings.Join(names, " "), more)
	}
	if n := len(b.Claims.Stuck); n > 0 {
		out += fmt.Sprintf("; not counted: %d claim(s) in %s terminating for over %s, held by a finalizer (%s): kubectl describe pvc -n %s %s shows under Used By the pod that still mounts it, whose deletion lets it go",
			n, ns, b.LeakedAfter, namedClaims(b.Claims.Stuck, ", "), ns, b.Claims.Stuck[0])
	}
	return out
}

// budgetClassKey names the class in the fix: the default class's budget is
// cloneBudget.default when the class is unknown.
func budgetClassKey(class string) string {
	if class == "" {
		return "<class>"
	}
	return class
}
