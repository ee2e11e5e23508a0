package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// autoscalerManager is the field manager the suite writes replica counts
// as, standing in for the cluster-autoscaler (which scales through the
// MachineDeployment's scale subresource under its own manager).
const autoscalerManager = "cluster-autoscaler"

// autoscaledPoolXR is an HTTP-path pool between min and max workers, with no
// replicas (the XRD defaults none).
func autoscaledPoolXR(ns, cluster string, lo, hi int) *unstructured.Unstructured {
	return harness.MustObject(fmt.Sprintf(`
apiVersion: workerimage.cozystack.io/v1alpha1
kind: XNodePool
metadata:
  name: %[2]s-%[3]s
  namespace: %[1]s
spec:
  clusterName: %[2]s
  poolName: %[3]s
  version: v1.35
  minReplicas: %[4]d
  maxReplicas: %[5]d
  instanceType: u1.medium
  talos:
    version: %[6]s
  osImage: {factory: {}}
  healthCheck:
    maxUnhealthy: "1"
`, ns, cluster, poolName, lo, hi, talosVersion))
}

// Scenario: an autoscaled pool's MachineDeployment carries the autoscaler's
// bounds and no spec.replicas, so a count another field manager sets
// survives Crossplane's server-side applies, including the apply of a
// changed deployment; the pool's MachineHealthCheck is admitted by the API
// server with Cluster API's CRDs.
func TestAutoscaledPoolLeavesReplicasToTheAutoscaler(t *testing.T) {
	requireMode(t, "NodePool")
	const ns, cluster = "e2e-autoscale", "c-as"
	inNamespace(t, ns)
	xr := autoscaledPoolXR(ns, cluster, 1, 4)
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	md := cluster + "-" + poolName

	deployment := func(ctx context.Context) (*unstructured.Unstructured, error) {
		return cp.Existing(ctx, harness.MachineDeployment, ns, md)
	}
	annotation := func(u *unstructured.Unstructured, k string) string { return u.GetAnnotations()[k] }
	const minSize = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
	const maxSize = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"

	// The function leaves spec.replicas unset (the render tests pin that);
	// Cluster API's defaulting webhook then sets a new deployment's
	// replicas to the autoscaler's min size, and keeps the old value on
	// every later update that leaves it unset
	// (internal/webhooks/machinedeployment.go,
	// calculateMachineDeploymentReplicas, v1.11.4: "defaulting always sets
	// the replica field").
	cp.Eventually(t, reconcileTimeout, "MachineDeployment "+md+" to carry the autoscaler bounds and the min size Cluster API's webhook defaults replicas to", func(ctx context.Context) error {
		u, err := deployment(ctx)
		if err != nil {
			return err
		}
		if got, set, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); !set || got != 1 {
			return fmt.Errorf("spec.replicas is %v (set %t), want 1, the min size", got, set)
		}
		if annotation(u, minSize) != "1" || annotation(u, maxSize) != "4" {
			return fmt.Errorf("annotations %v", u.GetAnnotations())
		}
		return nil
	})

	mhc := cp.WaitExists(t, reconcileTimeout, harness.MachineHealthCheck, ns, md)
	if v, _, _ := unstructured.NestedFieldNoCopy(mhc.Object, "spec", "maxUnhealthy"); v != int64(1) {
		t.Errorf("MachineHealthCheck %s: spec.maxUnhealthy %#v, want the integer 1", md, v)
	}

	// The autoscaler scales the pool to 3.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	scale := harness.MustObject(fmt.Sprintf(`
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata:
  name: %s
  namespace: %s
spec:
  replicas: 3
`, md, ns))
	if err := cp.ApplyAs(ctx, autoscalerManager, scale); err != nil {
		t.Fatal(err)
	}
	replicasAre := func(want int64, maxWant string) func(context.Context) error {
		return func(ctx context.Context) error {
			u, err := deployment(ctx)
			if err != nil {
				return err
			}
			got, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
			if got != want || annotation(u, maxSize) != maxWant {
				return fmt.Errorf("spec.replicas %d (want %d), max-size %q (want %q)", got, want, annotation(u, maxSize), maxWant)
			}
			return nil
		}
	}
	cp.Consistently(t, 3*functionTTL, "the autoscaler's replica count to survive Crossplane's reconciles", replicasAre(3, "4"))

	// A changed pool makes Crossplane apply a changed deployment; the
	// autoscaler's count still stands.
	cp.MustApply(t, autoscaledPoolXR(ns, cluster, 1, 5))
	cp.Eventually(t, reconcileTimeout, "the new ceiling to reach MachineDeployment "+md, replicasAre(3, "5"))
	cp.Consistently(t, 2*functionTTL, "the autoscaler's replica count to survive the changed deployment", replicasAre(3, "5"))

	cp.Eventually(t, reconcileTimeout, "the pool to report the autoscaler's count", func(ctx context.Context) error {
		u, err := cp.Existing(ctx, harness.NodePool, ns, xr.GetName())
		if err != nil {
			return err
		}
		if got, _, _ := unstructured.NestedInt64(u.Object, "status", "replicas"); got != 3 {
			return fmt.Errorf("status.replicas %d", got)
		}
		return nil
	})
	nothingRefusedIn(t, ns)
}
