package emit

import (
	"fmt"

	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
)

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
