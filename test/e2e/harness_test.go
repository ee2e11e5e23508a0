package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

var smokeCatalog = schema.GroupVersionKind{Group: "smoke.workerimage.cozystack.io", Version: "v1alpha1", Kind: "XWorkerImageCatalog"}

// TestSmokeHarness proves the harness itself, whatever state the function's
// modes are in: Crossplane calls the function over mTLS through the
// hand-made FunctionRevision, reports the XR Synced, and deleting the XR lets
// the garbage collector remove what it owns.
func TestSmokeHarness(t *testing.T) {
	const name = "smoke"
	cp.MustApply(t, harness.MustObject(fmt.Sprintf(`
apiVersion: smoke.workerimage.cozystack.io/v1alpha1
kind: XWorkerImageCatalog
metadata:
  name: %s
spec:
  goldenNamespace: %s
  images: []
`, name, goldenNamespace)))

	xr := cp.WaitCondition(t, reconcileTimeout, smokeCatalog, "", name, "Synced", "True")

	// Synced=True could in principle come from a pipeline that never ran;
	// the function's own log proves it was called for this XR.
	cp.Eventually(t, reconcileTimeout, "the function to log a call for XR "+name, func(context.Context) error {
		b, err := os.ReadFile(cp.LogDir + "/function-worker-image.log")
		if err != nil {
			return err
		}
		if !strings.Contains(string(b), `"xr-name": "`+name+`"`) && !strings.Contains(string(b), `xr-name":"`+name+`"`) {
			return fmt.Errorf("no log line names xr-name %s yet", name)
		}
		return nil
	})

	// The function's metrics (docs/operations.md) count the call and the
	// catalog it decided for, as the real Crossplane called it.
	cp.Eventually(t, reconcileTimeout, "the function's metrics to count a composed Catalog call", func(ctx context.Context) error {
		for _, m := range []struct {
			name   string
			labels []string
		}{
			{"function_worker_image_calls_total", []string{`mode="Catalog"`, `outcome="composed"`}},
			{"function_worker_image_composites", []string{`mode="Catalog"`}},
			{"function_worker_image_request_bytes_count", []string{`mode="Catalog"`}},
		} {
			if v, err := cp.FunctionMetric(ctx, m.name, m.labels...); err != nil || v < 1 {
				return fmt.Errorf("%s%v = %v, %v; want at least 1", m.name, m.labels, v, err)
			}
		}
		return nil
	})

	// An object the XR owns, to prove kube-controller-manager's garbage
	// collector runs and knows the composite kind.
	cp.MustApply(t, harness.MustObject(fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: owned-by-smoke
  namespace: default
  ownerReferences:
  - apiVersion: smoke.workerimage.cozystack.io/v1alpha1
    kind: XWorkerImageCatalog
    name: %s
    uid: %s
`, name, xr.GetUID())))
	cm := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	cp.WaitExists(t, reconcileTimeout, cm, "default", "owned-by-smoke")

	cp.MustDelete(t, smokeCatalog, "", name)
	cp.WaitGone(t, reconcileTimeout, smokeCatalog, "", name)
	cp.WaitGone(t, gcTimeout, cm, "default", "owned-by-smoke")
}
