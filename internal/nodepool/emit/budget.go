package emit

import (
	"fmt"
	"strings"

	"k8s.io/utils/ptr"

	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
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

// CloneCapacityCondition reports the budget's decision.
func CloneCapacityCondition(pl decide.Plan) compose.Condition {
	b, ref := pl.Budget, pl.Pool.Ref()
	c := compose.Condition{Type: ConditionCloneCapacity}
	if !b.Applies {
		c.Status, c.Reason = compose.StatusTrue, ReasonNotCloning
		c.Message = fmt.Sprintf("Node pool %q starts no clone on this reconcile.", ref)
		if pl.Image.Source != pool.SourceClone {
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
	budget += leftBehindText(pl)
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
	storage := CapacityText(b.Capacity, b.Class)
	if b.Capacity.Limited {
		c.Status, c.Reason = compose.StatusFalse, decide.ReasonInsufficientStorageCapacity
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
func leftBehindText(pl decide.Plan) string {
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
