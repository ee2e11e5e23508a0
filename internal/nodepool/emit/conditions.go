package emit

import (
	"fmt"
	"strings"

	"k8s.io/utils/ptr"

	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/render"
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

// ConditionWorkerImageReady says whether the pool's current template is
// composed, or why it is held back.
const ConditionWorkerImageReady = "WorkerImageReady"

// Reasons and results of an open gate.
const (
	ReasonTemplateComposed = "TemplateComposed"
	ReasonGateOpened       = "GateOpened"
	ReasonTemplateChanged  = "TemplateChanged"
)

func openMessage(pl decide.Plan) string {
	from := pl.Image.URL
	if pl.Image.Source == pool.SourceClone {
		from = "golden image " + pl.Image.GoldenRef()
	}
	return fmt.Sprintf("Node pool %q boots Talos %s (schematic %s) from %s through template %s.",
		pl.Pool.Ref(), pl.Image.Version.Value, pl.Image.SchematicID.Value, from, pl.MachineTemplate.Name)
}

func workerImageCondition(pl decide.Plan) compose.Condition {
	if pl.Hold != nil {
		return compose.Condition{Type: ConditionWorkerImageReady, Status: compose.StatusFalse, Reason: pl.Hold.Reason, Message: pl.Hold.Message}
	}
	return compose.Condition{Type: ConditionWorkerImageReady, Status: compose.StatusTrue, Reason: ReasonTemplateComposed, Message: openMessage(pl)}
}

// readableCondition covers the required objects and the observed resources.
func readableCondition(pl decide.Plan) compose.Condition {
	problems := append(append([]string(nil), pl.Required.Unreadable...), pl.Composed.Problems()...)
	return compose.Readable(fmt.Sprintf("node pool %q", pl.Pool.Ref()), problems)
}

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

// ConditionJoinFactsCurrent says whether a Join pool's running worker config
// carries the cluster's current facts.
const ConditionJoinFactsCurrent = "JoinFactsCurrent"

// joinCondition is JoinFactsCurrent, for a Join pool that is not held (a
// held one says why in WorkerImageReady); none otherwise.
func joinCondition(pl decide.Plan) (compose.Condition, bool) {
	if pl.Join == nil || pl.Hold != nil {
		return compose.Condition{}, false
	}
	if pl.Join.Pinned != "" {
		return compose.Condition{Type: ConditionJoinFactsCurrent, Status: compose.StatusFalse, Reason: decide.ReasonJoinFactsChanged,
			Message: decide.MsgJoinFactsChanged(pl.Pool, pl.Join.Pinned, pl.Join.Changed, pl.Join.Revision)}, true
	}
	return compose.Condition{Type: ConditionJoinFactsCurrent, Status: compose.StatusTrue, Reason: decide.ReasonJoinFactsCurrent,
		Message: fmt.Sprintf("Node pool %q runs TalosConfigTemplate %s, built from cluster %q's current join facts.", pl.Pool.Ref(), pl.BootstrapTemplate.Name, pl.Pool.Cluster)}, true
}

// ConditionRenderingCurrent says whether the pool runs the templates this
// release renders for what it asks for, or templates an earlier release
// rendered for the same ask.
const ConditionRenderingCurrent = "RenderingCurrent"

// Reasons of RenderingCurrent.
const (
	ReasonRenderedByThisRelease  = "RenderedByThisRelease"
	ReasonKeptFromEarlierRelease = "KeptFromEarlierRelease"
)

// renderingCondition is RenderingCurrent.
func renderingCondition(pl decide.Plan) compose.Condition {
	if len(pl.Adopted) > 0 {
		return compose.Condition{Type: ConditionRenderingCurrent, Status: compose.StatusFalse, Reason: decide.ReasonAdopted, Message: msgAdopted(pl.Pool, pl.Adopted, pl.TemplateRevision)}
	}
	if len(pl.Kept) == 0 {
		return compose.Condition{Type: ConditionRenderingCurrent, Status: compose.StatusTrue, Reason: ReasonRenderedByThisRelease,
			Message: fmt.Sprintf("Node pool %q runs the templates this release renders for what it asks for.", pl.Pool.Ref())}
	}
	return compose.Condition{Type: ConditionRenderingCurrent, Status: compose.StatusFalse, Reason: ReasonKeptFromEarlierRelease, Message: msgKeptFromEarlierRelease(pl.Pool, pl.Kept, pl.TemplateRevision)}
}

// msgKeptFromEarlierRelease says which running templates an earlier
// rendering (or another tool) made, and how to take this release's.
func msgKeptFromEarlierRelease(p pool.Pool, kept []decide.KeptTemplate, revision int64) string {
	var each []string
	for _, k := range kept {
		by := fmt.Sprintf("rendering revision %d", k.Revision)
		switch k.Revision {
		case 0:
			by = "another tool"
		case render.FirstRendering:
			by = fmt.Sprintf("a release that recorded no request, rendering revision %d", k.Revision)
		}
		each = append(each, fmt.Sprintf("%s %s (made by %s)", k.Kind, k.Running, by))
	}
	return fmt.Sprintf("Node pool %q runs %s, for what the pool still asks for; this release renders revision %d. Nothing rolls until the pool's request changes. To take this release's rendering now, which rolls the pool's workers once if it differs, set spec.templateRevision to %d, or bump the function Input's templateRevision to do it for every pool.",
		p.Ref(), pool.JoinAnd(each), render.Rendering, revision+1)
}

// msgAdopted says which existing templates the pool adopted.
func msgAdopted(p pool.Pool, adopted []decide.KeptTemplate, revision int64) string {
	var each []string
	for _, k := range adopted {
		each = append(each, fmt.Sprintf("%s %s (this release renders %s)", k.Kind, k.Running, k.Rendered))
	}
	return fmt.Sprintf("Node pool %q adopted the MachineDeployment another tool made (the kubernetes-nodes chart, say) and runs on its %s, equivalent to what the pool asks for, so no worker rolled. Nothing rolls until the pool's request changes. To take this release's rendering now, which rolls the pool's workers once, set spec.templateRevision to %d.",
		p.Ref(), pool.JoinAnd(each), revision+1)
}
