package decide

import (
	"fmt"
	"strings"

	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
)

// The Join mode's messages, beside its reasons (joinplan.go), as the gates'
// are in messages.go. They name objects and keys, never a value of a Secret.

func msgJoinFactsMissing(p pool.Pool, missing, invalid []string) string {
	extra := ""
	if len(invalid) > 0 {
		extra = " Also unusable: " + strings.Join(invalid, "; ") + "."
	}
	return fmt.Sprintf("Node pool %q builds its workers' Talos config from cluster %q's join facts (bootstrap mode Join), and these are not there yet: %s. The pool's new or changed templates are held back and its existing resources are kept as they are; the hold lifts by itself once the control plane publishes them. If the cluster's control plane publishes them under other names, set the function Input's join options; if the cluster has a TalosControlPlane, set spec.bootstrap.mode to Generate.%s",
		p.Ref(), p.Cluster, strings.Join(missing, "; "), extra)
}

func msgJoinFactsInvalid(p pool.Pool, invalid []string) string {
	return fmt.Sprintf("Node pool %q builds its workers' Talos config from cluster %q's join facts (bootstrap mode Join), and these cannot be used: %s. A worker would not join with them, so the pool's new or changed templates are held back and its existing resources are kept as they are. Fix the objects named (the control plane's Secrets and Services).",
		p.Ref(), p.Cluster, strings.Join(invalid, "; "))
}

func msgControlPlaneBehind(p pool.Pool, r read.JoinRefs, version pool.Setting, controlPlane string) string {
	return fmt.Sprintf("Node pool %q runs Kubernetes %s (%s), ahead of its control plane %s %s/%s at %s: a kubelet may not be newer than its API server. A pool may lag its control plane (the control plane is upgraded first, then each pool), not lead it. The pool's change is held back and its existing resources are kept as they are; the hold lifts once the control plane runs %s or later, or set %s to at most the control plane's minor.",
		p.Ref(), version.Value, version.Field, r.ControlPlaneKind, r.Namespace, r.Cluster, controlPlane, version.Value, version.Field)
}

func MsgJoinFactsChanged(p pool.Pool, pinned string, changed []string, revision int64) string {
	what := "the cluster's join facts"
	if len(changed) > 0 {
		what = strings.Join(changed, "; ")
	}
	return fmt.Sprintf("Node pool %q: %s changed since its running TalosConfigTemplate %s was built. A change of facts alone does not roll the workers, so the pool stays on %s, and new workers (scale-up, remediation) still get the old facts, which may keep them from joining. To roll the pool onto the current facts, set spec.bootstrap.factsRevision to %d; any other change that rolls the pool takes them too.",
		p.Ref(), what, pinned, pinned, revision+1)
}
