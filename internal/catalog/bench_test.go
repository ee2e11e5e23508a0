package catalog

import (
	"fmt"
	"testing"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/resource/composite"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/compose/composetest"
	"github.com/cozystack/function-worker-image/internal/required"
)

// benchRequest is a catalog of n entries whose goldens all exist and are
// Succeeded, each pinned by one template: the steady state of a platform.
func benchRequest(b *testing.B, n int) composetest.Request {
	b.Helper()
	cfg := testConfig(&testing.T{})
	spec := v1alpha1.WorkerImageCatalogSpec{StorageClass: "replicated"}
	for i := range n {
		spec.Images = append(spec.Images, v1alpha1.CatalogImage{SchematicID: fmt.Sprintf("%064x", i), Version: "v1.13.6"})
	}
	xr := composite.New()
	xr.SetAPIVersion("workerimage.cozystack.io/v1alpha1")
	xr.SetKind("XWorkerImageCatalog")
	xr.SetName("default")
	if err := xr.SetValue("spec", spec); err != nil {
		b.Fatal(err)
	}
	goldens, err := resolveGoldens("default", spec, cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	obs := map[resource.Name]resource.ObservedComposed{}
	req := required.Resolved{}
	for _, g := range goldens {
		c, err := compose.ToDesired(goldenDataVolume(g), compose.DropZero("spec", "finalCheckpoint"))
		if err != nil {
			b.Fatal(err)
		}
		_ = c.SetValue("status", map[string]any{"phase": "Succeeded", "progress": "100.0%"})
		obs[goldenKey(g.Name)] = resource.ObservedComposed{Resource: c}
		pin := composed.New()
		pin.SetNamespace("tenant")
		pin.SetName(g.Name[:20])
		req[pinsKeyPrefix+g.Name] = append(req[pinsKeyPrefix+g.Name], &pin.Unstructured)
	}
	return composetest.Request{Request: compose.Request{Config: cfg, Composite: xr, Observed: obs}, Required: req}
}

func BenchmarkCatalog(b *testing.B) {
	for _, n := range []int{1, 10, 100, 1000} {
		r := benchRequest(b, n)
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if out := composetest.Run(Mode{}, r).Output; out.Fatal != nil {
					b.Fatal(out.Fatal)
				}
			}
		})
	}
}
