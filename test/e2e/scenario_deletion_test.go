package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// Deleting a pool (issue 19): Cluster API makes the Cluster an owner of the
// MachineDeployment, of the templates it references and of the
// MachineHealthCheck (util.EnsureOwnerRef in
// internal/controllers/machinedeployment/machinedeployment_controller.go and
// machinehealthcheck_controller.go, v1.11.4), so the garbage collector alone
// never deletes them while the Cluster lives. These scenarios run on the real
// Cluster API manager, which co-owns the pool's objects that way, and prove
// that every way of deleting the pool removes them all the same, on the real
// Crossplane, webhook and garbage collector.

// capiCluster creates the Cluster API Cluster name in ns as the harness runs
// it against the real Cluster API manager (CreateCluster: a control plane
// stand-in and the kubeconfig of the suite's API server) and returns it.
func capiCluster(t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cp.CreateCluster(ctx, ns, name); err != nil {
		t.Fatal(err)
	}
	deleteOnCleanup(t, harness.MustObject(fmt.Sprintf("apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata:\n  name: %s\n  namespace: %s\n", name, ns)))
	return cp.WaitExists(t, reconcileTimeout, harness.Cluster, ns, name)
}

// coOwnedByCAPI waits until Cluster API has made cluster an owner of the
// object, as util.EnsureOwnerRef does (not a controller, next to the
// XNodePool's controller reference): the MachineDeployment controller for
// the deployment and the templates it references
// (machinedeployment_controller.go, reconcileExternalTemplateReference,
// v1.11.4), the MachineHealthCheck controller for the health check.
func coOwnedByCAPI(t *testing.T, gvk schema.GroupVersionKind, ns, name string, cluster *unstructured.Unstructured) {
	t.Helper()
	cp.Eventually(t, reconcileTimeout, fmt.Sprintf("%s %s/%s to be co-owned by Cluster %s", gvk.Kind, ns, name, cluster.GetName()), func(ctx context.Context) error {
		got, err := cp.Existing(ctx, gvk, ns, name)
		if err != nil {
			return err
		}
		for _, r := range got.GetOwnerReferences() {
			if r.Kind == "Cluster" && r.UID == cluster.GetUID() {
				return nil
			}
		}
		return fmt.Errorf("owner references %v", got.GetOwnerReferences())
	})
}

// deletePool deletes an XNodePool the way kubectl does. A pool whose
// MachineDeployment exists answers with its deletion guard, the Usage
// <pool>-deletion-guard by that deployment: the delete is recorded and
// carried out once the workers are gone. Any other answer fails the test.
func deletePool(t *testing.T, ns, name, deployment string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tryDeletePool(ctx, ns, name, deployment); err != nil {
		t.Fatal(err)
	}
}

// tryDeletePool is deletePool for callers off the test's goroutine: an
// error unless the delete was accepted or deferred by the deletion guard.
func tryDeletePool(ctx context.Context, ns, name, deployment string) error {
	if err := cp.Delete(ctx, harness.NodePool, ns, name); !deleteAcceptedOrDeferred(err, deployment) {
		return fmt.Errorf("deleting XNodePool %s/%s: %v; %s", ns, name, err, wantAcceptedOrDeferred(deployment))
	}
	return nil
}

// deletePoolAgainIfCut is deletePool for a step whose fault may cut the
// delete call: the nousages webhook is Crossplane's, and a restart of
// Crossplane or of the apiserver between the webhook recording the attempt
// and the answer reaching the client ends the call with the webhook or the
// apiserver unreachable. A user whose kubectl printed that deletes again;
// so does this, until the delete is accepted or deferred.
func deletePoolAgainIfCut(t *testing.T, ns, name, deployment string) {
	t.Helper()
	deadline := time.Now().Add(reconcileTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := cp.Delete(ctx, harness.NodePool, ns, name)
		cancel()
		if deleteAcceptedOrDeferred(err, deployment) {
			return
		}
		if !unreachable(err.Error()) || time.Now().After(deadline) {
			t.Fatalf("deleting XNodePool %s/%s: %v; %s", ns, name, err, wantAcceptedOrDeferred(deployment))
		}
		t.Logf("deleting XNodePool %s/%s was cut (%v); deleting again", ns, name, err)
		time.Sleep(2 * time.Second)
	}
}

// deleteAcceptedOrDeferred reports whether a pool's delete was accepted, or
// deferred by the nousages webhook on the pool's deletion guard.
func deleteAcceptedOrDeferred(err error, deployment string) bool {
	if err == nil {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, harness.UsageWebhookName) && strings.Contains(msg, deployment+"-deletion-guard") && strings.Contains(msg, "by resource MachineDeployment/"+deployment)
}

func wantAcceptedOrDeferred(deployment string) string {
	return fmt.Sprintf("want it accepted, or deferred by %s naming the Usage %s-deletion-guard by resource MachineDeployment/%s", harness.UsageWebhookName, deployment, deployment)
}

// waitLabelledInUse waits until Crossplane has labelled the object in use
// (crossplane.io/in-use=true), which its usage controller does once a Usage
// of it is in force: from then on its webhook refuses the object's deletes.
// For an XNodePool, that Usage is the pool's deletion guard.
func waitLabelledInUse(t *testing.T, gvk schema.GroupVersionKind, ns, name string) {
	t.Helper()
	cp.Eventually(t, reconcileTimeout, fmt.Sprintf("%s %s/%s to be labelled %s=true", gvk.Kind, ns, name, harness.InUseLabel), func(ctx context.Context) error {
		o, err := cp.Existing(ctx, gvk, ns, name)
		if err != nil {
			return err
		}
		if o.GetLabels()[harness.InUseLabel] != "true" {
			return fmt.Errorf("labels are %v", o.GetLabels())
		}
		return nil
	})
}

// waitPoolRemoved waits until the pool and everything it composed are gone
// while the Cluster stays, and checks that the pool reported its removal.
func waitPoolRemoved(t *testing.T, ns, pool, deployment string, templates []string, cluster *unstructured.Unstructured) {
	t.Helper()
	cp.WaitGone(t, gcTimeout, harness.MachineDeployment, ns, deployment)
	cp.WaitGone(t, gcTimeout, harness.MachineHealthCheck, ns, deployment)
	for _, kmt := range templates {
		cp.WaitGone(t, gcTimeout, harness.KubevirtMachineTemplate, ns, kmt)
	}
	cp.WaitGone(t, gcTimeout, harness.Usage, ns, deployment+"-deletion-guard")
	cp.WaitGone(t, gcTimeout, harness.NodePool, ns, pool)
	cp.Eventually(t, gcTimeout, "every composed object in "+ns+" to be deleted", nothingComposedIn(ns))
	c := cp.MustGet(t, harness.Cluster, ns, cluster.GetName())
	if c.GetDeletionTimestamp() != nil {
		t.Fatalf("Cluster %s/%s is being deleted; the pool must go without it", ns, cluster.GetName())
	}
}

// TestDeletingAPoolRemovesItsWorkersWhileTheClusterLives: kubectl delete of
// an XNodePool whose MachineDeployment, templates and health check the
// Cluster co-owns removes them all, then the XNodePool.
func TestDeletingAPoolRemovesItsWorkersWhileTheClusterLives(t *testing.T) {
	requireMode(t, "NodePool")
	const ns, clusterName = "e2e-delete-pool", "cdel"
	inNamespace(t, ns)
	cluster := capiCluster(t, ns, clusterName)
	xr := poolXR(ns, clusterName, schematicID("delete-pool"), "{factory: {}}")
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	kmt := poolTemplate(t, reconcileTimeout, ns, xr.GetName())
	md := clusterName + "-" + poolName
	cp.WaitExists(t, reconcileTimeout, harness.MachineDeployment, ns, md)
	tct := bootstrapTemplateOf(t, ns, md)

	// The guard is enforced: Crossplane labelled the XNodePool in use.
	waitLabelledInUse(t, harness.NodePool, ns, xr.GetName())
	for _, o := range []struct {
		gvk  schema.GroupVersionKind
		name string
	}{{harness.MachineDeployment, md}, {harness.MachineHealthCheck, md}, {harness.KubevirtMachineTemplate, kmt.GetName()}, {harness.TalosConfigTemplate, tct}} {
		coOwnedByCAPI(t, o.gvk, ns, o.name, cluster)
	}

	deletePool(t, ns, xr.GetName(), md)
	cp.WaitCondition(t, reconcileTimeout, harness.NodePool, ns, xr.GetName(), "Deletion", "True")
	waitPoolRemoved(t, ns, xr.GetName(), md, []string{kmt.GetName()}, cluster)
	cp.WaitGone(t, gcTimeout, harness.TalosConfigTemplate, ns, tct)
	cp.Eventually(t, reconcileTimeout, "Crossplane to log the replayed delete of XNodePool "+xr.GetName(), func(context.Context) error {
		return logHasLine(cp.LogDir+"/crossplane.log", "Replaying deletion of the used resource", xr.GetName())
	})
	nothingRefusedIn(t, ns)
}

// TestRemovingAPoolFromATenantClusterRemovesItsWorkers: a pool that leaves
// spec.nodePools is torn down before its XNodePool is deleted, so the
// cluster's composition never meets a refused delete, and the other pool is
// left alone.
func TestRemovingAPoolFromATenantClusterRemovesItsWorkers(t *testing.T) {
	requireMode(t, "TenantCluster")
	requireMode(t, "NodePool")
	const ns, name = "e2e-remove-pool", "acme-rm"
	inNamespace(t, ns)
	cluster := capiCluster(t, ns, name)
	sid := schematicID("remove-pool")
	tenant := func(pools ...string) *unstructured.Unstructured {
		var b strings.Builder
		for _, p := range pools {
			fmt.Fprintf(&b, "    %s:\n      replicas: 1\n      instanceType: u1.medium\n      osImage:\n        factory: {}\n", p)
		}
		return harness.MustObject(fmt.Sprintf(`
apiVersion: workerimage.cozystack.io/v1alpha1
kind: XTenantCluster
metadata:
  name: %s
  namespace: %s
spec:
  version: v1.35
  talos:
    version: %s
    schematicID: %s
  nodePools:
%s`, name, ns, talosVersion, sid, b.String()))
	}
	xr := tenant("keep", "drop")
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	dropPool, dropMD := name+"-drop", name+"-drop"
	keepMD := name + "-keep"
	cp.WaitExists(t, reconcileTimeout, harness.MachineDeployment, ns, dropMD)
	cp.WaitExists(t, reconcileTimeout, harness.MachineDeployment, ns, keepMD)
	kmt := poolTemplate(t, reconcileTimeout, ns, dropPool)
	coOwnedByCAPI(t, harness.MachineDeployment, ns, dropMD, cluster)
	coOwnedByCAPI(t, harness.KubevirtMachineTemplate, ns, kmt.GetName(), cluster)
	keep := cp.MustGet(t, harness.MachineDeployment, ns, keepMD)

	cp.MustApply(t, tenant("keep"))
	cp.WaitCondition(t, reconcileTimeout, harness.NodePool, ns, dropPool, "Deletion", "True")
	cp.WaitGone(t, gcTimeout, harness.MachineDeployment, ns, dropMD)
	cp.WaitGone(t, gcTimeout, harness.KubevirtMachineTemplate, ns, kmt.GetName())
	cp.WaitGone(t, gcTimeout, harness.NodePool, ns, dropPool)
	cp.WaitCondition(t, reconcileTimeout, harness.TenantCluster, ns, name, "Synced", "True")
	if got := cp.MustGet(t, harness.MachineDeployment, ns, keepMD); got.GetUID() != keep.GetUID() || got.GetDeletionTimestamp() != nil {
		t.Fatalf("MachineDeployment %s/%s of the pool that stayed was replaced or is being deleted", ns, keepMD)
	}
	// The cluster never tried to delete a guarded pool: that refusal would
	// have aborted its composition and shown as a warning event.
	tc := cp.MustGet(t, harness.TenantCluster, ns, name)
	events, err := cp.Events(context.Background(), tc)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if strings.Contains(e.Message, "in-use") || strings.Contains(e.Message, "cannot garbage collect") {
			t.Errorf("XTenantCluster %s/%s met a refused delete: %s", ns, name, e.Message)
		}
	}
	nothingRefusedIn(t, ns)
}

// ownedByKind reports whether obj has an owner reference of kind named name.
func ownedByKind(obj *unstructured.Unstructured, kind, name string) bool {
	for _, r := range obj.GetOwnerReferences() {
		if r.Kind == kind && r.Name == name {
			return true
		}
	}
	return false
}

// TestDeletingTheNamespaceRemovesItsPools: deleting a tenant namespace with a
// running pool and its Cluster. The namespace controller deletes every
// object in it; the XNodePool's delete is deferred by its guard until its
// MachineDeployment is gone (which Cluster API finishes once its Machines
// are), then replayed, and the namespace goes. Nothing is left behind in it,
// and no Machine waits on a template that went first.
func TestDeletingTheNamespaceRemovesItsPools(t *testing.T) {
	requireMode(t, "NodePool")
	const ns, clusterName = "e2e-delete-namespace", "cns"
	inNamespace(t, ns)
	cluster := capiCluster(t, ns, clusterName)
	xr := poolXR(ns, clusterName, schematicID("delete-namespace"), "{factory: {}}")
	cp.MustApply(t, xr)
	kmt := poolTemplate(t, reconcileTimeout, ns, xr.GetName())
	md := clusterName + "-" + poolName
	cp.WaitExists(t, reconcileTimeout, harness.MachineDeployment, ns, md)
	coOwnedByCAPI(t, harness.MachineDeployment, ns, md, cluster)
	coOwnedByCAPI(t, harness.KubevirtMachineTemplate, ns, kmt.GetName(), cluster)
	waitLabelledInUse(t, harness.NodePool, ns, xr.GetName())

	cp.MustDelete(t, harness.Namespace, "", ns)
	cp.WaitGone(t, 3*gcTimeout, harness.NodePool, ns, xr.GetName())
	cp.WaitGone(t, 3*gcTimeout, harness.Namespace, "", ns)
}
