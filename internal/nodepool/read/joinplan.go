package read

import (
	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/required"
)

// joinPlan is what the Join mode read and decided.
type JoinPlan struct {
	Refs     JoinRefs
	Config   config.Join
	Facts    joinFacts
	Revision int64
	// Pinned is the running TalosConfigTemplate the deployment stays on
	// while only the facts changed; empty otherwise.
	Pinned string
	// Changed names the facts that changed since the pinned template.
	Changed []string
}

// readJoin reads the Join mode's facts; nil for a Generate pool.
func ReadJoin(p pool.Pool, spec v1alpha1.NodePoolSpec, cfg config.Config, got required.Resolved) *JoinPlan {
	if v1alpha1.BootstrapModeOf(spec.Bootstrap) != v1alpha1.BootstrapJoin {
		return nil
	}
	refs := JoinRefsOf(p, cfg.Join)
	return &JoinPlan{Refs: refs, Config: cfg.Join, Facts: readJoinFacts(refs, got), Revision: spec.Bootstrap.FactsRevision}
}
