package schema

import (
	"bytes"
	"fmt"
	"testing"

	"k8s.io/client-go/util/jsonpath"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
)

// TestPrinterColumnsShowTheDecision: kubectl get shows what an operator
// looks for first (the image, the gate and its reason, the goldens' and
// pools' readiness). Each column's JSONPath is evaluated as kubectl
// evaluates it (k8s.io/client-go/util/jsonpath, missing keys allowed) on
// the composite a scenario renders.
func TestPrinterColumnsShowTheDecision(t *testing.T) {
	cases := map[string]struct {
		reason   string
		kind     string
		rendered string
		want     map[string]string
	}{
		"HeldPool": {
			reason:   "A held pool shows Held and why in the default columns.",
			kind:     v1alpha1.KindNodePool,
			rendered: "example/nodepool/scenarios/disk-too-small/expected.yaml",
			want:     map[string]string{"SOURCE": "Clone", "TALOS": "v1.13.6", "GATE": "Held", "REASON": "DiskTooSmall", "SCHEMATIC": "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"},
		},
		"OpenPool": {
			reason:   "A pool whose template is composed shows the gate Open and its template.",
			kind:     v1alpha1.KindNodePool,
			rendered: "example/nodepool/scenarios/builtin-golden-succeeded/expected.yaml",
			want:     map[string]string{"SOURCE": "Clone", "GATE": "Open", "REASON": "TemplateComposed"},
		},
		"ImportingCatalog": {
			reason:   "A catalog shows how its goldens stand, from GoldenImagesReady.",
			kind:     v1alpha1.KindWorkerImageCatalog,
			rendered: "example/catalog/scenarios/golden-importing/expected.yaml",
			want:     map[string]string{"GOLDENS": "Importing", "RETIRING": "False"},
		},
		"TenantCluster": {
			reason:   "A tenant cluster shows whether its pools are ready, from NodePoolsReady.",
			kind:     v1alpha1.KindTenantCluster,
			rendered: "example/tenantcluster/scenarios/autoscaled-pool/expected.yaml",
			want:     map[string]string{"POOLS": "PoolsNotReady"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xrd := xrdByKind(t, configurationDir, tc.kind)
			objs, err := ReadObjects(root, tc.rendered)
			if err != nil {
				t.Fatal(err)
			}
			var xr map[string]any
			for _, o := range objs {
				if o.Object["kind"] == tc.kind {
					xr = o.Object
					break
				}
			}
			if xr == nil {
				t.Fatalf("%s renders no %s", tc.rendered, tc.kind)
			}
			got := map[string]string{}
			for _, c := range xrd.Spec.Versions[0].AdditionalPrinterColumns {
				jp := jsonpath.New(c.Name).AllowMissingKeys(true)
				if err := jp.Parse(fmt.Sprintf("{%s}", c.JSONPath)); err != nil {
					t.Fatalf("column %s: %v", c.Name, err)
				}
				var b bytes.Buffer
				if err := jp.Execute(&b, xr); err != nil {
					t.Fatalf("column %s: %v", c.Name, err)
				}
				got[c.Name] = b.String()
			}
			for col, want := range tc.want {
				if got[col] != want {
					t.Errorf("%s\ncolumn %s = %q, want %q (all: %v)", tc.reason, col, got[col], want, got)
				}
			}
		})
	}
}
