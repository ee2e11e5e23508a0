package nodepool

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
	"github.com/cozystack/function-worker-image/internal/observed"
)

// Deleting a pool.
//
// Deleting the XNodePool alone cannot delete its workers. Cluster API makes
// the Cluster an owner of the MachineDeployment (util.EnsureOwnerRef in
// internal/controllers/machinedeployment/machinedeployment_controller.go,
// v1.11.4), of the templates it references (reconcileExternalTemplateReference)
// and of the MachineHealthCheck. Crossplane deletes an XR by removing its
// finalizer and leaving its composed resources to the garbage collector,
// without calling the function (internal/controller/apiextensions/composite/
// reconciler.go, the meta.WasDeleted branch, v2.2.0), and the collector
// deletes an object only once every owner is gone: with the Cluster alive it
// strips the XNodePool's reference and the workers keep running.
//
// So the pool deletes its Cluster API objects itself, while it still exists,
// the only way a composition deletes: by leaving them out of its desired
// state, which makes Crossplane delete them explicitly (foreground,
// DeletingComposedResourceGarbageCollector in composition_functions.go),
// whatever other owners they have. Two mechanisms keep the XNodePool alive
// long enough and tell the function that it is wanted gone:
//
//   - The deletion guard, a Usage of the XNodePool by its MachineDeployment
//     with replayDeletion. Crossplane's webhook refuses every DELETE of the
//     XNodePool while the MachineDeployment exists (kubectl delete, the
//     garbage collector of a deleted XTenantCluster, the namespace
//     controller) and records the attempt on it as annotation
//     usage.crossplane.io/deletion-attempt-with-policy
//     (internal/webhook/protection/usage/handler.go). The annotation change
//     reconciles the XNodePool (the composite controller watches its XRs
//     with no predicate, definition/reconciler.go).
//   - Annotation workerimage.cozystack.io/teardown: "true", which an
//     XTenantCluster sets on a pool it no longer has in spec.nodePools, so
//     that Crossplane never has to delete a guarded XNodePool (a refused
//     delete aborts the whole composition of the XTenantCluster).
//
// A pool asked to go drains first: everything stays as observed but the
// MachineDeployment and the MachineHealthCheck, which Crossplane deletes;
// Cluster API then deletes the MachineSets and waits for them
// (reconcileDelete, same file), and a MachineSet its Machines. Once the
// MachineDeployment is gone, nothing runs on the templates any more and the
// pool releases the rest at once: templates, the goldens' Usages (Crossplane
// strips the composite label of a Usage it garbage-collects, so it lets go
// at once) and the guard. The guard going removes the in-use label from the
// XNodePool and, when a delete was refused, replays it about two seconds
// later (internal/controller/protection/usage/reconciler.go); the XNodePool
// is then deleted and the garbage collector takes what is left. A pool asked
// through the annotation reports Released, and its XTenantCluster deletes it.
//
// A deletion cannot be taken back once asked: the attempt stays recorded on
// the XNodePool, as a deletion timestamp would.

// resourceDeletionGuard is the guard's composition resource name; not under
// prefixUsage, which protectClones owns.
const resourceDeletionGuard = resource.Name("deletion-guard")

// The Deletion condition and its reasons (apis/v1alpha1, which the tenant
// cluster reads).
const (
	ConditionDeletion     = v1alpha1.ConditionDeletion
	ReasonDrainingWorkers = v1alpha1.ReasonDrainingWorkers
	ReasonReleased        = v1alpha1.ReasonReleased
)

// teardown is why a pool was asked to go; empty when it was not.
type teardown string

// teardownOf reads the composite's annotations: a delete Crossplane refused,
// or its XTenantCluster's teardown annotation.
func teardownOf(xr *composite.Unstructured) teardown {
	a := xr.GetAnnotations()
	if policy, ok := a[labels.AnnDeletionAttempt]; ok {
		return teardown(fmt.Sprintf("its deletion was asked (annotation %s=%s, recorded by Crossplane's usage webhook) and is held by its deletion guard until its workers are gone", labels.AnnDeletionAttempt, policy))
	}
	if a[labels.AnnTeardown] == "true" {
		return teardown(fmt.Sprintf("annotation %s=true asks for its removal (its XTenantCluster no longer lists it in spec.nodePools)", labels.AnnTeardown))
	}
	return ""
}

// renderDeletionGuard is the Usage that keeps the XNodePool from being
// deleted while its MachineDeployment exists. Only a namespaced XNodePool
// has one: a Usage's `by` must be in its own namespace, so a legacy
// cluster-scoped composite behind a claim cannot be guarded by its
// namespaced MachineDeployment.
func renderDeletionGuard(xr *composite.Unstructured, p pool, deploymentAPIVersion string) *protectionv1beta1.Usage {
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

// guardDeletion adds the deletion guard to a desired state that holds the
// MachineDeployment (desired or kept). Without Usages, or for a cluster-scoped
// composite, an existing guard is kept only while the deployment is.
func (pl plan) guardDeletion(into map[resource.Name]*resource.DesiredComposed, xr *composite.Unstructured, enabled bool) error {
	if _, ok := into[resourceMachineDeployment]; !ok {
		return nil
	}
	if !enabled || xr.GetNamespace() == "" {
		if u, ok := pl.Observed.Resources[resourceDeletionGuard]; ok {
			into[resourceDeletionGuard] = compose.Kept(u, resource.ReadyTrue)
		}
		return nil
	}
	return pl.emitUsage(into, resourceDeletionGuard, renderDeletionGuard(xr, pl.Pool, clusterapi.APIVersion(pl.ClusterAPI)))
}

// composeTeardown is the whole output of a pool asked to go. It decides from
// the composite and what it composed alone: a pool whose spec is no longer
// valid, or whose golden is gone, can still be deleted.
func composeTeardown(xr *composite.Unstructured, why teardown, obs composedState, prev previous) compose.Output {
	ref := fmt.Sprintf("XNodePool %q", observed.Ref(&xr.Unstructured))
	out := compose.Output{Resources: map[resource.Name]*resource.DesiredComposed{}, NotReady: true}
	var cond compose.Condition
	if names := draining(obs); len(names) > 0 {
		// Drain: everything stays as it is but what Cluster API must delete
		// first. The templates stay while Machines may still need them.
		obs.Keep(out.Resources, func(n resource.Name) bool {
			return n == resourceMachineDeployment || n == resourceMachineHealthCheck
		}, func(resource.Name) resource.Ready { return resource.ReadyFalse })
		cond = compose.Condition{
			Type: ConditionDeletion, Status: compose.StatusTrue, Reason: ReasonDrainingWorkers,
			Message: fmt.Sprintf("%s is being removed: %s. Crossplane deletes its %s; Cluster API deletes its MachineSets and Machines, then the MachineDeployment. Its templates and Usages go once the MachineDeployment is gone.", ref, why, strings.Join(names, " and ")),
		}
	} else {
		// Released: nothing left in the desired state, so Crossplane
		// deletes every remaining composed resource, the guard among them.
		// Only what the mode cannot read stays, as always.
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
	if prev.condition(ConditionDeletion) != string(cond.Status)+"/"+cond.Reason {
		out.Results = []compose.Result{{Severity: compose.SeverityNormal, Reason: cond.Reason, Message: cond.Message}}
	}
	return out
}

// draining names the Cluster API objects a pool being removed still has.
func draining(obs composedState) []string {
	var names []string
	for _, n := range []resource.Name{resourceMachineDeployment, resourceMachineHealthCheck} {
		if u, ok := obs.Resources[n]; ok {
			names = append(names, fmt.Sprintf("%s %s", u.GetKind(), u.GetName()))
		}
	}
	return names
}

// previousStatusFields are the status fields the pool writes, as observed:
// a pool being removed changes none of them but its conditions.
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
