package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// labelledPool is sizedPool with labels.
func labelledPool(ns, cluster, sid string, labels map[string]any) *unstructured.Unstructured {
	xr := sizedPool(ns, cluster, sid, 1, "20Gi")
	_ = unstructured.SetNestedMap(xr.Object, labels, "spec", "labels")
	return xr
}

// machineLabels are the labels of the pool's Machines, by Machine name.
func machineLabels(ctx context.Context, ns, md string) (map[string]map[string]string, error) {
	ms, err := cp.List(ctx, harness.Machine, ns, harness.DeploymentNameLabel+"="+md)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	for _, m := range ms {
		out[m.GetName()] = m.GetLabels()
	}
	return out, nil
}

// A label Cluster API syncs from a Machine to its Node
// (node.cluster.x-k8s.io, util/labels GetManagedLabels, v1.11.4) changes on
// the running workers in place, on the real Cluster API: the function sets
// it on the MachineDeployment's machine template only, Cluster API
// propagates it to the MachineSet and the Machine (machineset_controller.go
// syncMachines), and MachineTemplateUpToDate (mdutil/util.go) ignores
// metadata, so no MachineSet is created and no Machine replaced. A label
// Talos writes (machine.nodeLabels) is in the TalosConfigTemplate the node
// booted with: adding one rolls the pool exactly once. The Node half of the
// sync (Machine to Node) needs a workload cluster, which the suite has not.
func TestASyncedLabelChangesInPlaceOnRealCAPI(t *testing.T) {
	const ns, cluster = "e2e-inplace", "inplace"
	sid := schematicID("inplace")
	const synced = "node.cluster.x-k8s.io/tier"
	xr := realCAPIPool(t, ns, cluster, sid, 1, "20Gi")
	md := cluster + "-" + poolName
	kmt := poolTemplate(t, reconcileTimeout, ns, xr.GetName()).GetName()
	before := waitSettled(t, ns, md, kmt, 1)
	tct := bootstrapTemplateOf(t, ns, md)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	uids, err := machineUIDs(ctx, ns, md)
	cancel()
	if err != nil || len(uids) != 1 {
		t.Fatalf("Machines of the pool: %v, %v", uids, err)
	}

	// In place: the Machine gets the label, nothing else changes.
	cp.MustApply(t, labelledPool(ns, cluster, sid, map[string]any{synced: "gold"}))
	cp.Eventually(t, capiTimeout, "Cluster API to label Machine(s) "+fmt.Sprint(slices.Sorted(maps.Keys(uids)))+" "+synced+"=gold in place", func(ctx context.Context) error {
		got, err := machineLabels(ctx, ns, md)
		if err != nil {
			return err
		}
		for m, l := range got {
			if l[synced] != "gold" {
				return fmt.Errorf("Machine %s labels %v", m, l)
			}
		}
		return nil
	})
	rollsNothing(t, "a synced label", ns, md, kmt, before, uids, 20*time.Second)
	if got := bootstrapTemplateOf(t, ns, md); got != tct {
		t.Fatalf("a synced label renamed the TalosConfigTemplate %s to %s", tct, got)
	}
	t.Logf("in place: MachineSets %v, Machines %v, templates %s and %s unchanged", before.Sets, uids, kmt, tct)

	// A Talos label rolls, once: one new MachineSet on a new Talos config,
	// every Machine replaced, the synced label carried over.
	cp.MustApply(t, labelledPool(ns, cluster, sid, map[string]any{synced: "gold", "workload": "batch"}))
	created := map[string]bool{}
	cp.Eventually(t, capiTimeout, "Cluster API to roll "+md+" onto a new TalosConfigTemplate", func(ctx context.Context) error {
		s, err := readDeployment(ctx, ns, md)
		if err != nil {
			return err
		}
		for ms := range s.Sets {
			if _, old := before.Sets[ms]; !old {
				created[ms] = true
			}
		}
		u, err := cp.Existing(ctx, harness.MachineDeployment, ns, md)
		if err != nil {
			return err
		}
		boot, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "bootstrap", "configRef", "name")
		got, err := machineUIDs(ctx, ns, md)
		if err != nil {
			return err
		}
		if boot == tct || !s.settledOn(kmt, 1) {
			return fmt.Errorf("bootstrap %s; %s", boot, s)
		}
		for m, uid := range got {
			if uids[m] == uid {
				return fmt.Errorf("Machine %s not replaced yet", m)
			}
		}
		return nil
	})
	if len(created) != 1 {
		t.Errorf("a Talos label created MachineSets %v, want exactly one", slices.Sorted(maps.Keys(created)))
	}
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	got, err := machineLabels(ctx, ns, md)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	for m, l := range got {
		if l[synced] != "gold" {
			t.Errorf("the new Machine %s lost the synced label: %v", m, l)
		}
	}
	nothingRefusedIn(t, ns)
}
