package tenantcluster

import (
	"fmt"
	"sort"
	"strings"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composite"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/observed"
)

// owns is the cluster's part of the observed composed resources: one
// XNodePool per pool.
func owns(n resource.Name) (apiVersion, kind string, ok bool) {
	if strings.HasPrefix(string(n), resourcePrefix) {
		return v1alpha1.Group + "/" + v1alpha1.Version, v1alpha1.KindNodePool, true
	}
	return "", "", false
}

// emit composes each pool's XNodePool and summarises what the pools report.
func emit(xr *composite.Unstructured, p Plan, support compose.Condition, obs compose.Observed, prev previousStatus) (compose.Output, error) {
	out := compose.Output{Resources: make(map[resource.Name]*resource.DesiredComposed, len(p.Pools))}
	reports := make(map[string]poolReport, len(p.Pools))
	statuses := make(map[string]v1alpha1.PoolStatus, len(p.Pools))
	for _, pool := range p.Pools {
		dc, err := nodePool(p.Cluster, pool)
		if err != nil {
			return compose.Output{}, err
		}
		rep := observePool(obs, pool.Resource)
		dc.Ready = readiness(rep)
		out.Resources[pool.Resource] = dc
		reports[pool.Name] = rep
		statuses[pool.Name] = rep.Status
	}
	// A readable XNodePool whose pool left spec.nodePools is removed in two
	// steps (removal.go): kept with the teardown annotation until it reports
	// Released, then left out of the desired state, which is how Crossplane
	// deletes it. What is not an XNodePool at all stays as it is; a status
	// the cluster cannot read does not make an XNodePool unreadable.
	removing := removePools(obs, out.Resources)
	obs.Keep(out.Resources, compose.RetireAll, func(resource.Name) resource.Ready { return resource.ReadyTrue })

	out.Status = map[string]any{"pools": statuses}
	out.Conditions = []compose.Condition{support, withRemovals(poolsReady(p.Pools, reports), removing)}
	out.Results = append(transitions(prev, p.Pools, reports, support), removalResults(removing)...)

	var problems []string
	for _, pool := range p.Pools {
		if r := reports[pool.Name]; r.StatusUnreadable != nil {
			problems = append(problems, fmt.Sprintf("composed resource %s (%s %s): its status cannot be read: %v", pool.Resource, v1alpha1.KindNodePool, labels.PoolName(p.Cluster, pool.Name), r.StatusUnreadable))
		}
	}
	problems = append(obs.Problems(), problems...)
	sort.Strings(problems)
	readable, report := compose.ReadableWhenNeeded(fmt.Sprintf("%s %q", kindOf(xr), observed.Ref(&xr.Unstructured)), problems, prev.Conditions)
	if report {
		out.Conditions = append(out.Conditions, readable)
	}
	if r, ok := compose.Transition(readable, prev.Conditions); ok {
		out.Results = append(out.Results, r)
	}
	return out, nil
}
