package rules

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestBlockSize(t *testing.T) {
	cases := map[string]struct {
		reason            string
		logical, physical int32
		ok                bool
	}{
		"Omitted":          {"Both omitted take the defaults.", 0, 0, true},
		"ChartDefault":     {"512/4096 is the chart's (nodegroup.yaml:155-158 @69da032).", 512, 4096, true},
		"Native4K":         {"4K logical on 4K physical.", 4096, 4096, true},
		"LogicalOnly":      {"One side alone is checked against its default later.", 4096, 0, true},
		"LogicalAbove":     {"A logical sector cannot span physical ones.", 4096, 512, false},
		"OddSize":          {"1024 is not offered.", 1024, 4096, false},
		"NegativePhysical": {"Not a size.", 512, -1, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := len(BlockSize(field.NewPath("spec", "disk", "blockSize"), tc.logical, tc.physical)) == 0; got != tc.ok {
				t.Errorf("%s\nBlockSize(%d, %d) ok = %t, want %t", tc.reason, tc.logical, tc.physical, got, tc.ok)
			}
		})
	}
}
