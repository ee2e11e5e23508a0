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

// inProgressTTL is the Input's polling.inProgress default, which the
// suite's Compositions do not override: the TTL of a held pool and of a
// catalog that is importing or whose clone RoleBinding is not yet as it
// wants it. (The steady TTL is the suite's --ttl, functionTTL.)
const inProgressTTL = 15 * time.Second

// oneGatedReconcile bounds "within one reconcile" of a gated pool: the
// function asks to be called again after the Input's polling.inProgress
// while it holds a change back, Crossplane jitters that by up to 10%, and
// the call needs one more round trip for its required resources. A golden
// is a required, not a composed, resource of the pool, so no watch wakes the
// pool earlier.
const oneGatedReconcile = inProgressTTL + inProgressTTL/10 + 8*time.Second

// poolName is the name of the one pool each scenario gives a cluster.
const poolName = "workers"

// poolXR returns the XNodePool <cluster>-workers in ns, joining cluster on
// Kubernetes v1.35 with Talos talosVersion and schematic sid by default, and
// the given osImage (YAML flow, e.g. "{builtin: {}}").
func poolXR(ns, cluster, sid, osImage string) *unstructured.Unstructured {
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
  replicas: 1
  instanceType: u1.medium
  diskSize: 20Gi
  talos:
    version: %[4]s
    schematicID: %[5]s
  osImage: %[6]s
`, ns, cluster, poolName, talosVersion, sid, osImage))
}

// inNamespace creates a fresh namespace for a scenario.
func inNamespace(t *testing.T, ns string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cp.EnsureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
}

// readyGolden composes a catalog with the given schematic IDs (at
// talosVersion) and lets CDI import every golden until it is Succeeded.
func readyGolden(t *testing.T, catalog string, sids ...string) {
	t.Helper()
	readyGoldenOn(t, "", catalog, sids...)
}

// readyGoldenOn is readyGolden with the catalog on Composition comp, or on
// the XRD's default when comp is empty.
func readyGoldenOn(t *testing.T, comp, catalog string, sids ...string) {
	t.Helper()
	var images []string
	for _, sid := range sids {
		images = append(images, sid+" "+talosVersion)
	}
	xr := catalogXR(catalog, images...)
	if comp != "" {
		_ = unstructured.SetNestedField(xr.Object, comp, "spec", "crossplane", "compositionRef", "name")
	}
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	for _, sid := range sids {
		g := goldenName(sid)
		cp.WaitExists(t, reconcileTimeout, harness.DataVolume, goldenNamespace, g)
		completeGolden(t, g)
	}
	for _, sid := range sids {
		waitDataVolumePhase(t, goldenNamespace, goldenName(sid), phaseSucceeded)
	}
}

// poolTemplate waits until the pool reports a template in effect that
// exists, and returns it.
func poolTemplate(t *testing.T, timeout time.Duration, ns, xrName string) *unstructured.Unstructured {
	t.Helper()
	var got *unstructured.Unstructured
	cp.Eventually(t, timeout, fmt.Sprintf("XNodePool %s/%s to compose its KubevirtMachineTemplate", ns, xrName), func(ctx context.Context) error {
		xr, err := cp.Existing(ctx, harness.NodePool, ns, xrName)
		if err != nil {
			return err
		}
		name, _, _ := unstructured.NestedString(xr.Object, "status", "template")
		if name == "" {
			return fmt.Errorf("status.template is empty; conditions %s", harness.ConditionsString(xr))
		}
		kmt, err := cp.Existing(ctx, harness.KubevirtMachineTemplate, ns, name)
		if err != nil {
			return fmt.Errorf("status.template is %s: %w; conditions %s", name, err, harness.ConditionsString(xr))
		}
		got = kmt
		return nil
	})
	return got
}

// diskSource is what the suite checks of a template's system disk.
type diskSource struct {
	CloneFrom string // <namespace>/<name> of source.pvc
	HTTP      string // source.http.url
	Storage   string
	Class     string
}

func diskSourceOf(kmt *unstructured.Unstructured) diskSource {
	dvts, _, _ := unstructured.NestedSlice(kmt.Object, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates")
	if len(dvts) == 0 {
		return diskSource{}
	}
	dvt, _ := dvts[0].(map[string]any)
	var d diskSource
	if ns, ok, _ := unstructured.NestedString(dvt, "spec", "source", "pvc", "namespace"); ok {
		n, _, _ := unstructured.NestedString(dvt, "spec", "source", "pvc", "name")
		d.CloneFrom = ns + "/" + n
	}
	d.HTTP, _, _ = unstructured.NestedString(dvt, "spec", "source", "http", "url")
	d.Storage, _, _ = unstructured.NestedString(dvt, "spec", "storage", "resources", "requests", "storage")
	d.Class, _, _ = unstructured.NestedString(dvt, "spec", "storage", "storageClassName")
	return d
}

// machineDeploymentTemplate returns the KubevirtMachineTemplate the pool's
// MachineDeployment points at, or "".
func machineDeploymentTemplate(ctx context.Context, ns, md string) (string, error) {
	u, err := cp.Get(ctx, harness.MachineDeployment, ns, md)
	if err != nil || u == nil {
		return "", err
	}
	n, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "infrastructureRef", "name")
	return n, nil
}

// poolKinds are the kinds a node pool composes: its templates, its
// MachineDeployment and the Usages that protect the goldens its clone
// templates clone from.
var poolKinds = []schema.GroupVersionKind{harness.KubevirtMachineTemplate, harness.TalosConfigTemplate, harness.MachineDeployment, harness.Usage}

// composedIn lists, per kind, the names of the pool kinds' objects in ns.
func composedIn(ctx context.Context, ns string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, gvk := range poolKinds {
		items, err := cp.List(ctx, gvk, ns, "")
		if err != nil {
			return nil, err
		}
		for _, i := range items {
			out[gvk.Kind] = append(out[gvk.Kind], i.GetName())
		}
	}
	return out, nil
}

// nothingComposedIn returns a check that no object of the pool kinds
// exists in ns.
func nothingComposedIn(ns string) func(context.Context) error {
	return nothingComposedBut(ns)
}

// nothingComposedBut returns a check that no object of the pool kinds but
// the given kinds exists in ns.
func nothingComposedBut(ns string, kinds ...string) func(context.Context) error {
	return func(ctx context.Context) error {
		got, err := composedIn(ctx, ns)
		if err != nil {
			return err
		}
		for _, k := range kinds {
			delete(got, k)
		}
		if len(got) > 0 {
			return fmt.Errorf("composed in %s: %v", ns, got)
		}
		return nil
	}
}

// allOf returns a check that passes when every one of checks does.
func allOf(checks ...func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		for _, c := range checks {
			if err := c(ctx); err != nil {
				return err
			}
		}
		return nil
	}
}

// unchanged returns a check that obj's spec, labels and annotations and
// generation stay as they are now.
func unchanged(before *unstructured.Unstructured) func(context.Context) error {
	return func(ctx context.Context) error {
		now, err := cp.Get(ctx, before.GroupVersionKind(), before.GetNamespace(), before.GetName())
		if err != nil {
			return err
		}
		if now == nil {
			return fmt.Errorf("%s %s was deleted", before.GetKind(), before.GetName())
		}
		type view struct {
			Spec                any
			Labels, Annotations map[string]string
			Generation          int64
		}
		b := view{before.Object["spec"], before.GetLabels(), before.GetAnnotations(), before.GetGeneration()}
		n := view{now.Object["spec"], now.GetLabels(), now.GetAnnotations(), now.GetGeneration()}
		if diff := cmp.Diff(b, n); diff != "" {
			return fmt.Errorf("%s %s changed\n-before, +now:\n%s", before.GetKind(), before.GetName(), diff)
		}
		return nil
	}
}

// Scenario 3: a builtin pool composes nothing while its golden imports,
// composes the clone template within one reconcile of the golden being
// Succeeded, and, once it has a template, never touches it while a change
// is held back by another golden that is still importing.
func TestBuiltinPoolWaitsWhileGoldenImports(t *testing.T) {
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	const ns, cluster = "e2e-gating", "c3"
	inNamespace(t, ns)
	sidA, sidB := schematicID("gating-a"), schematicID("gating-b")
	goldenA, goldenB := goldenName(sidA), goldenName(sidB)

	cat := catalogXR("e2e-gating", sidA+" "+talosVersion)
	cp.MustApply(t, cat)
	deleteOnCleanup(t, cat)
	cp.WaitExists(t, reconcileTimeout, harness.DataVolume, goldenNamespace, goldenA)
	waitDataVolumePhase(t, goldenNamespace, goldenA, phaseImportInProgress)

	xr := poolXR(ns, cluster, sidA, "{builtin: {}}")
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	held := cp.WaitCondition(t, reconcileTimeout, harness.NodePool, ns, xr.GetName(), "WorkerImageReady", "False", goldenA, "still importing")
	if c := harness.Condition(held, "WorkerImageReady"); c["reason"] != "GoldenImporting" {
		t.Errorf("WorkerImageReady reason = %v, want GoldenImporting", c["reason"])
	}
	cp.WaitEvent(t, reconcileTimeout, held, "Warning", goldenA, "still importing")
	// An operator sees the hold in the function's metrics (docs/operations.md)
	// and in kubectl get (the GATE and REASON columns read status.gate).
	cp.Eventually(t, reconcileTimeout, "the function's metrics to count the pool held for GoldenImporting", func(ctx context.Context) error {
		v, err := cp.FunctionMetric(ctx, "function_worker_image_held_composites", `mode="NodePool"`, `reason="GoldenImporting"`)
		if err != nil || v < 1 {
			return fmt.Errorf("held_composites{GoldenImporting} = %v, %v", v, err)
		}
		return nil
	})
	if gate, _, _ := unstructured.NestedStringMap(held.Object, "status", "gate"); gate["state"] != "Held" || gate["reason"] != "GoldenImporting" {
		t.Errorf("status.gate = %v, want Held for GoldenImporting", gate)
	}

	// Held means nothing at all is composed, for as long as the golden
	// imports; the condition above proves the function has decided already.
	cp.Consistently(t, 2*functionTTL, "nothing is composed in "+ns+" while the golden imports", nothingComposedIn(ns))

	// The golden is Succeeded: the clone template follows within one
	// reconcile.
	completeGolden(t, goldenA)
	kmtA := poolTemplate(t, oneGatedReconcile+importTimeout, ns, xr.GetName())
	want := diskSource{CloneFrom: goldenNamespace + "/" + goldenA, Storage: "20Gi", Class: harness.DefaultStorageClass}
	if diff := cmp.Diff(want, diskSourceOf(kmtA)); diff != "" {
		t.Errorf("KubevirtMachineTemplate %s: the system disk clones the golden on the golden's class\n-want, +got:\n%s", kmtA.GetName(), diff)
	}
	md := cluster + "-" + poolName
	cp.Eventually(t, reconcileTimeout, "MachineDeployment "+md+" to point at "+kmtA.GetName(), func(ctx context.Context) error {
		got, err := machineDeploymentTemplate(ctx, ns, md)
		if err != nil {
			return err
		}
		if got != kmtA.GetName() {
			return fmt.Errorf("it points at %q", got)
		}
		return nil
	})
	open := cp.WaitCondition(t, reconcileTimeout, harness.NodePool, ns, xr.GetName(), "WorkerImageReady", "True")
	cp.WaitEvent(t, reconcileTimeout, open, "Normal", "held change is composed now")

	// A change to a golden that is still importing is held back, and the
	// existing template and MachineDeployment are left exactly as they are.
	cp.MustApply(t, catalogXR("e2e-gating", sidA+" "+talosVersion, sidB+" "+talosVersion))
	cp.WaitExists(t, reconcileTimeout, harness.DataVolume, goldenNamespace, goldenB)
	waitDataVolumePhase(t, goldenNamespace, goldenB, phaseImportInProgress)
	kmtA = cp.MustGet(t, harness.KubevirtMachineTemplate, ns, kmtA.GetName())
	mdBefore := cp.MustGet(t, harness.MachineDeployment, ns, md)
	cp.MustApply(t, poolXR(ns, cluster, sidA, fmt.Sprintf("{builtin: {schematicID: %s}}", sidB)))
	cp.WaitCondition(t, reconcileTimeout, harness.NodePool, ns, xr.GetName(), "WorkerImageReady", "False", goldenB, "still importing")
	cp.Consistently(t, 2*functionTTL, "the existing template "+kmtA.GetName()+" and MachineDeployment "+md+" are untouched while gated", allOf(unchanged(kmtA), unchanged(mdBefore)))

	completeGolden(t, goldenB)
	cp.Eventually(t, oneGatedReconcile+importTimeout, "the pool to roll onto golden "+goldenB, func(ctx context.Context) error {
		got, err := machineDeploymentTemplate(ctx, ns, md)
		if err != nil {
			return err
		}
		if got == kmtA.GetName() || got == "" {
			return fmt.Errorf("MachineDeployment still points at %q", got)
		}
		kmt, err := cp.Existing(ctx, harness.KubevirtMachineTemplate, ns, got)
		if err != nil {
			return err
		}
		if d := diskSourceOf(kmt); d.CloneFrom != goldenNamespace+"/"+goldenB {
			return fmt.Errorf("template %s clones %q", got, d.CloneFrom)
		}
		return nil
	})
}

// Scenario 4: switching an existing pool from HTTP import to the builtin
// golden rolls it onto a clone template, and the old template survives as
// long as a MachineSet still references it. Cluster API is real: its
// MachineDeployment controller makes the MachineSets and rolls, and its
// MachineSet controller deletes the old Machine.
func TestHTTPPoolSwitchesToBuiltinKeepingTheOldTemplateWhileReferenced(t *testing.T) {
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	const ns, cluster = "e2e-switch", "c4"
	inNamespace(t, ns)
	sid := schematicID("switch")
	golden := goldenName(sid)
	readyGolden(t, "e2e-switch", sid)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cp.CreateCluster(ctx, ns, cluster); err != nil {
		t.Fatal(err)
	}
	deleteOnCleanup(t, harness.MustObject(fmt.Sprintf("apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata:\n  name: %s\n  namespace: %s\n", cluster, ns)))

	xr := poolXR(ns, cluster, sid, "{factory: {}}")
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	httpKMT := poolTemplate(t, reconcileTimeout, ns, xr.GetName())
	if d := diskSourceOf(httpKMT); d.HTTP != "https://factory.talos.dev/image/"+sid+"/"+talosVersion+"/openstack-amd64.raw.xz" || d.CloneFrom != "" {
		t.Fatalf("HTTP pool's template %s: system disk %+v, want an HTTP import of the factory image", httpKMT.GetName(), d)
	}
	md := cluster + "-" + poolName

	// Cluster API rolls the pool out on the HTTP template: a MachineSet on
	// it and a Machine, whose worker disk imports (CDI's importer runs
	// until told otherwise, so the Machine is not ready).
	cp.Eventually(t, capiTimeout, "Cluster API to create a MachineSet and a Machine of "+md+" on "+httpKMT.GetName(), func(ctx context.Context) error {
		s, err := readDeployment(ctx, ns, md)
		if err != nil {
			return err
		}
		if len(s.Sets) != 1 || s.Sets[firstKey(s.Sets)] != httpKMT.GetName() || len(s.Machines) != 1 {
			return fmt.Errorf("%s", s)
		}
		return nil
	})

	// Switch to the golden.
	cp.MustApply(t, poolXR(ns, cluster, sid, "{builtin: {}}"))
	var cloneKMT string
	cp.Eventually(t, reconcileTimeout, "MachineDeployment "+md+" to roll onto a clone template", func(ctx context.Context) error {
		got, err := machineDeploymentTemplate(ctx, ns, md)
		if err != nil {
			return err
		}
		if got == httpKMT.GetName() || got == "" {
			return fmt.Errorf("it points at %q", got)
		}
		cloneKMT = got
		return nil
	})
	kmt := cp.MustGet(t, harness.KubevirtMachineTemplate, ns, cloneKMT)
	if d := diskSourceOf(kmt); d.CloneFrom != goldenNamespace+"/"+golden {
		t.Errorf("template %s after the switch: system disk %+v, want a clone of %s/%s", cloneKMT, d, goldenNamespace, golden)
	}

	// Cluster API finishes the roll: the new MachineSet's Machine is ready
	// on a disk CDI cloned (the infrastructure stand-in reports it ready
	// only then), the old MachineSet is scaled down and deleted, and the
	// function keeps the HTTP template until then and retires it after.
	//
	// (The fake CDI once failed the golden here, to show that a pool that
	// has cloned is not blocked by its golden's later fate. CDI never moves
	// a Succeeded DataVolume back: its phases only follow the importer
	// pod, import-controller.go updateStatusPhase, so that state does not
	// exist.)
	waitRolledOff(t, ns, md, httpKMT.GetName(), cloneKMT, 1)
	cp.MustGet(t, harness.KubevirtMachineTemplate, ns, cloneKMT)
	cp.WaitCondition(t, reconcileTimeout, harness.NodePool, ns, xr.GetName(), "WorkerImageReady", "True")
	nothingRefusedIn(t, ns)
}

// Scenario 5: removing a catalog entry whose golden a pool pins keeps the
// golden (reported as retiring); once the pool moves to another golden, the
// old one is deleted.
func TestCatalogKeepsPinnedGoldenUntilThePoolMovesAway(t *testing.T) {
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	const ns, cluster = "e2e-retention", "c5"
	const catalog = "e2e-retention"
	inNamespace(t, ns)
	sidOld, sidNew := schematicID("retention-old"), schematicID("retention-new")
	goldenOld := goldenName(sidOld)
	readyGolden(t, catalog, sidOld, sidNew)

	xr := poolXR(ns, cluster, sidOld, "{builtin: {}}")
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	kmtOld := poolTemplate(t, reconcileTimeout, ns, xr.GetName())
	// The template's Usages protect the golden as well as the retention.
	waitGoldenPinned(t, xr, kmtOld, goldenOld)

	// The entry goes; the pool still pins its golden.
	cp.MustApply(t, catalogXR(catalog, sidNew+" "+talosVersion))
	// The catalog reads no pool's template: the golden is kept because it
	// is in use (Crossplane's usage controller labels it for the
	// template's Usage), and the message says how to list the Usages.
	retiring := cp.WaitCondition(t, reconcileTimeout, harness.WorkerImageCatalog, "", catalog, "GoldenImagesRetiring", "True", goldenOld, "in use", "kubectl get usages.protection.crossplane.io")
	cp.WaitEvent(t, reconcileTimeout, retiring, "Normal", goldenOld, "left the catalog and is kept")
	cp.Consistently(t, 2*functionTTL, "golden "+goldenOld+" is kept while "+kmtOld.GetName()+" pins it", func(ctx context.Context) error {
		dv, err := cp.Get(ctx, harness.DataVolume, goldenNamespace, goldenOld)
		if err != nil {
			return err
		}
		if dv == nil || dv.GetDeletionTimestamp() != nil {
			return fmt.Errorf("the golden is gone or being deleted")
		}
		return nil
	})

	// The pool moves to the new golden; its old template goes, and with it
	// the template's Usages (a composed Usage being deleted waits until its
	// `by` template is gone, re-checking every 30 s: Crossplane's
	// internal/controller/protection/usage/reconciler.go). The catalog then
	// retires the old golden: its delete either comes after the Usages, or is
	// refused while they remain and replayed by them (replayDeletion), or
	// repeated by the catalog's next run; either way the golden goes within
	// the Usage's wait plus a reconcile, so gcTimeout.
	cp.MustApply(t, poolXR(ns, cluster, sidNew, "{builtin: {}}"))
	cp.WaitGone(t, reconcileTimeout, harness.KubevirtMachineTemplate, ns, kmtOld.GetName())
	for _, u := range usageNames(kmtOld.GetName()) {
		cp.WaitGone(t, gcTimeout, harness.Usage, ns, u)
	}
	cp.WaitGone(t, gcTimeout, harness.DataVolume, goldenNamespace, goldenOld)
	done := cp.WaitCondition(t, reconcileTimeout, harness.WorkerImageCatalog, "", catalog, "GoldenImagesRetiring", "False")
	cp.WaitEvent(t, reconcileTimeout, done, "Normal", goldenOld, "deleted")
	cp.MustGet(t, harness.DataVolume, goldenNamespace, goldenName(sidNew))
}
