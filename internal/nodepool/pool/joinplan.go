package pool

import (
	"github.com/cozystack/function-worker-image/internal/labels"
)

// AnnJoinBase is the hash of a Join TalosConfigTemplate's spec without the
// facts (joinBase), which tells a change of facts alone from one of the pool.
const AnnJoinBase = labels.Prefix + "join-base"
