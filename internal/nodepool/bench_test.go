package nodepool

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/internal/compose/composetest"
)

// BenchmarkCompose composes a clone pool with 0, 50 and 500 observed worker
// DataVolumes: the cost that grows with a pool's size while its disks are
// read (a first call; the fixture has no previous status).
func BenchmarkCompose(b *testing.B) {
	spec := map[string]any{"osImage": builtin()}
	for _, n := range []int{0, 50, 500} {
		w := succeeded
		w.dvs = make([]*unstructured.Unstructured, 0, n)
		for i := range n {
			name := fmt.Sprintf("demo-md0-%05d-disk-system", i)
			w.dvs = append(w.dvs, workerDV(name, "Succeeded", true))
		}
		observed := composeOnce(b, spec, w, mdReady(int64(n)))
		r := request(b, nodePoolXR(spec), w, observed)
		b.Run(fmt.Sprintf("workerDataVolumes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if out := composetest.Run(Mode{}, r).Output; out.Fatal != nil {
					b.Fatal(out.Fatal)
				}
			}
		})
	}
}
