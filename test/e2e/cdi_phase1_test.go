package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// cdiPhase1Namespace holds the DataVolumes of TestCDIPhase1Starts.
const cdiPhase1Namespace = "cdi-phase1"

// TestCDIPhase1Starts is phase 1 of issue 11 ("The e2e suite meets CDI
// itself"): it proves that CDI's real controller and API server run here,
// out of cluster, against the suite's kube-apiserver, before phase 2
// switches the scenarios over from the fake in harness/fakes.go. It
// replaces the suite's minimal CDI CRD stubs with CDI's own CRDs for its
// duration and puts the stubs back afterwards, so the scenarios that still
// play CDI see what they expect.
//
// While the scenarios rely on the fake, a real CDI controller must not run
// next to them: the suite runs its tests one after the other (none is
// parallel) in file order, so this file, first by name, runs before any
// scenario has created a DataVolume, and it stops CDI before it returns.
// E2E_CDI_PHASE1=0 skips it.
func TestCDIPhase1Starts(t *testing.T) {
	if os.Getenv("E2E_CDI_PHASE1") == "0" {
		t.Skip("SKIPPED: E2E_CDI_PHASE1=0")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()

	start := time.Now()
	c, err := harness.NewCDI(ctx, cp)
	if err != nil {
		t.Fatalf("cannot build or find the CDI binaries: %v", err)
	}
	t.Logf("CDI binaries ready in %s: %+v", time.Since(start).Round(time.Second), c.Bin)
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range c.Processes() {
				t.Logf("----- last lines of %s -----\n%s", p.LogPath, p.LogTail(40))
			}
		}
	})

	// CDI's CRDs. Four of them have the names of the minimal stubs the
	// suite installs (MinimalCRDs): same group, version, kind and scope,
	// so CDI's definition can replace the stub in place; it is put back
	// when the test ends.
	crds, err := c.Bin.CRDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stubs := map[string]*unstructured.Unstructured{}
	for _, s := range harness.MinimalCRDs() {
		stubs[s.GetName()] = s
	}
	var names, replaced, added []string
	for _, crd := range crds {
		names = append(names, crd.GetName())
		cur, err := cp.Get(ctx, harness.CRD, "", crd.GetName())
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case cur != nil && stubs[crd.GetName()] != nil:
			replaced = append(replaced, crd.GetName())
		case cur == nil:
			added = append(added, crd.GetName())
		default:
			t.Fatalf("CRD %s already exists and is not one of the suite's stubs; refusing to replace it", crd.GetName())
		}
	}
	t.Logf("CDI %s CRDs: %s", harness.CDIVersion, strings.Join(names, ", "))
	t.Logf("replacing the suite's minimal stubs %s with CDI's definitions for this test", strings.Join(replaced, ", "))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		for _, n := range added {
			if err := cp.Delete(ctx, harness.CRD, "", n); err != nil {
				t.Errorf("cannot delete CRD %s: %v", n, err)
			}
		}
		for _, n := range replaced {
			if err := cp.ReplaceCRD(ctx, stubs[n]); err != nil {
				t.Errorf("cannot restore the suite's stub CRD %s: %v", n, err)
			}
		}
	})
	for _, crd := range crds {
		if err := cp.ReplaceCRD(ctx, crd); err != nil {
			if stubs[crd.GetName()] != nil {
				t.Skipf("SKIPPED: the suite's minimal stub CRD %s is in the way: the kube-apiserver refuses CDI's definition over it: %v", crd.GetName(), err)
			}
			t.Fatal(err)
		}
	}

	// What the operator creates, then the two processes.
	if err := c.InstallOperatorObjects(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("cdi-apiserver serving at %s", c.APIServerURL)
	installed, skipped, err := c.InstallWebhooks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("installed %s; not installed (needs an in-cluster Service): %s", strings.Join(installed, ", "), strings.Join(skipped, ", "))
	if err := c.StartController(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("cdi-controller running: CDIConfig %s reconciled", harness.CDIConfigName)

	// Cleanup runs last-registered first: the DataVolumes go while the
	// controller still runs, then the webhooks and processes stop, then what CDI and
	// the suite created cluster-wide goes, then (registered above) the
	// CRDs are restored.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := c.UninstallWebhooks(ctx); err != nil {
			t.Errorf("cannot remove CDI's webhook configurations: %v", err)
		}
		c.Stop()
		for _, k := range []struct {
			gvk  schema.GroupVersionKind
			name string
		}{{harness.CDIConfigKind, harness.CDIConfigName}, {harness.CDIKind, "cdi"}} {
			if err := cp.Delete(ctx, k.gvk, "", k.name); err != nil {
				t.Errorf("cannot delete %s %s: %v", k.gvk.Kind, k.name, err)
			}
		}
		profiles, err := cp.List(ctx, harness.StorageProfileKind, "", "")
		if err != nil {
			t.Errorf("cannot list StorageProfiles: %v", err)
		}
		for _, p := range profiles {
			if err := cp.Delete(ctx, harness.StorageProfileKind, "", p.GetName()); err != nil {
				t.Errorf("cannot delete StorageProfile %s: %v", p.GetName(), err)
			}
		}
		if err := cp.Delete(ctx, harness.Namespace, "", harness.CDINamespace); err != nil {
			t.Errorf("cannot delete namespace %s: %v", harness.CDINamespace, err)
		}
	})
	healthy := func(t *testing.T) {
		t.Helper()
		if err := c.Healthy(); err != nil {
			t.Fatal(err)
		}
	}

	// 1. The StorageProfile controller creates a profile for the suite's
	// default StorageClass, recording its provisioner.
	cp.Eventually(t, 60*time.Second, "StorageProfile "+harness.DefaultStorageClass+" created by cdi-controller", func(ctx context.Context) error {
		healthy(t)
		sp, err := cp.Get(ctx, harness.StorageProfileKind, "", harness.DefaultStorageClass)
		if err != nil {
			return err
		}
		if sp == nil {
			return errors.New("no StorageProfile yet")
		}
		sc, _, _ := unstructured.NestedString(sp.Object, "status", "storageClass")
		prov, _, _ := unstructured.NestedString(sp.Object, "status", "provisioner")
		if sc != harness.DefaultStorageClass || prov == "" {
			return fmt.Errorf("status.storageClass %q, status.provisioner %q", sc, prov)
		}
		t.Logf("StorageProfile %s: status %v", sp.GetName(), sp.Object["status"])
		return nil
	})

	// 2. A DataVolume importing over HTTP gets its PVC and an importer pod
	// from CDI. With no kubelet the pod stays Pending.
	//
	// The release CDI CR enables the HonorWaitForFirstConsumer gate, with
	// which the import controller creates the importer pod only once the
	// PVC is Bound, whatever the class's binding mode
	// (pkg/controller/import-controller.go shouldReconcilePVC,
	// util.go shouldHandlePvc, common/util.go IsWaitForFirstConsumerEnabled).
	// Nothing binds PVCs here yet (the provisioner stand-in is phase 2), so
	// the DataVolume asks for immediate binding with CDI's own annotation,
	// which CDI copies to the PVC and which turns that wait off.
	if err := cp.EnsureNamespace(ctx, cdiPhase1Namespace); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := cp.Delete(ctx, harness.DataVolume, cdiPhase1Namespace, "http-import"); err != nil {
			t.Errorf("cannot delete DataVolume http-import: %v", err)
		}
		if err := cp.Delete(ctx, harness.Namespace, "", cdiPhase1Namespace); err != nil {
			t.Errorf("cannot delete namespace %s: %v", cdiPhase1Namespace, err)
		}
	})
	dv := harness.MustObject(fmt.Sprintf(`
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: http-import
  namespace: %s
  annotations:
    cdi.kubevirt.io/storage.bind.immediate.requested: "true"
spec:
  source:
    http:
      url: http://127.0.0.1:9/disk.img
  storage:
    accessModes: [ReadWriteOnce]
    volumeMode: Filesystem
    resources:
      requests:
        storage: 1Gi
`, cdiPhase1Namespace))
	// The mutating and validating webhooks are in the path of this create
	// (failurePolicy Fail), so it also proves the kube-apiserver reaches
	// cdi-apiserver at its url and trusts its certificate.
	cp.Eventually(t, 60*time.Second, "DataVolume http-import admitted", func(ctx context.Context) error {
		healthy(t)
		return cp.Apply(ctx, dv)
	})
	cp.Eventually(t, 90*time.Second, "PVC http-import created by CDI for the DataVolume", func(ctx context.Context) error {
		healthy(t)
		pvc, err := cp.Get(ctx, harness.PVC, cdiPhase1Namespace, "http-import")
		if err != nil {
			return err
		}
		if pvc == nil {
			got, _ := cp.Get(ctx, harness.DataVolume, cdiPhase1Namespace, "http-import")
			return fmt.Errorf("no PVC yet; DataVolume status %v", cdiPhase1Status(got))
		}
		if refs := pvc.GetOwnerReferences(); len(refs) == 0 || refs[0].Kind != "DataVolume" {
			return fmt.Errorf("PVC owners %v", refs)
		}
		if ep := pvc.GetAnnotations()["cdi.kubevirt.io/storage.import.endpoint"]; ep == "" {
			return fmt.Errorf("PVC annotations %v lack cdi.kubevirt.io/storage.import.endpoint", pvc.GetAnnotations())
		}
		sc, _, _ := unstructured.NestedString(pvc.Object, "spec", "storageClassName")
		t.Logf("PVC http-import: storageClassName %q, annotations %v", sc, pvc.GetAnnotations())
		return nil
	})
	var podName string
	cp.Eventually(t, 90*time.Second, "an importer pod created by CDI for PVC http-import", func(ctx context.Context) error {
		healthy(t)
		pods, err := cp.List(ctx, harness.PodKind, cdiPhase1Namespace, "")
		if err != nil {
			return err
		}
		var seen []string
		for _, p := range pods {
			seen = append(seen, p.GetName())
			if strings.HasPrefix(p.GetName(), "importer-") {
				podName = p.GetName()
				phase, _, _ := unstructured.NestedString(p.Object, "status", "phase")
				var image string
				containers, _, _ := unstructured.NestedSlice(p.Object, "spec", "containers")
				if len(containers) > 0 {
					image, _ = containers[0].(map[string]any)["image"].(string)
				}
				t.Logf("importer pod %s: phase %q, image %q, owners %v", p.GetName(), phase, image, cdiPhase1Owners(&p))
				return nil
			}
		}
		got, _ := cp.Get(ctx, harness.DataVolume, cdiPhase1Namespace, "http-import")
		return fmt.Errorf("pods in %s: %v; DataVolume status %v", cdiPhase1Namespace, seen, cdiPhase1Status(got))
	})
	got := cp.MustGet(t, harness.DataVolume, cdiPhase1Namespace, "http-import")
	t.Logf("DataVolume http-import: status %v", cdiPhase1Status(got))
	pod := cp.MustGet(t, harness.PodKind, cdiPhase1Namespace, podName)
	if phase, _, _ := unstructured.NestedString(pod.Object, "status", "phase"); phase != "Pending" {
		t.Errorf("importer pod %s phase %q, want Pending (no kubelet runs here)", podName, phase)
	}

	// 3. The validating webhook refuses an invalid DataVolume: one with both
	// a storage and a pvc target (pkg/apiserver/webhooks/datavolume-validate.go,
	// "Duplicate storage definition, both target storage and target pvc
	// defined").
	bad := harness.MustObject(fmt.Sprintf(`
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: invalid
  namespace: %s
spec:
  source:
    http:
      url: http://127.0.0.1:9/disk.img
  storage:
    resources:
      requests:
        storage: 1Gi
  pvc:
    accessModes: [ReadWriteOnce]
    resources:
      requests:
        storage: 1Gi
`, cdiPhase1Namespace))
	cp.Eventually(t, 30*time.Second, "cdi-apiserver's validating webhook refusing DataVolume invalid", func(ctx context.Context) error {
		healthy(t)
		err := cp.Apply(ctx, bad)
		if err == nil {
			_ = cp.Delete(ctx, harness.DataVolume, cdiPhase1Namespace, "invalid")
			return errors.New("the invalid DataVolume was admitted")
		}
		if !strings.Contains(err.Error(), `admission webhook "datavolume-validate.cdi.kubevirt.io" denied the request`) {
			return fmt.Errorf("refused, but not by the datavolume-validate webhook: %v", err)
		}
		t.Logf("refused as expected: %v", err)
		return nil
	})
}

// cdiPhase1Status returns the status of u, or a note that it is missing.
func cdiPhase1Status(u *unstructured.Unstructured) any {
	if u == nil {
		return "(object missing)"
	}
	return u.Object["status"]
}

// cdiPhase1Owners returns kind/name of the owners of u.
func cdiPhase1Owners(u *unstructured.Unstructured) []string {
	var out []string
	for _, r := range u.GetOwnerReferences() {
		out = append(out, r.Kind+"/"+r.Name)
	}
	return out
}
