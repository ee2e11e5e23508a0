package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// madeByHelm is obj as the kubernetes-nodes chart leaves it in ns under
// name: Helm's label and annotations, no owner (Cluster API adds its
// Cluster later), nothing the API server wrote.
func madeByHelm(obj *unstructured.Unstructured, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": obj.GetAPIVersion(), "kind": obj.GetKind(), "spec": obj.DeepCopy().Object["spec"],
	}}
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(map[string]string{"app.kubernetes.io/managed-by": "Helm"})
	u.SetAnnotations(map[string]string{"meta.helm.sh/release-name": "kubernetes-nodes-" + name, "meta.helm.sh/release-namespace": ns})
	return u
}

// rollsNothing fails the test if, for d, MachineDeployment md leaves
// template tmpl, gets other MachineSets than before's, or replaces one of
// the Machines uids (name to UID). what names the change, for messages.
func rollsNothing(t *testing.T, what, ns, md, tmpl string, before deploymentState, uids map[string]string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		now, err := readDeployment(ctx, ns, md)
		var got map[string]string
		if err == nil {
			got, err = machineUIDs(ctx, ns, md)
		}
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(before.Sets, now.Sets); diff != "" || now.Template != tmpl {
			t.Fatalf("%s rolled the pool: MachineDeployment on %s (want %s), MachineSets (-before, +now):\n%s", what, now.Template, tmpl, diff)
		}
		if diff := cmp.Diff(uids, got); diff != "" {
			t.Fatalf("%s replaced Machines (-before, +now):\n%s", what, diff)
		}
		time.Sleep(3 * time.Second)
	}
}

// machineUIDs are the pool's Machines, name to UID.
func machineUIDs(ctx context.Context, ns, md string) (map[string]string, error) {
	ms, err := cp.List(ctx, harness.Machine, ns, harness.DeploymentNameLabel+"="+md)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, m := range ms {
		out[m.GetName()] = string(m.GetUID())
	}
	return out, nil
}

// A pool another tool made (the kubernetes-nodes chart: the same
// MachineDeployment name, templates under the chart's hash-suffixed names,
// Helm's metadata) is adopted by the XNodePool written for it on the real
// Crossplane and Cluster API: the MachineDeployment keeps its template
// references, so Cluster API (MachineTemplateUpToDate, internal/controllers/
// machinedeployment/mdutil/util.go, v1.11.4) creates no MachineSet and
// replaces no Machine, while Crossplane takes the objects over.
//
// The templates are the function's rendering for the same spec, in another
// namespace, under the chart's names: whether the chart's own rendering is
// equivalent is decided by the function alone and is proved on a fixture
// written from the chart's templates (internal/nodepool/adopt_chart_test.go);
// here what only a cluster shows is proved: that Crossplane composes onto
// objects it did not create, and that Cluster API rolls nothing.
func TestAChartMadePoolIsAdoptedWithoutARoll(t *testing.T) {
	requireMode(t, "NodePool")
	const src, ns, cluster = "e2e-adopt-src", "e2e-adopt", "cadopt"
	sid := schematicID("adoption")
	chart := chartMadePool(t, src, ns, cluster, sid)
	md, chartKMT, chartTCT, before, uids := chart.MD, chart.KMT, chart.TCT, chart.Before, chart.Machines

	xr := poolXR(ns, cluster, sid, "{factory: {}}")
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	// RenderingCurrent says Adopted on the reconcile that adopts, and
	// KeptFromEarlierRelease ("made by another tool") on the next ones,
	// which may come first on a core whose watch wakes the pool at once
	// (v2.3.4 here): both name the chart's template.
	cp.WaitCondition(t, reconcileTimeout, harness.NodePool, ns, xr.GetName(), "RenderingCurrent", "False", "another tool", chartKMT)
	// Crossplane took the objects over: the XNodePool is their controller.
	waitControlledBy(t, xr, []objectRef{{harness.MachineDeployment, md}, {harness.KubevirtMachineTemplate, chartKMT}, {harness.TalosConfigTemplate, chartTCT}})
	// And Cluster API rolled nothing: for a settle period, the deployment
	// stays on the chart's templates, with the MachineSet and the Machine
	// it had.
	rollsNothing(t, "adopting", ns, md, chartKMT, before, uids, 30*time.Second)
	boot := bootstrapTemplateOf(t, ns, md)
	if boot != chartTCT {
		t.Errorf("MachineDeployment on TalosConfigTemplate %s, want the chart's %s", boot, chartTCT)
	}
	t.Logf("adopted: MachineSets %v and Machines %v unchanged over 30 s", before.Sets, uids)
	nothingRefusedIn(t, ns)

	// Adopted objects are the XNodePool's composed resources like any
	// other: deleting the pool drains and removes the chart's deployment,
	// its Machines and both templates while the Cluster lives, and leaves
	// no worker disk behind.
	c := cp.MustGet(t, harness.Cluster, ns, cluster)
	deletePool(t, ns, xr.GetName(), md)
	waitPoolRemoved(t, ns, xr.GetName(), md, []string{chartKMT}, c)
	cp.WaitGone(t, gcTimeout, harness.TalosConfigTemplate, ns, chartTCT)
	cp.Eventually(t, gcTimeout, "the adopted pool's Machines, MachineSets and worker disks to be gone", func(ctx context.Context) error {
		for _, gvk := range []schema.GroupVersionKind{harness.Machine, harness.MachineSet, harness.DataVolume} {
			left, err := cp.List(ctx, gvk, ns, "")
			if err != nil {
				return err
			}
			if len(left) > 0 {
				return fmt.Errorf("%d %s left, e.g. %s", len(left), gvk.Kind, left[0].GetName())
			}
		}
		return nil
	})
}

// chartPool is a pool the kubernetes-nodes chart made, settled.
type chartPool struct {
	MD, KMT, TCT string
	Before       deploymentState
	// Machines are its Machines, name to UID.
	Machines map[string]string
}

// chartMadePool makes, in ns, the pool of cluster on schematic sid as the
// chart leaves it (the function's rendering of the same spec, read from a
// pool composed in src, under the chart's names and with Helm's metadata)
// and waits until Cluster API has settled it with one worker.
func chartMadePool(t *testing.T, src, ns, cluster, sid string) chartPool {
	t.Helper()
	md := cluster + "-" + poolName

	// What the chart rendered: the templates and deployment of the same
	// pool, read from a pool the function composed elsewhere.
	inNamespace(t, src)
	capiCluster(t, src, cluster)
	rendered := poolXR(src, cluster, sid, "{factory: {}}")
	cp.MustApply(t, rendered)
	deleteOnCleanup(t, rendered)
	kmt := poolTemplate(t, reconcileTimeout, src, rendered.GetName())
	cp.WaitExists(t, reconcileTimeout, harness.MachineDeployment, src, md)
	tct := cp.MustGet(t, harness.TalosConfigTemplate, src, bootstrapTemplateOf(t, src, md))
	deployment := cp.MustGet(t, harness.MachineDeployment, src, md)
	// The source pool is not needed any more; its workers would only load
	// the machine.
	deletePool(t, src, rendered.GetName(), md)

	inNamespace(t, ns)
	capiCluster(t, ns, cluster)
	chartKMT, chartTCT := md+"-3f9a1c", md+"-b7e2d4"
	k := madeByHelm(kmt, ns, chartKMT)
	// The chart's disk carries its own bookkeeping, not the function's.
	dvts, _, _ := unstructured.NestedSlice(k.Object, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates")
	for _, d := range dvts {
		_ = unstructured.SetNestedStringMap(d.(map[string]any), map[string]string{"cdi.kubevirt.io/storage.usePopulator": "false"}, "metadata", "annotations")
		unstructured.RemoveNestedField(d.(map[string]any), "metadata", "labels")
	}
	_ = unstructured.SetNestedSlice(k.Object, dvts, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates")
	b := madeByHelm(tct, ns, chartTCT)
	d := madeByHelm(deployment, ns, md)
	for _, ref := range []struct{ path []string }{{[]string{"spec", "template", "spec", "infrastructureRef"}}, {[]string{"spec", "template", "spec", "bootstrap", "configRef"}}} {
		r, _, _ := unstructured.NestedMap(d.Object, ref.path...)
		if _, ok := r["namespace"]; ok {
			r["namespace"] = ns
		}
		r["name"] = map[bool]string{true: chartKMT, false: chartTCT}[ref.path[3] == "infrastructureRef"]
		_ = unstructured.SetNestedMap(d.Object, r, ref.path...)
	}
	cp.MustApply(t, k, b, d)
	// The worker's disk is an HTTP import: CDI finishes it once the kubelet
	// stand-in ends its importer pod.
	var disk string
	cp.Eventually(t, capiTimeout, "the chart pool's worker disk to be created", func(ctx context.Context) error {
		dvs, err := cp.List(ctx, harness.DataVolume, ns, "")
		if err != nil {
			return err
		}
		if len(dvs) == 0 {
			return fmt.Errorf("no DataVolume in %s yet", ns)
		}
		disk = dvs[0].GetName()
		return nil
	})
	endImport(t, ns, disk, harness.ImporterSucceeded)
	before := waitSettled(t, ns, md, chartKMT, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	uids, err := machineUIDs(ctx, ns, md)
	cancel()
	if err != nil || len(uids) != 1 {
		t.Fatalf("Machines of the chart's pool: %v, %v", uids, err)
	}
	t.Logf("the chart's pool: %s, Machines %v", before, uids)

	return chartPool{MD: md, KMT: chartKMT, TCT: chartTCT, Before: before, Machines: uids}
}

// objectRef names an object of a kind in the namespace at hand.
type objectRef struct {
	gvk  schema.GroupVersionKind
	name string
}

// waitControlledBy waits until every object of objs, in xr's namespace, has
// xr as its controller.
func waitControlledBy(t *testing.T, xr *unstructured.Unstructured, objs []objectRef) {
	t.Helper()
	for _, o := range objs {
		cp.Eventually(t, reconcileTimeout, fmt.Sprintf("%s %s/%s to be controlled by %s %s", o.gvk.Kind, xr.GetNamespace(), o.name, xr.GetKind(), xr.GetName()), func(ctx context.Context) error {
			u, err := cp.Existing(ctx, o.gvk, xr.GetNamespace(), o.name)
			if err != nil {
				return err
			}
			for _, r := range u.GetOwnerReferences() {
				if r.Kind == xr.GetKind() && r.Name == xr.GetName() && r.Controller != nil && *r.Controller {
					return nil
				}
			}
			return fmt.Errorf("owner references %v", u.GetOwnerReferences())
		})
	}
}
