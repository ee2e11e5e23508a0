package emit

import (
	"fmt"
	"strings"

	protectionv1beta1 "github.com/crossplane/crossplane/apis/v2/protection/v1beta1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composite"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/observed"
)

// The Deletion condition and its reasons (apis/v1alpha1, which the tenant
// cluster reads).
const (
	ConditionDeletion     = v1alpha1.ConditionDeletion
	ReasonDrainingWorkers = v1alpha1.ReasonDrainingWorkers
	ReasonReleased        = v1alpha1.ReasonReleased
)

// Teardown is why a pool was asked to go; empty when it was not.
type Teardown string

// TeardownOf reads the composite's annotations: a delete Crossplane refused,
// or its XTenantCluster's teardown annotation.
func TeardownOf(xr *composite.Unstructured) Teardown {
	a := xr.GetAnnotations()
	if policy, ok := a[labels.AnnDeletionAttempt]; ok {
		return Teardown(fmt.Sprintf("its deletion was asked (annotation %s=%s, recorded by Crossplane's usage webhook) and is held by its deletion guard until its workers are gone", labels.AnnDeletionAttempt, policy))
	}
	if a[labels.AnnTeardown] == "true" {
		return Teardown(fmt.Sprintf("annotation %s=true asks for its removal (its XTenantCluster no longer lists it in spec.nodePools)", labels.AnnTeardown))
	}
	return ""
}

// renderDeletionGuard is the Usage that keeps the XNodePool while its
// MachineDeployment exists. A Usage's `by` must be in its own namespace, so
// a cluster-scoped composite behind a claim has none.
func renderDeletionGuard(xr *composite.Unstructured, p pool.Pool, deploymentAPIVersion string) *protectionv1beta1.Usage {
	return poolUsage(p, p.DeploymentName()+"-deletion-guard",
		protectionv1beta1.NamespacedResource{
			APIVersion:  xr.GetAPIVersion(),
			Kind:        xr.GetKind(),
			ResourceRef: &protectionv1beta1.NamespacedResourceRef{Name: xr.GetName()},
		},
		protectionv1beta1.Resource{
			APIVersion:  deploymentAPIVersion,
			Kind:        clusterapi.KindMachineDeployment,
			ResourceRef: &protectionv1beta1.ResourceRef{Name: p.DeploymentName()},
		})
}

// GuardDeletion adds the deletion guard to a desired state that holds the
// MachineDeployment (desired or kept). Without Usages, or for a cluster-scoped
// composite, an existing guard is kept only while the deployment is.
func GuardDeletion(pl decide.Plan, into map[resource.Name]*resource.DesiredComposed, xr *composite.Unstructured, enabled bool) error {
	if _, ok := into[read.ResourceMachineDeployment]; !ok {
		return nil
	}
	if !enabled || xr.GetNamespace() == "" {
		if u, ok := pl.Composed.Resources[read.ResourceDeletionGuard]; ok {
			into[read.ResourceDeletionGuard] = compose.Kept(u, resource.ReadyTrue)
		}
		return nil
	}
	return emitUsage(pl, into, read.ResourceDeletionGuard, renderDeletionGuard(xr, pl.Pool, clusterapi.APIVersion(pl.ClusterAPI)))
}

// ComposeTeardown is the whole output of a pool asked to go, from what it
// composed alone, so a pool with an invalid spec or no golden still goes.
func ComposeTeardown(xr *composite.Unstructured, why Teardown, obs read.Composed, prev read.Previous) compose.Output {
	ref := fmt.Sprintf("XNodePool %q", observed.Ref(&xr.Unstructured))
	out := compose.Output{Resources: map[resource.Name]*resource.DesiredComposed{}, NotReady: true}
	var cond compose.Condition
	if names := draining(obs); len(names) > 0 {
		// Drain: all stays but what Cluster API must delete first; the
		// templates stay while Machines may need them.
		obs.Keep(out.Resources, func(n resource.Name) bool {
			return n == read.ResourceMachineDeployment || n == read.ResourceMachineHealthCheck
		}, func(resource.Name) resource.Ready { return resource.ReadyFalse })
		cond = compose.Condition{
			Type: ConditionDeletion, Status: compose.StatusTrue, Reason: ReasonDrainingWorkers,
			Message: fmt.Sprintf("%s is being removed: %s. Crossplane deletes its %s; Cluster API deletes its MachineSets and Machines, then the MachineDeployment. Its templates and Usages go once the MachineDeployment is gone.", ref, why, strings.Join(names, " and ")),
		}
	} else {
		// Released: Crossplane deletes all the pool composed, the guard
		// among them; only what the mode cannot read stays.
		obs.Keep(out.Resources, compose.RetireAll, func(resource.Name) resource.Ready { return resource.ReadyFalse })
		cond = compose.Condition{
			Type: ConditionDeletion, Status: compose.StatusTrue, Reason: ReasonReleased,
			Message: fmt.Sprintf("%s is being removed: %s. Its MachineDeployment is gone; its templates, Usages and deletion guard are deleted now, and the XNodePool goes with them.", ref, why),
		}
	}
	if len(out.Resources) == 0 {
		out.Resources = nil
	}
	out.Status = previousStatusFields(xr)
	out.Conditions = []compose.Condition{cond}
	if prev.Condition(ConditionDeletion) != string(cond.Status)+"/"+cond.Reason {
		out.Results = []compose.Result{{Severity: compose.SeverityNormal, Reason: cond.Reason, Message: cond.Message}}
	}
	return out
}

// draining names the Cluster API objects a pool being removed still has.
func draining(obs read.Composed) []string {
	var names []string
	for _, n := range []resource.Name{read.ResourceMachineDeployment, read.ResourceMachineHealthCheck} {
		if u, ok := obs.Resources[n]; ok {
			names = append(names, fmt.Sprintf("%s %s", u.GetKind(), u.GetName()))
		}
	}
	return names
}

// previousStatusFields are the pool's status fields as observed: a pool
// being removed changes only its conditions.
func previousStatusFields(xr *composite.Unstructured) map[string]any {
	st, _ := xr.Object["status"].(map[string]any)
	out := map[string]any{}
	for _, k := range []string{"image", "template", "bootstrapTemplate", "gate", "replicas", "readyReplicas"} {
		if v, ok := st[k]; ok {
			out[k] = v
		}
	}
	return out
}
