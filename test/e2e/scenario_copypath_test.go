package e2e

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// TestCopyPathOnRealCDI: issue 34, item 5, the copy path on the real chain
// (internal/nodepool/copy.go; the render scenarios
// example/nodepool/scenarios/copy-path-*). A golden imported by CDI's own
// importer from the suite's image server sits on the default class; a
// second class of the same driver (Immediate: the suite has no scheduler)
// is listed in the Input's clonePreflight.hostAssistedCopy.storageClasses
// of a copy of the shipped pool Composition. A pool on that class gets a
// disk template with cdi.kubevirt.io/cloneType: copy, and CDI copies every
// worker disk from the golden by its host-assisted clone, whose source and
// upload server pods run CDI's own cdi-cloner and cdi-uploadserver
// (harness/hostclone.go, RunHostAssistedCopies): the upload server's
// serving certificate and the cloner's client certificate as CDI issues
// them from the signers the harness installs as CDI's operator does, the
// upload Service's name resolving to the upload server's address on the
// importer network. Each worker disk ends Succeeded, planned copy, on the
// second class, its volume holding the golden's disk image, and the pool
// reports CloneHealthy True, HostAssistedCopy (chosen, not a fault). A pool on the
// same class with the shipped Composition (copy path not enabled) is held
// with StorageClassMismatch naming hostAssistedCopy.storageClasses, and
// composes nothing.
func TestCopyPathOnRealCDI(t *testing.T) {
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	const ns, nsHeld, cluster, clusterHeld, catalog, class = "e2e-copy-path", "e2e-copy-path-held", "c61", "c62", "e2e-copy-path", "e2e-copy-target"
	start := time.Now()
	inNamespace(t, ns)
	inNamespace(t, nsHeld)
	capiCluster(t, ns, cluster)
	capiCluster(t, nsHeld, clusterHeld)

	srv, err := cp.StartImageServer(harness.ImageServerOptions{})
	if err != nil {
		t.Fatalf("cannot start the image server: %v", err)
	}
	t.Cleanup(srv.Close)
	if err := cp.RunHostAssistedCopies(ns); err != nil {
		t.Fatal(err)
	}
	csiCloneClass(t, class, true)

	// The golden, imported by CDI's own importer so that its volume holds
	// a real disk image for the copy to carry.
	sid := schematicID("copy-path")
	golden := goldenName(sid)
	cat := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": harness.WorkerImageCatalog.GroupVersion().String(),
		"kind":       harness.WorkerImageCatalog.Kind,
		"metadata":   map[string]any{"name": catalog},
		"spec": map[string]any{
			"goldenNamespace": goldenNamespace,
			"imageFactoryURL": srv.URL,
			"imageFactoryCA":  string(srv.CAPEM),
			"storage":         "2Gi",
			"images":          []any{map[string]any{"schematicID": sid, "version": talosVersion, "checksum": srv.Checksum}},
		},
	}}
	cp.MustApply(t, cat)
	deleteOnCleanup(t, cat)
	waitDataVolumePhase(t, goldenNamespace, golden, phaseSucceeded)
	assertImportedDisk(t, golden, srv)
	t.Logf("golden %s/%s imported on %s: %s", goldenNamespace, golden, harness.DefaultStorageClass, time.Since(start).Round(time.Second))

	// Copy path disabled (the shipped Composition): held with the fix.
	held := poolXR(nsHeld, clusterHeld, sid, "{builtin: {}}")
	if err := unstructured.SetNestedField(held.Object, class, "spec", "storageClass"); err != nil {
		t.Fatal(err)
	}
	cp.MustApply(t, held)
	deleteOnCleanup(t, held)
	got := cp.WaitCondition(t, reconcileTimeout, harness.NodePool, nsHeld, held.GetName(), "WorkerImageReady", "False",
		"StorageClass \""+class+"\"", "list \""+class+"\" in the Input's clonePreflight.hostAssistedCopy.storageClasses")
	if c := harness.Condition(got, "WorkerImageReady"); c["reason"] != "StorageClassMismatch" {
		t.Errorf("WorkerImageReady reason %v, want StorageClassMismatch: %s", c["reason"], harness.ConditionsString(got))
	}
	cp.Consistently(t, 2*functionTTL, "nothing is composed in "+nsHeld+" for the held pool", nothingComposedIn(nsHeld))

	// Copy path enabled: CDI's host-assisted clone on its own programs.
	comp := compositionWith(t, harness.NodePool, "e2e-xnodepools-copy-path", func(input map[string]any) error {
		return unstructured.SetNestedSlice(input, []any{class}, "clonePreflight", "hostAssistedCopy", "storageClasses")
	})
	xr := poolXR(ns, cluster, sid, "{builtin: {}}")
	if err := unstructured.SetNestedField(xr.Object, class, "spec", "storageClass"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(xr.Object, comp, "spec", "crossplane", "compositionRef", "name"); err != nil {
		t.Fatal(err)
	}
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	kmt := poolTemplate(t, reconcileTimeout, ns, xr.GetName())
	if d := diskSourceOf(kmt); d.CloneFrom != goldenNamespace+"/"+golden || d.Class != class {
		t.Fatalf("KubevirtMachineTemplate %s/%s: system disk %+v, want a clone of %s/%s on %s", ns, kmt.GetName(), d, goldenNamespace, golden, class)
	}
	dvts, _, _ := unstructured.NestedSlice(kmt.Object, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates")
	for _, d := range dvts {
		a, _, _ := unstructured.NestedStringMap(d.(map[string]any), "metadata", "annotations")
		t.Logf("KubevirtMachineTemplate %s/%s: disk template annotations %v", ns, kmt.GetName(), a)
	}
	copyStart := time.Now()
	disk := waitWorkerDisks(t, ns, cluster+"-"+poolName, kmt, 1)[0]
	waitDataVolumePhase(t, ns, disk, phaseSucceeded)
	dv, pvc := waitCloneSettled(t, ns, disk)
	t.Logf("worker disk %s/%s: DataVolume annotations %v", ns, disk, dv.GetAnnotations())
	if got := pvc.GetAnnotations()[annCloneType]; got != "copy" {
		t.Errorf("CDI planned worker disk %s/%s as %q, want copy (host-assisted); PVC annotations %v", ns, disk, got, pvc.GetAnnotations())
	}
	if got, _, _ := unstructured.NestedString(pvc.Object, "spec", "storageClassName"); got != class {
		t.Errorf("worker disk %s/%s is on StorageClass %q, want %q", ns, disk, got, class)
	}
	assertCopiedDisk(t, ns, disk, srv)
	// Chosen, not a fault: CloneHealthy True with reason HostAssistedCopy
	// (and a Warning event), naming both classes.
	got = cp.WaitCondition(t, reconcileTimeout, harness.NodePool, ns, xr.GetName(), "CloneHealthy", "True",
		"onto StorageClass \""+class+"\" by CDI's host-assisted clone", "on StorageClass \""+harness.DefaultStorageClass+"\"")
	if c := harness.Condition(got, "CloneHealthy"); c["reason"] != "HostAssistedCopy" {
		t.Errorf("CloneHealthy reason %v, want HostAssistedCopy: %s", c["reason"], harness.ConditionsString(got))
	}
	// And it stays so while the pool reads its finished disks, which carry
	// CDI's cloneType copy (read as a fallback, HostAssistedClone False,
	// when the pool dropped the copy path's mark on reading them).
	cp.Consistently(t, 3*functionTTL, "CloneHealthy of "+ns+"/"+xr.GetName()+" to stay True, HostAssistedCopy", func(ctx context.Context) error {
		u, err := cp.Existing(ctx, harness.NodePool, ns, xr.GetName())
		if err != nil {
			return err
		}
		if c := harness.Condition(u, "CloneHealthy"); c["status"] != "True" || c["reason"] != "HostAssistedCopy" {
			return fmt.Errorf("CloneHealthy is %v (%v): %v", c["status"], c["reason"], c["message"])
		}
		return nil
	})
	t.Logf("worker disk %s/%s copied by CDI's host-assisted clone: %s from its Machine's disk to Succeeded", ns, disk, time.Since(copyStart).Round(time.Second))
	nothingRefusedIn(t, ns)
	t.Logf("copy path on the real chain: %s", time.Since(start).Round(time.Second))
}

// assertCopiedDisk checks that the worker disk's volume holds the golden's
// disk image, carried by cdi-cloner's tar stream and unpacked by
// cdi-uploadserver, and that both CDI programs ran for it (their logs).
func assertCopiedDisk(t *testing.T, ns, disk string, srv *harness.ImageServer) {
	t.Helper()
	d := readDiskImage(t, ns, disk, srv.RawSize)
	if !bytes.Equal(d.Head, harness.TalosShapedDisk(srv.RawSize)) {
		t.Errorf("%s does not start with the golden's raw disk", d.Path)
	}
	logs, _ := filepath.Glob(filepath.Join(cp.LogDir, "*.log"))
	var cloner, uploader bool
	for _, l := range logs {
		b := filepath.Base(l)
		cloner = cloner || strings.HasPrefix(b, "cloner-"+goldenNamespace+"-")
		uploader = uploader || strings.HasPrefix(b, "uploadserver-"+goldenNamespace+"-")
	}
	if !cloner || !uploader {
		t.Errorf("no log of cdi-cloner (%v) or of cdi-uploadserver (%v) in %s under %s: CDI copies across namespaces through a claim in the source's", cloner, uploader, goldenNamespace, cp.LogDir)
	}
	t.Logf("worker disk %s/%s: PV %s holds disk.img of %d bytes, starting with the golden's %d-byte raw disk", ns, disk, d.Volume, d.Size, srv.RawSize)
}
