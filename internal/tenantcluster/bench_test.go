package tenantcluster

import (
	"fmt"
	"strings"
	"testing"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/internal/compose/composetest"
)

// BenchmarkCompose measures one reconcile of a cluster whose pools are all
// observed and ready, the steady state, at 1, 10 and 100 pools.
func BenchmarkCompose(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("Pools=%d", n), func(b *testing.B) {
			pools := make([]string, 0, n)
			observed := make(map[resource.Name]string, n)
			for i := range n {
				name := fmt.Sprintf("pool-%03d", i)
				pools = append(pools, fmt.Sprintf(`%q:{"replicas":3,"diskSize":"40Gi","osImage":{"builtin":{}}}`, name))
				observed[resourceName(name)] = fmt.Sprintf(`{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XNodePool","metadata":{"name":"acme-%s"},"status":{
					"image":{"schematicID":"%s","version":"v1.13.6","sourceType":"Clone","golden":"cozy-public/talos-worker-%s-v1.13.6"},
					"template":"acme-%s-0123456789abcdef","gate":{"state":"Open"},"replicas":3,"readyReplicas":3,
					"conditions":[{"type":"Ready","status":"True","reason":"Available"}]}}`, name, schematic, schematic, name)
			}
			r := request(b, `{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XTenantCluster","metadata":{"name":"acme","namespace":"tenant-acme"},
				"spec":{"version":"v1.35","storageClass":"replicated","nodePools":{`+strings.Join(pools, ",")+`}}}`, observed)
			b.ReportAllocs()
			for b.Loop() {
				if out := composetest.Run(Mode{}, r).Output; out.Fatal != nil {
					b.Fatal(out.Fatal)
				}
			}
		})
	}
}
