package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// These scenarios look at what CDI itself does with what the function
// composes: every phase, condition and PVC annotation they assert is
// cdi-controller's or cdi-apiserver's; the stand-ins only provision
// volumes and end pods (harness/standins.go).

// A golden import that CDI completes: the catalog's DataVolume gets its
// PVC from CDI, bound to a volume of the suite's CSI driver; CDI runs an
// importer pod; once the pod ends as cdi-importer ends on success, CDI
// marks the DataVolume Succeeded and Ready, and the catalog reports it.
func TestCDIImportsAGolden(t *testing.T) {
	requireMode(t, "Catalog")
	const catalog = "e2e-cdi-import"
	sid := schematicID("cdi-import")
	golden := goldenName(sid)
	xr := catalogXR(catalog, sid+" "+talosVersion)
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)

	cp.WaitExists(t, reconcileTimeout, harness.DataVolume, goldenNamespace, golden)
	waitDataVolumePhase(t, goldenNamespace, golden, phaseImportInProgress)
	pvc := cp.MustGet(t, harness.PVC, goldenNamespace, golden)
	if ref := metav1.GetControllerOf(pvc); ref == nil || ref.Kind != "DataVolume" || ref.Name != golden {
		t.Errorf("PVC %s/%s is controlled by %v, want DataVolume %s", goldenNamespace, golden, ref, golden)
	}
	var importer string
	cp.Eventually(t, importTimeout, "CDI's importer pod for golden "+golden+" to run", func(ctx context.Context) error {
		pods, err := cp.List(ctx, harness.PodKind, goldenNamespace, "cdi.kubevirt.io=importer")
		if err != nil {
			return err
		}
		var seen []string
		for _, p := range pods {
			phase, _, _ := unstructured.NestedString(p.Object, "status", "phase")
			seen = append(seen, p.GetName()+"="+phase)
			if phase == "Running" && strings.Contains(p.GetName(), string(pvc.GetUID())) {
				importer = p.GetName()
				return nil
			}
		}
		return fmt.Errorf("importer pods in %s: %v (PVC uid %s)", goldenNamespace, seen, pvc.GetUID())
	})
	t.Logf("CDI runs importer pod %s for PVC %s (uid %s)", importer, golden, pvc.GetUID())

	completeGolden(t, golden)
	dv := waitDataVolumePhase(t, goldenNamespace, golden, phaseSucceeded)
	if c := harness.Condition(dv, "Ready"); c == nil || c["status"] != "True" {
		t.Errorf("DataVolume %s Succeeded but Ready is %v", golden, c)
	}
	// CDI's populator imports into a prime PVC and then hands its volume to
	// the golden's PVC by rewriting the PV's claimRef; kube-controller-
	// manager's PV binder binds the PVC on its next sync, which can land
	// just after CDI marks the DataVolume Succeeded.
	var vol string
	cp.Eventually(t, reconcileTimeout, "golden PVC "+goldenNamespace+"/"+golden+" to be Bound to the imported volume", func(ctx context.Context) error {
		got, err := cp.Existing(ctx, harness.PVC, goldenNamespace, golden)
		if err != nil {
			return err
		}
		pvc = got
		vol, _, _ = unstructured.NestedString(pvc.Object, "spec", "volumeName")
		phase, _, _ := unstructured.NestedString(pvc.Object, "status", "phase")
		if phase != "Bound" || vol == "" {
			return fmt.Errorf("golden PVC is %q on volume %q, want Bound", phase, vol)
		}
		return nil
	})
	pv := cp.MustGet(t, harness.PV, "", vol)
	if d, _, _ := unstructured.NestedString(pv.Object, "spec", "csi", "driver"); d != harness.CSIDriverName {
		t.Errorf("PV %s of the golden has CSI driver %q, want %q", vol, d, harness.CSIDriverName)
	}
	t.Logf("golden %s: PVC on PV %s, annotations %v", golden, vol, pvc.GetAnnotations())
	waitGoldenReported(t, catalog, golden, phaseSucceeded, "")
	cp.WaitCondition(t, reconcileTimeout, harness.WorkerImageCatalog, "", catalog, "GoldenImagesReady", "True")
}

// A worker disk cloned from the golden on the default class (CSI driver
// with a CSIDriver object, csi-clone StorageProfile, volume expansion
// allowed): CDI's clone planner chooses csi-clone with no fallback, the
// clone completes (a CSI clone of the golden's PVC in the golden
// namespace, rebound to the worker's PVC and grown to its size), and the
// pool reports CloneHealthy=True. The disk is the chain's: the pool's
// Cluster runs on the real Cluster API, which makes the MachineSet and
// the Machine from the pool's MachineDeployment, and the provider chain
// makes the Machine's disk from the template (scenario_capi_test.go).
func TestCDIClonesAWorkerDiskByCSIClone(t *testing.T) {
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	const ns, cluster, catalog = "e2e-cdi-csi-clone", "c13", "e2e-cdi-csi-clone"
	inNamespace(t, ns)
	capiCluster(t, ns, cluster)
	sid := schematicID("cdi-csi-clone")
	readyGolden(t, catalog, sid)
	xr, kmt := builtinPool(t, ns, cluster, sid)
	md := cluster + "-" + poolName

	disk := waitWorkerDisks(t, ns, md, kmt, 1)[0]
	pvc := waitClonePlanned(t, ns, disk)
	if got := pvc.GetAnnotations()[annCloneType]; got != "csi-clone" {
		t.Errorf("CDI planned worker disk %s/%s as %q, want csi-clone; PVC annotations %v", ns, disk, got, pvc.GetAnnotations())
	}
	if got, ok := pvc.GetAnnotations()[annCloneFallbackReason]; ok {
		t.Errorf("CDI fell back for worker disk %s/%s: %s=%q", ns, disk, annCloneFallbackReason, got)
	}
	waitDataVolumePhase(t, ns, disk, phaseSucceeded)
	dv, pvc := waitCloneSettled(t, ns, disk)
	// The node pool reads clone health off the DataVolumes alone (issue 14):
	// CDI's clone controller copies the claim's cloneType onto the
	// DataVolume (pvc-clone-controller.go).
	if got, want := dv.GetAnnotations()[annCloneType], pvc.GetAnnotations()[annCloneType]; got != want {
		t.Errorf("worker DataVolume %s/%s carries %s=%q, its PVC %q: clone health reads the DataVolume's", ns, disk, annCloneType, got, want)
	}
	recordOrCompareCDIShape(t, "worker-datavolume.json", dv)
	recordOrCompareCDIShape(t, "worker-pvc.json", pvc)
	req, _, _ := unstructured.NestedString(pvc.Object, "spec", "resources", "requests", "storage")
	capacity, _, _ := unstructured.NestedString(pvc.Object, "status", "capacity", "storage")
	t.Logf("worker disk %s/%s cloned by CDI: request %s, capacity %s, annotations %s=%q", ns, disk, req, capacity, annCloneType, pvc.GetAnnotations()[annCloneType])
	got := cp.WaitCondition(t, reconcileTimeout, harness.NodePool, ns, xr.GetName(), "CloneHealthy", "True")
	if c := harness.Condition(got, "CloneHealthy"); c["reason"] != "NoCloneProblems" {
		t.Errorf("CloneHealthy reason %v, want NoCloneProblems", c["reason"])
	}
	nothingRefusedIn(t, ns)
}

// crossNamespaceFinalizer is the finalizer CDI puts on a DataVolume that
// clones from another namespace by its populator and removes once the clone
// Succeeded and its VolumeCloneSource is cleaned up (pkg/controller/
// datavolume/clone-controller-base.go, pvc-clone-controller.go, v1.65.0).
const crossNamespaceFinalizer = "cdi.kubevirt.io/dataVolumeFinalizer"

// waitCloneSettled waits until CDI is done with the cloned DataVolume
// ns/name, and returns it and its PVC as CDI leaves them. CDI writes the
// phase Succeeded before it has tidied up after the clone: the reconciles
// that follow remove its cross-namespace finalizer and set the Bound
// condition from the rebound claim, which was Pending a moment earlier.
func waitCloneSettled(t *testing.T, ns, name string) (dv, pvc *unstructured.Unstructured) {
	t.Helper()
	cp.Eventually(t, importTimeout, fmt.Sprintf("CDI to finish with cloned DataVolume %s/%s (Succeeded, Bound, its finalizer gone, the PVC Bound)", ns, name), func(ctx context.Context) error {
		d, err := cp.Existing(ctx, harness.DataVolume, ns, name)
		if err != nil {
			return err
		}
		p, err := cp.Existing(ctx, harness.PVC, ns, name)
		if err != nil {
			return err
		}
		phase, _, _ := unstructured.NestedString(d.Object, "status", "phase")
		pvcPhase, _, _ := unstructured.NestedString(p.Object, "status", "phase")
		if phase != phaseSucceeded || harness.ConditionStatus(d, "Bound") != "True" || harness.ConditionStatus(d, "Ready") != "True" ||
			slices.Contains(d.GetFinalizers(), crossNamespaceFinalizer) || pvcPhase != "Bound" {
			return fmt.Errorf("DataVolume phase %q, finalizers %v, conditions %s; PVC %q", phase, d.GetFinalizers(), harness.ConditionsString(d), pvcPhase)
		}
		dv, pvc = d, p
		return nil
	})
	return dv, pvc
}

// A worker disk whose clone source does not exist: CDI leaves the phase
// alone and sets reason CloneWithoutSource on the DataVolume's Bound and
// Ready conditions (pkg/controller/datavolume/pvc-clone-controller.go
// validateCloneAndSourcePVC), and that reason surfaces in the pool's
// CloneHealthy condition, naming the disk.
//
// The disk is the chain's, in a state a platform reaches. While a pool's
// Usages protect its golden, every deletion of the golden is refused, so
// the source can only go where the pool composes none: on a platform whose
// Crossplane runs without Usages, where the Input says usages.enabled:
// false (input/v1beta1 UsageOptions). There the goldens are kept by the
// catalog's retention alone, and deleting the catalog deletes them. A
// worker Cluster API makes after that still gets its disk: KubeVirt's VM
// controller creates a dataVolumeTemplate's DataVolume whose source PVC is
// missing (it records SourcePVCNotAvailabe and goes on) as long as the VM's
// service account may clone it (pkg/virt-controller/watch/vm/vm.go
// handleCloneDataVolume, authorizeDataVolume, v1.7.0), which takes clone
// RBAC that outlives the catalog: the platform's own. So: the pool runs on
// a copy of the shipped Composition with usages disabled, and the platform
// grants the namespace's service account the clone itself; the pool's
// first worker clones the golden; the catalog is deleted, and the golden
// with it; the pool scales to two, and the second Machine's disk, made by
// the chain, waits for a source that is gone.
func TestCloneWithoutSourceSurfacesInCloneHealthy(t *testing.T) {
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	const ns, cluster, catalog = "e2e-cdi-no-source", "c14", "e2e-cdi-no-source"
	const serviceAccount = "default"
	inNamespace(t, ns)
	capiCluster(t, ns, cluster)
	sid := schematicID("cdi-no-source")
	golden := goldenName(sid)
	readyGolden(t, catalog, sid)
	platformCloneGrant(t, ns, serviceAccount, golden)

	comp := compositionWithoutUsages(t)
	pool := func(replicas int64) *unstructured.Unstructured {
		xr := poolXR(ns, cluster, sid, "{builtin: {}}")
		_ = unstructured.SetNestedField(xr.Object, replicas, "spec", "replicas")
		_ = unstructured.SetNestedField(xr.Object, comp, "spec", "crossplane", "compositionRef", "name")
		return xr
	}
	xr := pool(1)
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	kmt := poolTemplate(t, reconcileTimeout, ns, xr.GetName())
	if d := diskSourceOf(kmt); d.CloneFrom != goldenNamespace+"/"+golden {
		t.Fatalf("KubevirtMachineTemplate %s/%s: system disk %+v, want a clone of %s/%s", ns, kmt.GetName(), d, goldenNamespace, golden)
	}
	md := cluster + "-" + poolName

	// The first worker clones the golden: the pool has a finished clone,
	// so the golden's fate no longer holds it (internal/nodepool/gate.go).
	first := waitWorkerDisks(t, ns, md, kmt, 1)[0]
	waitDataVolumePhase(t, ns, first, phaseSucceeded)
	cp.WaitCondition(t, reconcileTimeout, harness.NodePool, ns, xr.GetName(), "CloneHealthy", "True")
	// Nothing protects the golden: the pool composed no Usage (and so no
	// deletion guard either), and the golden is not in use.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if us, err := cp.List(ctx, harness.Usage, ns, harness.CompositeLabel+"="+xr.GetName()); err != nil || len(us) > 0 {
		t.Fatalf("pool %s/%s on Composition %s composed Usages %v (%v); the scenario needs a pool without them", ns, xr.GetName(), comp, len(us), err)
	}
	if l := cp.MustGet(t, harness.DataVolume, goldenNamespace, golden).GetLabels(); l[harness.InUseLabel] != "" {
		t.Fatalf("golden %s is labelled %s=%s with no Usage of the pool", golden, harness.InUseLabel, l[harness.InUseLabel])
	}

	// The catalog goes, and the garbage collector takes its golden and
	// the golden's PVC, the clone source, with it; then the catalog's clone
	// RBAC, whose Usages end with the golden. The platform's grant stays:
	// the service account may clone the golden, asked as KubeVirt asks.
	cp.MustDelete(t, harness.WorkerImageCatalog, "", catalog)
	cp.WaitGone(t, gcTimeout, harness.DataVolume, goldenNamespace, golden)
	cp.WaitGone(t, gcTimeout, harness.PVC, goldenNamespace, golden)
	for _, k := range cloneRBAC {
		cp.WaitGone(t, gcTimeout, k.gvk, k.ns, "workerimage-clone-"+catalog)
	}
	cp.Eventually(t, reconcileTimeout, fmt.Sprintf("service account %s/%s to be allowed to clone %s/%s by the platform's grant", ns, serviceAccount, goldenNamespace, golden), func(ctx context.Context) error {
		return mayClone(ctx, ns, serviceAccount, golden)
	})

	// A second worker: Cluster API makes its Machine from the same
	// template, and the chain its disk, a clone of the golden that is gone.
	cp.MustApply(t, pool(2))
	var disk string
	for _, n := range waitWorkerDisks(t, ns, md, kmt, 2) {
		if n != first {
			disk = n
		}
	}
	var reason, phase string
	cp.Eventually(t, importTimeout, fmt.Sprintf("CDI to report worker disk %s/%s waiting for its source", ns, disk), func(ctx context.Context) error {
		dv, err := cp.Existing(ctx, harness.DataVolume, ns, disk)
		if err != nil {
			return err
		}
		c := harness.Condition(dv, "Bound")
		if c == nil || c["reason"] != "CloneWithoutSource" {
			return fmt.Errorf("conditions %s", harness.ConditionsString(dv))
		}
		reason, _ = c["message"].(string)
		phase, _, _ = unstructured.NestedString(dv.Object, "status", "phase")
		return nil
	})
	t.Logf("CDI on worker disk %s/%s: CloneWithoutSource %q, phase %q", ns, disk, reason, phase)
	got := cp.WaitCondition(t, reconcileTimeout, harness.NodePool, ns, xr.GetName(), "CloneHealthy", "False", disk, "CloneWithoutSource")
	if c := harness.Condition(got, "CloneHealthy"); c["reason"] != "CloneWithoutSource" {
		t.Errorf("CloneHealthy reason %v, want CloneWithoutSource", c["reason"])
	}
	nothingRefusedIn(t, ns)
}

// compositionWithoutUsages applies, for the test, a copy of the shipped
// XNodePool Composition whose Input sets usages.enabled: false, as a
// platform whose Crossplane runs without Usages configures it, and returns
// its name. The XRD's defaultCompositionRef keeps every other pool on the
// shipped one; a pool opts in by spec.crossplane.compositionRef. Such a
// pool composes no Usage, so it cannot ask the suite's catalog (Usages on)
// for its clone grant (docs/platform.md: both Compositions must agree on
// usages.enabled); its tests grant the clone as a platform does
// (platformCloneGrant), so it does not wait for the grant either.
func compositionWithoutUsages(t *testing.T) string {
	t.Helper()
	return compositionWith(t, harness.NodePool, "e2e-xnodepools-without-usages", func(input map[string]any) error {
		if err := unstructured.SetNestedField(input, false, "cloneRBAC", "waitForGrant"); err != nil {
			return err
		}
		return unstructured.SetNestedField(input, false, "usages", "enabled")
	})
}

// compositionWith applies, for the test, a copy of the shipped Composition
// of the composite gvk named name, its function's Input edited by edit, and
// returns its name; a composite opts in by spec.crossplane.compositionRef.
// The group matters: the smoke fixture has a kind of the same name.
func compositionWith(t *testing.T, gvk schema.GroupVersionKind, name string, edit func(input map[string]any) error) string {
	t.Helper()
	var shipped *unstructured.Unstructured
	for _, o := range platform.Objects {
		if o.GroupVersionKind().GroupKind() == harness.Composition.GroupKind() {
			k, _, _ := unstructured.NestedString(o.Object, "spec", "compositeTypeRef", "kind")
			av, _, _ := unstructured.NestedString(o.Object, "spec", "compositeTypeRef", "apiVersion")
			if k == gvk.Kind && av == gvk.GroupVersion().String() {
				shipped = o
			}
		}
	}
	if shipped == nil {
		t.Fatalf("no Composition for %s among the platform's objects (%s)", gvk, platform.Source)
	}
	comp := shipped.DeepCopy()
	comp.SetName(name)
	steps, _, _ := unstructured.NestedSlice(comp.Object, "spec", "pipeline")
	if len(steps) != 1 {
		t.Fatalf("Composition %s has %d pipeline steps; the scenario edits the function's one", shipped.GetName(), len(steps))
	}
	step := steps[0].(map[string]any)
	input, _, _ := unstructured.NestedMap(step, "input")
	if err := edit(input); err != nil {
		t.Fatal(err)
	}
	step["input"] = input
	if err := unstructured.SetNestedSlice(comp.Object, steps, "spec", "pipeline"); err != nil {
		t.Fatal(err)
	}
	cp.MustApply(t, comp)
	deleteOnCleanup(t, comp)
	return comp.GetName()
}

// platformCloneGrant grants service account sa of ns the clone of golden
// as a platform that manages clone RBAC itself does: a ClusterRole with
// create on cdi.kubevirt.io datavolumes/source for the golden and a
// RoleBinding of it in the golden namespace, neither the catalog's.
func platformCloneGrant(t *testing.T, ns, sa, golden string) {
	t.Helper()
	name := "e2e-platform-clone-" + ns
	role := harness.MustObject(fmt.Sprintf(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: %s
rules:
- apiGroups: [cdi.kubevirt.io]
  resources: [datavolumes/source]
  resourceNames: [%s]
  verbs: [create]
`, name, golden))
	binding := harness.MustObject(fmt.Sprintf(`
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: %[1]s
  namespace: %[2]s
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: %[1]s
subjects:
- kind: ServiceAccount
  name: %[3]s
  namespace: %[4]s
`, name, goldenNamespace, sa, ns))
	cp.MustApply(t, role, binding)
	deleteOnCleanup(t, binding)
	deleteOnCleanup(t, role)
}

// CDI's DataVolume mutating webhook authorizes a clone by asking whether
// the requesting user may create datavolumes/source in the source
// namespace (API authorize_utils.go, a SubjectAccessReview). The catalog's
// RoleBinding is what grants that to a namespace's default service account
// (the identity a VM's dataVolumeTemplates clone as, KubeVirt
// pkg/virt-controller/watch/vm/vm.go): before the namespace's first pool
// the webhook refuses the service account's clone of the golden, naming
// it; once the catalog has bound the namespace, the same request is
// admitted.
func TestCDIWebhookRefusesAnUnauthorizedClone(t *testing.T) {
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	const ns, cluster, catalog = "e2e-cdi-unauthorized", "c15", "e2e-cdi-unauthorized"
	const serviceAccount = "default"
	inNamespace(t, ns)
	sid := schematicID("cdi-unauthorized")
	golden := goldenName(sid)
	readyGolden(t, catalog, sid)

	// The service account may create DataVolumes in its own namespace, as
	// a tenant may: so what refuses the clone is CDI, not RBAC on the
	// DataVolume itself.
	cp.MustApply(t, harness.MustObject(fmt.Sprintf(`
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: e2e-create-datavolumes
  namespace: %[1]s
rules:
- apiGroups: [cdi.kubevirt.io]
  resources: [datavolumes]
  verbs: [create, get]
`, ns)), harness.MustObject(fmt.Sprintf(`
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: e2e-create-datavolumes
  namespace: %[1]s
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: e2e-create-datavolumes
subjects:
- kind: ServiceAccount
  name: %[2]s
  namespace: %[1]s
`, ns, serviceAccount)))

	user := "system:serviceaccount:" + ns + ":" + serviceAccount
	impersonated := rest.CopyConfig(cp.Config)
	impersonated.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
	dc, err := dynamic.NewForConfig(impersonated)
	if err != nil {
		t.Fatal(err)
	}
	ri := dc.Resource(harness.DataVolume.GroupVersion().WithResource("datavolumes")).Namespace(ns)
	clone := harness.MustObject(fmt.Sprintf(`
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: tenant-clone
  namespace: %s
spec:
  source:
    pvc:
      namespace: %s
      name: %s
  storage:
    resources:
      requests:
        storage: 20Gi
`, ns, goldenNamespace, golden))
	// A dry run goes through admission, webhooks included (CDI's declare
	// sideEffects None), and creates nothing.
	create := func(ctx context.Context) error {
		_, err := ri.Create(ctx, clone, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}

	// The kube-apiserver's RBAC authorizer reads Roles and RoleBindings
	// through informers, so the grant just applied takes a moment to
	// authorize the create itself; until then the refusal is RBAC's, not
	// CDI's, and the create is tried again.
	cp.Eventually(t, reconcileTimeout, user+" to be allowed to create DataVolumes in "+ns+" by its Role", func(ctx context.Context) error {
		err = create(ctx)
		if err != nil && strings.Contains(err.Error(), `cannot create resource "datavolumes"`) {
			return err
		}
		return nil
	})
	want := fmt.Sprintf("User %s has insufficient permissions in clone source namespace %s", user, goldenNamespace)
	if err == nil || !strings.Contains(err.Error(), `admission webhook "datavolume-mutate.cdi.kubevirt.io" denied the request`) || !strings.Contains(err.Error(), want) {
		t.Fatalf("%s creating a clone of %s/%s before the catalog binds %s: got %v, want CDI's datavolume-mutate webhook refusing it with %q", user, goldenNamespace, golden, ns, err, want)
	}
	t.Logf("before the grant: %v", err)

	// The namespace's first pool makes the catalog bind its service
	// account; then CDI admits the same clone.
	builtinPool(t, ns, cluster, sid)
	rbName := "workerimage-clone-" + catalog
	cp.Eventually(t, reconcileTimeout+inProgressTTL, fmt.Sprintf("RoleBinding %s/%s to bind %s/%s", goldenNamespace, rbName, ns, serviceAccount), func(ctx context.Context) error {
		rb, err := cp.Existing(ctx, harness.RoleBinding, goldenNamespace, rbName)
		if err != nil {
			return err
		}
		if !bindsServiceAccount(rb, ns, serviceAccount) {
			return fmt.Errorf("subjects %v", rb.Object["subjects"])
		}
		return nil
	})
	cp.Eventually(t, 30*time.Second, "CDI's webhook to admit "+user+"'s clone of the golden once the catalog binds "+ns, create)
	t.Logf("after the grant: CDI admits %s's clone of %s/%s", user, goldenNamespace, golden)
}
