package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// TestCDIRuns proves, before the scenarios lean on it, that the suite's CDI
// is CDI: cdi-controller's StorageProfile controller has taken the default
// class's profile spec into its status, and cdi-apiserver's DataVolume
// validating webhook, reached at its url, refuses an invalid DataVolume
// (one with both a storage and a pvc target:
// pkg/apiserver/webhooks/datavolume-validate.go, "Duplicate storage
// definition, both target storage and target pvc defined").
func TestCDIRuns(t *testing.T) {
	sp := cp.MustGet(t, harness.StorageProfileKind, "", harness.DefaultStorageClass)
	if prov, _, _ := unstructured.NestedString(sp.Object, "status", "provisioner"); prov != harness.CSIDriverName {
		t.Errorf("StorageProfile %s: status.provisioner %q, want %q", sp.GetName(), prov, harness.CSIDriverName)
	}
	t.Logf("StorageProfile %s, written by cdi-controller: status %v", sp.GetName(), sp.Object["status"])

	const ns = "e2e-cdi-runs"
	inNamespace(t, ns)
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
`, ns))
	cp.Eventually(t, 30*time.Second, "cdi-apiserver's validating webhook refusing DataVolume invalid", func(ctx context.Context) error {
		err := cp.Apply(ctx, bad)
		if err == nil {
			_ = cp.Delete(ctx, harness.DataVolume, ns, "invalid")
			return errors.New("the invalid DataVolume was admitted")
		}
		if !strings.Contains(err.Error(), `admission webhook "datavolume-validate.cdi.kubevirt.io" denied the request`) {
			return fmt.Errorf("refused, but not by the datavolume-validate webhook: %v", err)
		}
		t.Logf("refused as expected: %v", err)
		return nil
	})
}
