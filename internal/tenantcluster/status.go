package tenantcluster

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/compose"
)

// nodePoolStatus is the status the node pool mode writes on an XNodePool,
// with the conditions Crossplane adds.
type nodePoolStatus struct {
	v1alpha1.NodePoolStatus `json:",inline"`

	Conditions []condition `json:"conditions,omitempty"`
}

type condition = compose.ObservedCondition

// poolReport is what the cluster learned about one pool.
type poolReport struct {
	Status v1alpha1.PoolStatus
	// Detail says why an unready pool is not ready, for the condition.
	Detail string
	// StatusUnreadable is why the XNodePool's status cannot be read.
	StatusUnreadable error
}

// observePool reads a pool's observed XNodePool. A pool not observed yet, not
// an XNodePool, or whose status cannot be read, is reported not ready; none
// is an error, because the pool is still composed either way.
func observePool(obs compose.Observed, name resource.Name) poolReport {
	u, ok := obs.Resources[name]
	if !ok {
		return poolReport{Detail: "not created yet"}
	}
	if err := obs.Problem(name); err != nil {
		return poolReport{Detail: fmt.Sprintf("its XNodePool cannot be read (%v)", err)}
	}
	s, err := compose.StatusOf[nodePoolStatus](&u.Unstructured)
	if err != nil {
		return poolReport{Detail: fmt.Sprintf("its XNodePool's status cannot be read (%v)", err), StatusUnreadable: err}
	}
	r := poolReport{Status: v1alpha1.PoolStatus{Template: s.Template, Gate: s.Gate}}
	if s.Image != nil {
		// The image, without the pool's clones in flight, which would
		// rewrite the cluster's status as they progress.
		img := s.Image.NodePoolImage
		r.Status.Image = &img
		r.Status.SourceType = s.Image.SourceType
	}
	ready := condition{Status: "Unknown"}
	for _, c := range s.Conditions {
		if c.Type == "Ready" {
			ready = c
		}
	}
	r.Status.Ready = ready.Status == "True"
	if r.Status.Ready {
		return r
	}
	var why []string
	if s.Gate != nil && s.Gate.State == v1alpha1.GateHeld {
		why = append(why, "change held: "+cmp.Or(s.Gate.Reason, "no reason given"))
	}
	if s.Replicas != nil {
		why = append(why, fmt.Sprintf("%d/%d workers ready", deref(s.ReadyReplicas), *s.Replicas))
	}
	if len(why) == 0 {
		why = append(why, "Ready is "+ready.Status+withReason(ready.Reason))
	}
	r.Detail = strings.Join(why, ", ")
	return r
}

// readiness is a composed XNodePool's readiness: Crossplane counts only
// ReadyTrue, and the cluster is ready when every pool is.
func readiness(r poolReport) resource.Ready {
	if r.Status.Ready {
		return resource.ReadyTrue
	}
	return resource.ReadyFalse
}

// poolsReady is the NodePoolsReady condition over every pool, in name order.
func poolsReady(pools []Pool, reports map[string]poolReport) compose.Condition {
	var unready []string
	for _, p := range pools {
		if r := reports[p.Name]; !r.Status.Ready {
			unready = append(unready, fmt.Sprintf("%s (%s)", p.Name, r.Detail))
		}
	}
	switch {
	case len(pools) == 0:
		return compose.Condition{Type: TypeNodePoolsReady, Status: compose.StatusTrue, Reason: ReasonAllPoolsReady,
			Message: "The tenant cluster has no node pools."}
	case len(unready) == 0:
		return compose.Condition{Type: TypeNodePoolsReady, Status: compose.StatusTrue, Reason: ReasonAllPoolsReady,
			Message: fmt.Sprintf("All %d node pools are ready.", len(pools))}
	default:
		return compose.Condition{Type: TypeNodePoolsReady, Status: compose.StatusFalse, Reason: ReasonPoolsNotReady,
			Message: fmt.Sprintf("%d of %d node pools are not ready: %s.", len(unready), len(pools), strings.Join(unready, "; "))}
	}
}

// previousStatus is what the cluster reported last time: its status.pools and
// its conditions, read back from the observed composite. Results are emitted
// only where the new state differs from it. Anything unreadable counts as
// never reported.
type previousStatus struct {
	Pools      map[string]v1alpha1.PoolStatus `json:"pools,omitempty"`
	Conditions []condition                    `json:"conditions,omitempty"`
}

// transitions are the events of this call: a pool becoming ready, a ready
// pool becoming unready, and the cluster moving onto a Talos release the
// support matrix does not list.
func transitions(prev previousStatus, pools []Pool, reports map[string]poolReport, support compose.Condition) []compose.Result {
	var out []compose.Result
	if r, ok := compose.Transition(support, prev.Conditions); ok {
		out = append(out, r)
	}
	for _, p := range pools {
		was, seen := prev.Pools[p.Name]
		r := reports[p.Name]
		switch {
		case r.Status.Ready && !was.Ready:
			out = append(out, compose.Result{Severity: compose.SeverityNormal, Reason: "NodePoolReady",
				Message: fmt.Sprintf("Node pool %s is ready.", p.Name)})
		case !r.Status.Ready && seen && was.Ready:
			out = append(out, compose.Result{Severity: compose.SeverityWarning, Reason: "NodePoolNotReady",
				Message: fmt.Sprintf("Node pool %s is no longer ready: %s.", p.Name, r.Detail)})
		}
	}
	return out
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func withReason(reason string) string {
	if reason == "" {
		return ""
	}
	return " (" + reason + ")"
}
