package e2e

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// goldenSource is what the suite checks of a golden DataVolume's spec.
type goldenSource struct {
	URL         string
	ContentType string
	Storage     string
}

func goldenSourceOf(dv *unstructured.Unstructured) goldenSource {
	url, _, _ := unstructured.NestedString(dv.Object, "spec", "source", "http", "url")
	ct, _, _ := unstructured.NestedString(dv.Object, "spec", "contentType")
	st, _, _ := unstructured.NestedString(dv.Object, "spec", "storage", "resources", "requests", "storage")
	return goldenSource{URL: url, ContentType: ct, Storage: st}
}

// Scenario 1: the catalog composes one golden DataVolume per entry and the
// clone RBAC, and its status follows the goldens' phases as CDI moves them.
func TestCatalogComposesGoldensAndReportsPhases(t *testing.T) {
	requireMode(t, "Catalog")
	const name = "e2e-catalog"
	sidA, sidB := schematicID("catalog-a"), schematicID("catalog-b")
	goldenA, goldenB := goldenName(sidA), goldenName(sidB)

	xr := catalogXR(name, sidA+" "+talosVersion, sidB+" "+talosVersion+" 8Gi")
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)

	dvA := cp.WaitExists(t, reconcileTimeout, harness.DataVolume, goldenNamespace, goldenA)
	dvB := cp.WaitExists(t, reconcileTimeout, harness.DataVolume, goldenNamespace, goldenB)
	for _, c := range []struct {
		dv   *unstructured.Unstructured
		want goldenSource
	}{
		{dvA, goldenSource{URL: "https://factory.talos.dev/image/" + sidA + "/" + talosVersion + "/openstack-amd64.raw.xz", ContentType: "kubevirt", Storage: "6Gi"}},
		{dvB, goldenSource{URL: "https://factory.talos.dev/image/" + sidB + "/" + talosVersion + "/openstack-amd64.raw.xz", ContentType: "kubevirt", Storage: "8Gi"}},
	} {
		if diff := cmp.Diff(c.want, goldenSourceOf(c.dv)); diff != "" {
			t.Errorf("golden DataVolume %s: the catalog entry's source, type and size\n-want, +got:\n%s", c.dv.GetName(), diff)
		}
	}

	// Clone RBAC: tenant VMs may create datavolumes/source in the golden
	// namespace.
	role := cp.WaitExists(t, reconcileTimeout, harness.ClusterRole, "", "workerimage-clone-"+name)
	if !grants(role, "cdi.kubevirt.io", "datavolumes/source", "create") {
		t.Errorf("ClusterRole %s does not grant create on cdi.kubevirt.io datavolumes/source: %v", role.GetName(), role.Object["rules"])
	}
	rb := cp.WaitExists(t, reconcileTimeout, harness.RoleBinding, goldenNamespace, "workerimage-clone-"+name)
	if ref, _, _ := unstructured.NestedString(rb.Object, "roleRef", "name"); ref != role.GetName() {
		t.Errorf("RoleBinding %s/%s binds %q, want the clone ClusterRole %q", goldenNamespace, rb.GetName(), ref, role.GetName())
	}

	// CDI imports both: its importer pods run (the kubelet stand-in holds
	// them Running) and CDI reports ImportInProgress, which the catalog
	// reports. (CDI reads progress from the importer's metrics endpoint,
	// pkg/controller/datavolume/controller-base.go updateProgressUsingPod,
	// which no stand-in serves, so CDI's progress stays "N/A".)
	waitDataVolumePhase(t, goldenNamespace, goldenA, phaseImportInProgress)
	waitGoldenReported(t, name, goldenA, phaseImportInProgress, "")
	cp.WaitCondition(t, reconcileTimeout, harness.WorkerImageCatalog, "", name, "GoldenImagesReady", "False", goldenA)

	// A succeeds, B fails: both are reported, each transition once as an
	// event, and the catalog is not ready while B is Failed. CDI sets
	// Failed for an import only on the importer's checksum mismatch
	// (pkg/controller/import-controller.go updatePvcFromPod); other errors
	// restart the importer forever.
	completeGolden(t, goldenA)
	waitDataVolumePhase(t, goldenNamespace, goldenA, phaseSucceeded)
	waitGoldenReported(t, name, goldenA, phaseSucceeded, "100.0%")
	waitDataVolumePhase(t, goldenNamespace, goldenB, phaseImportInProgress)
	waitGoldenReported(t, name, goldenB, phaseImportInProgress, "")
	endImport(t, goldenNamespace, goldenB, harness.ImporterChecksumMismatch)
	failedB := waitDataVolumePhase(t, goldenNamespace, goldenB, phaseFailed)
	waitGoldenReported(t, name, goldenB, phaseFailed, "")
	got := cp.WaitCondition(t, reconcileTimeout, harness.WorkerImageCatalog, "", name, "GoldenImagesReady", "False", goldenB, "failed to import")
	cp.WaitEvent(t, reconcileTimeout, got, "Normal", goldenA, "is Succeeded")
	cp.WaitEvent(t, reconcileTimeout, got, "Warning", goldenB, "failed to import")

	// B re-imported: a failed import is final in CDI, so the operator
	// deletes the DataVolume; the catalog composes it again and CDI imports
	// it anew. All Succeeded.
	cp.MustDelete(t, harness.DataVolume, goldenNamespace, goldenB)
	cp.Eventually(t, gcTimeout, "the catalog to compose golden "+goldenB+" again", func(ctx context.Context) error {
		dv, err := cp.Existing(ctx, harness.DataVolume, goldenNamespace, goldenB)
		if err != nil {
			return err
		}
		if dv.GetUID() == failedB.GetUID() {
			return fmt.Errorf("still the failed DataVolume (deletionTimestamp %v, finalizers %v)", dv.GetDeletionTimestamp(), dv.GetFinalizers())
		}
		return nil
	})
	completeGolden(t, goldenB)
	waitDataVolumePhase(t, goldenNamespace, goldenB, phaseSucceeded)
	cp.WaitCondition(t, reconcileTimeout, harness.WorkerImageCatalog, "", name, "GoldenImagesReady", "True")
	cp.WaitCondition(t, reconcileTimeout, harness.WorkerImageCatalog, "", name, "Synced", "True")
}

// Scenario 2: a size written on the entry of a golden that exists, other
// than the one it was made with, contradicts it. The golden is left exactly
// as it is, and the catalog names the entry, both sizes and the fix.
func TestCatalogDriftLeavesTheGoldenUntouched(t *testing.T) {
	requireMode(t, "Catalog")
	const name = "e2e-catalog-drift"
	sid := schematicID("catalog-drift")
	golden := goldenName(sid)

	xr := catalogXR(name, sid+" "+talosVersion+" 6Gi")
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	cp.WaitExists(t, reconcileTimeout, harness.DataVolume, goldenNamespace, golden)
	completeGolden(t, golden)
	waitDataVolumePhase(t, goldenNamespace, golden, phaseSucceeded)
	waitGoldenReported(t, name, golden, phaseSucceeded, "")
	before := cp.MustGet(t, harness.DataVolume, goldenNamespace, golden)

	cp.MustApply(t, catalogXR(name, sid+" "+talosVersion+" 8Gi"))
	got := cp.WaitCondition(t, reconcileTimeout, harness.WorkerImageCatalog, "", name, "Synced", "False",
		`images[0].storage is "8Gi"`, golden, "was made with 6Gi", "remove images[0].storage or set it to 6Gi")
	cp.WaitEvent(t, reconcileTimeout, got, "Warning", golden, "was made with 6Gi")

	// The function has now refused the change at least once; the golden
	// must be exactly as it was, and stay so on the following reconciles.
	cp.Consistently(t, 3*functionTTL, fmt.Sprintf("golden DataVolume %s/%s keeps its spec and generation", goldenNamespace, golden), func(ctx context.Context) error {
		now, err := cp.Get(ctx, harness.DataVolume, goldenNamespace, golden)
		if err != nil {
			return err
		}
		if now == nil {
			return fmt.Errorf("it was deleted")
		}
		if diff := cmp.Diff(before.Object["spec"], now.Object["spec"]); diff != "" {
			return fmt.Errorf("its spec changed\n-before, +now:\n%s", diff)
		}
		if before.GetGeneration() != now.GetGeneration() {
			return fmt.Errorf("its generation moved from %d to %d", before.GetGeneration(), now.GetGeneration())
		}
		return nil
	})
	cp.WaitCondition(t, reconcileTimeout, harness.WorkerImageCatalog, "", name, "Synced", "False", "was made with 6Gi")
}

// Scenario 3: day 2 at a real site. The public factory stalls, so the
// operator switches the catalog's default factory to a mirror and raises
// the default size, in the same edit that adds an image. A golden that
// succeeded keeps the source and size it was made with (a DataVolume's spec
// is immutable, and it is re-emitted as it lives); a golden that never
// succeeded and that nothing uses is deleted and imported again from the
// mirror; the new image is imported from the mirror at the new size; the
// catalog stays Synced throughout (no fatal result stops it).
func TestCatalogMirrorSwitchKeepsGoldensAndImportsTheRest(t *testing.T) {
	requireMode(t, "Catalog")
	const name = "e2e-catalog-mirror"
	const mirror = "https://factory.mirror.e2e.internal/talos"
	sidDone, sidStuck, sidNew := schematicID("mirror-done"), schematicID("mirror-stuck"), schematicID("mirror-new")
	done, stuck, added := goldenName(sidDone), goldenName(sidStuck), goldenName(sidNew)
	before, stuckBefore := stalledCatalog(t, name, sidDone, sidStuck)

	// The golden that succeeded is in use: a pool clones it.
	const inUseNS, newNS, cluster = "e2e-mirror-in-use", "e2e-mirror-new-ns", "c-mirror"
	rbName := "workerimage-clone-" + name
	md := cluster + "-" + poolName
	inNamespace(t, inUseNS)
	inUse := poolXR(inUseNS, cluster, sidDone, "{builtin: {}}")
	cp.MustApply(t, inUse)
	deleteOnCleanup(t, inUse)
	cp.WaitExists(t, reconcileTimeout, harness.MachineDeployment, inUseNS, md)

	cp.MustApply(t, factoryCatalog(name, mirror, "10Gi", sidDone, sidStuck, sidNew))

	// The new image, from the mirror at 10Gi.
	dvNew := cp.WaitExists(t, reconcileTimeout, harness.DataVolume, goldenNamespace, added)
	if diff := cmp.Diff(goldenSource{URL: mirror + "/image/" + sidNew + "/" + talosVersion + "/openstack-amd64.raw.xz", ContentType: "kubevirt", Storage: "10Gi"}, goldenSourceOf(dvNew)); diff != "" {
		t.Errorf("golden DataVolume %s: a new golden takes the catalog's new defaults\n-want, +got:\n%s", added, diff)
	}
	// The stalled golden, made again from the mirror: a new object.
	waitGoldenMadeAgain(t, stuckBefore, mirror+"/image/"+sidStuck+"/"+talosVersion+"/openstack-amd64.raw.xz", "10Gi")
	completeGolden(t, stuck)
	completeGolden(t, added)
	waitDataVolumePhase(t, goldenNamespace, stuck, phaseSucceeded)
	waitDataVolumePhase(t, goldenNamespace, added, phaseSucceeded)
	cp.WaitCondition(t, reconcileTimeout, harness.WorkerImageCatalog, "", name, "GoldenImagesReady", "True")
	cp.WaitCondition(t, reconcileTimeout, harness.WorkerImageCatalog, "", name, "Synced", "True")

	// The golden that succeeded was never touched, and the catalog reports
	// it with the source it was made with.
	cp.Consistently(t, 3*functionTTL, fmt.Sprintf("golden DataVolume %s/%s keeps its UID, spec and generation", goldenNamespace, done), func(ctx context.Context) error {
		now, err := cp.Get(ctx, harness.DataVolume, goldenNamespace, done)
		if err != nil {
			return err
		}
		if now == nil || now.GetUID() != before.GetUID() {
			return fmt.Errorf("it was deleted or replaced")
		}
		if diff := cmp.Diff(before.Object["spec"], now.Object["spec"]); diff != "" {
			return fmt.Errorf("its spec changed\n-before, +now:\n%s", diff)
		}
		if before.GetGeneration() != now.GetGeneration() {
			return fmt.Errorf("its generation moved from %d to %d", before.GetGeneration(), now.GetGeneration())
		}
		return nil
	})
	u := cp.MustGet(t, harness.WorkerImageCatalog, "", name)
	if g, _ := goldenStatus(u, done); g["source"] != "https://factory.talos.dev/image/"+sidDone+"/"+talosVersion+"/openstack-amd64.raw.xz" || g["storage"] != "6Gi" {
		t.Errorf("status.goldens[%s] reports %v, want the public factory's source and 6Gi, as it was made", done, g)
	}

	// After the switch, a pool in a namespace no pool used before, on the
	// image added in the same edit: the catalog grants its clone (its
	// RoleBinding binds the namespace's service account) and the pool
	// composes its MachineDeployment. The pool on the golden in use keeps
	// its MachineDeployment.
	inNamespace(t, newNS)
	fresh := poolXR(newNS, cluster, sidNew, "{builtin: {}}")
	cp.MustApply(t, fresh)
	deleteOnCleanup(t, fresh)
	cp.WaitExists(t, reconcileTimeout, harness.MachineDeployment, newNS, md)
	if rb := cp.MustGet(t, harness.RoleBinding, goldenNamespace, rbName); !bindsServiceAccount(rb, newNS, "default") || !bindsServiceAccount(rb, inUseNS, "default") {
		t.Errorf("RoleBinding %s/%s does not bind both pools' service accounts (%s/default, %s/default): %v", goldenNamespace, rbName, newNS, inUseNS, rb.Object["subjects"])
	}
	cp.MustGet(t, harness.MachineDeployment, inUseNS, md)
	cp.WaitCondition(t, reconcileTimeout, harness.WorkerImageCatalog, "", name, "Synced", "True")
}

// grants reports whether a ClusterRole has a rule allowing verb on
// group/resource.
func grants(role *unstructured.Unstructured, group, resource, verb string) bool {
	rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
	for _, r := range rules {
		m, _ := r.(map[string]any)
		if contains(m["apiGroups"], group) && contains(m["resources"], resource) && contains(m["verbs"], verb) {
			return true
		}
	}
	return false
}

func contains(list any, s string) bool {
	l, _ := list.([]any)
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}

// factoryCatalog is catalog name of sids at talosVersion, from factory at
// storage by default.
func factoryCatalog(name, factory, storage string, sids ...string) *unstructured.Unstructured {
	y := fmt.Sprintf("apiVersion: workerimage.cozystack.io/v1alpha1\nkind: XWorkerImageCatalog\nmetadata:\n  name: %s\nspec:\n  goldenNamespace: %s\n  imageFactoryURL: %s\n  storage: %s\n  images:\n", name, goldenNamespace, factory, storage)
	for _, sid := range sids {
		y += fmt.Sprintf("  - schematicID: %s\n    version: %s\n", sid, talosVersion)
	}
	return harness.MustObject(y)
}

// waitGoldenMadeAgain waits until the golden before was deleted and made
// again (a new UID) from url at storage.
func waitGoldenMadeAgain(t *testing.T, before *unstructured.Unstructured, url, storage string) {
	t.Helper()
	cp.Eventually(t, gcTimeout, "the catalog to import golden "+before.GetName()+" again from "+url, func(ctx context.Context) error {
		dv, err := cp.Existing(ctx, harness.DataVolume, goldenNamespace, before.GetName())
		if err != nil {
			return err
		}
		if dv.GetUID() == before.GetUID() {
			return fmt.Errorf("still the first DataVolume (deletionTimestamp %v)", dv.GetDeletionTimestamp())
		}
		if got := goldenSourceOf(dv); got.URL != url || got.Storage != storage {
			return fmt.Errorf("made again as %+v", got)
		}
		return nil
	})
}

// stalledCatalog applies catalog name of sidDone and sidStuck from the
// public factory at 6Gi, lets CDI import sidDone's golden, leaves the other
// importing (the factory stalls), and returns both goldens as they are.
func stalledCatalog(t *testing.T, name, sidDone, sidStuck string) (done, stuck *unstructured.Unstructured) {
	t.Helper()
	xr := factoryCatalog(name, "https://factory.talos.dev", "6Gi", sidDone, sidStuck)
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	cp.WaitExists(t, reconcileTimeout, harness.DataVolume, goldenNamespace, goldenName(sidDone))
	completeGolden(t, goldenName(sidDone))
	waitDataVolumePhase(t, goldenNamespace, goldenName(sidDone), phaseSucceeded)
	// The other importer keeps running: the factory stalls.
	waitDataVolumePhase(t, goldenNamespace, goldenName(sidStuck), phaseImportInProgress)
	return cp.MustGet(t, harness.DataVolume, goldenNamespace, goldenName(sidDone)), cp.MustGet(t, harness.DataVolume, goldenNamespace, goldenName(sidStuck))
}
