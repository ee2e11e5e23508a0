package e2e

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// cdiShapesDir holds a worker DataVolume and its PVC as the API server
// returned them after real CDI v1.65.0 cloned the disk: the shape of the
// per-worker objects a node pool reads as required resources, which the
// benchmarks and make load replay (internal/fixture). FWI_RECORD_CDI_SHAPES=1
// rewrites them from the live objects; otherwise the live objects' shape
// (the keys of their annotations, labels, spec and status, their condition
// types and owner kinds) must match the recorded one, so the fixtures cannot
// drift from what CDI writes.
var cdiShapesDir = filepath.Join("..", "..", "internal", "fixture", "testdata", "cdi")

func recordOrCompareCDIShape(t *testing.T, file string, live *unstructured.Unstructured) {
	t.Helper()
	path := filepath.Join(cdiShapesDir, file)
	if os.Getenv("FWI_RECORD_CDI_SHAPES") == "1" {
		b, err := json.MarshalIndent(live.Object, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no recorded CDI shape %s (run with FWI_RECORD_CDI_SHAPES=1): %v", path, err)
	}
	var recorded map[string]any
	if err := json.Unmarshal(b, &recorded); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(shapeOf(recorded), shapeOf(live.Object)); diff != "" {
		t.Errorf("CDI's %s no longer has the recorded shape %s; re-record with FWI_RECORD_CDI_SHAPES=1 and re-measure docs/performance.md\n-recorded, +live:\n%s", live.GetKind(), path, diff)
	}
}

// shapeOf is what a fixture must share with the live object: key sets, not
// values (names, UIDs, tokens and timestamps differ on every run).
func shapeOf(o map[string]any) map[string][]string {
	keys := func(path ...string) []string {
		m, _, _ := unstructured.NestedMap(o, path...)
		return slices.Sorted(maps.Keys(m))
	}
	// Annotations are compared for CDI's keys and the function's own: the
	// PV controller of kube-controller-manager adds its own
	// (volume.kubernetes.io/storage-provisioner and the like) on its own
	// schedule, so whether they are there yet is timing, not CDI's shape.
	owned := slices.DeleteFunc(keys("metadata", "annotations"), func(k string) bool {
		return !strings.HasPrefix(k, "cdi.kubevirt.io/") && !strings.HasPrefix(k, "workerimage.cozystack.io/")
	})
	shape := map[string][]string{
		"metadata.annotations": owned,
		"metadata.labels":      keys("metadata", "labels"),
		"spec":                 keys("spec"),
		"status":               keys("status"),
	}
	conds, _, _ := unstructured.NestedSlice(o, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		ty, _ := m["type"].(string)
		shape["status.conditions"] = append(shape["status.conditions"], ty)
	}
	owners, _, _ := unstructured.NestedSlice(o, "metadata", "ownerReferences")
	for _, r := range owners {
		m, _ := r.(map[string]any)
		kind, _ := m["kind"].(string)
		shape["metadata.ownerReferences"] = append(shape["metadata.ownerReferences"], kind)
	}
	// Label and annotation keys that carry a per-object value in their
	// name would differ on every run; none does today.
	for k, v := range shape {
		shape[k] = slices.DeleteFunc(v, func(s string) bool { return strings.Contains(s, "/uid-") })
	}
	return shape
}
