package emit

import (
	"fmt"

	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/render"
)

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
		if k.Revision == 0 {
			by = "another tool"
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
