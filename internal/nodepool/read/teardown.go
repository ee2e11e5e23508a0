package read

import (
	"github.com/crossplane/function-sdk-go/resource"
)

// Deleting a pool. Deleting the XNodePool alone leaves its workers running:
// Cluster API makes the Cluster an owner of the MachineDeployment, its
// templates and the MachineHealthCheck (v1.11.4
// internal/controllers/machinedeployment/machinedeployment_controller.go
// util.EnsureOwnerRef, reconcileExternalTemplateReference), and Crossplane
// deletes an XR without calling the function, leaving its composed resources
// to the garbage collector (v2.2.0 internal/controller/apiextensions/
// composite/reconciler.go, meta.WasDeleted), which keeps what has a live owner.
//
// So the pool, while it exists, leaves them out of its desired state, and
// Crossplane deletes them whatever their owners (composition_functions.go
// DeletingComposedResourceGarbageCollector). The XNodePool stays, and learns
// it is to go, by:
//   - the deletion guard, a Usage of the XNodePool by its MachineDeployment
//     with replayDeletion: the webhook refuses every DELETE and records it as
//     usage.crossplane.io/deletion-attempt-with-policy
//     (internal/webhook/protection/usage/handler.go), which reconciles the
//     XNodePool (definition/reconciler.go watches XRs with no predicate);
//   - workerimage.cozystack.io/teardown, set by an XTenantCluster on a pool
//     it dropped, as a refused delete would abort its whole composition.
//
// The pool drops its MachineDeployment and health check, keeps the rest
// until Cluster API has deleted the MachineSets and Machines
// (reconcileDelete), then releases templates, Usages (a collected Usage loses
// its composite label and lets go at once) and the guard, whose going replays
// a refused delete about two seconds later
// (internal/controller/protection/usage/reconciler.go). Asked by annotation,
// it reports Released and its XTenantCluster deletes it. The ask cannot be
// taken back: the attempt stays recorded, like a deletion timestamp.

// resourceDeletionGuard is the guard's composition resource name; not under
// prefixUsage, which protectClones owns.
const ResourceDeletionGuard = resource.Name("deletion-guard")
