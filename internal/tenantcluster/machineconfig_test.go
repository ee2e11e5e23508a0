package tenantcluster

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
)

// TestEmptyKernelModulesReachThePool: kernelModules: [] opts a GPU pool out of
// the NVIDIA modules, and omitted means "the default", so the XNodePool a
// tenant cluster composes must keep the empty list rather than drop it.
func TestEmptyKernelModulesReachThePool(t *testing.T) {
	for name, tc := range map[string]struct {
		modules *[]v1alpha1.KernelModule
		found   bool
	}{
		"Omitted": {nil, false},
		"Empty":   {&[]v1alpha1.KernelModule{}, true},
	} {
		t.Run(name, func(t *testing.T) {
			d, err := nodePool("demo", Pool{Name: "gpu", Spec: v1alpha1.NodePoolSpec{PoolShape: v1alpha1.PoolShape{KernelModules: tc.modules}}})
			if err != nil {
				t.Fatal(err)
			}
			got, found, err := unstructured.NestedSlice(d.Resource.Object, "spec", "kernelModules")
			if err != nil || found != tc.found || len(got) != 0 {
				t.Errorf("spec.kernelModules = %v (found %t, %v), want found %t and empty", got, found, err, tc.found)
			}
		})
	}
}
