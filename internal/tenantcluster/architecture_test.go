package tenantcluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/config"
)

// TestArchitectureReachesItsPool: a tenant cluster's nodePools[].architecture
// is the XNodePool's spec.architecture, written only where the cluster sets
// it: no default is filled in, so an amd64 pool that says nothing renders as
// it always has (and its node pool takes the Input's image.arch).
func TestArchitectureReachesItsPool(t *testing.T) {
	spec := v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{
		"arm":     {Architecture: "arm64"},
		"amd":     {Architecture: "amd64"},
		"workers": {},
	}}
	got := map[string]any{}
	for _, p := range plan(config.Config{}, "acme", spec).Pools {
		d, err := nodePool("acme", p)
		if err != nil {
			t.Fatal(err)
		}
		arch, found, err := unstructured.NestedString(d.Resource.Object, "spec", "architecture")
		if err != nil {
			t.Fatal(err)
		}
		if found {
			got[p.Name] = arch
		} else {
			got[p.Name] = nil
		}
	}
	want := map[string]any{"arm": "arm64", "amd": "amd64", "workers": nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("XNodePool spec.architecture by pool (nil: not rendered)\n-want, +got:\n%s", diff)
	}
}
