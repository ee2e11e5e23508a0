package tenantcluster

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossplane/function-sdk-go/resource/composite"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/decode"
	"github.com/cozystack/function-worker-image/internal/poolspec"
)

// specPath is the root of every path a tenant cluster's messages name.
var specPath = field.NewPath("spec")

// poolPath is the path of a pool in spec.nodePools.
func poolPath(name string) *field.Path { return specPath.Child("nodePools").Key(name) }

// decodeSpec reads the composite's spec into its typed mirror, once, at the
// edge. Each pool is first checked as written with the pool's own rules
// (poolspec.AsWritten: replicas before int32 narrows them, osImage keys), in
// name order, so every problem is named by its pool and path.
func decodeSpec(xr *composite.Unstructured) (v1alpha1.TenantClusterSpec, field.ErrorList) {
	spec := v1alpha1.TenantClusterSpec{}
	raw := xr.UnstructuredContent()["spec"]
	var errs field.ErrorList
	var skip []string
	m, _ := raw.(map[string]any)
	if pools, ok := m["nodePools"].(map[string]any); ok {
		for _, name := range slices.Sorted(maps.Keys(pools)) {
			pool, _ := pools[name].(map[string]any)
			e, s := poolspec.AsWritten(poolPath(name), pool)
			errs = append(errs, e...)
			skip = append(skip, s...)
		}
	}
	return spec, append(errs, decode.Into(raw, specPath, &spec, skip...)...)
}
