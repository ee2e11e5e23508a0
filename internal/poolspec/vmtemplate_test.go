package poolspec

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
)

// The VM details are refused where the user wrote them: at spec for an
// XNodePool, at spec.nodePools[<name>] for a tenant cluster's pool.
func TestVMTemplatePaths(t *testing.T) {
	sized := &v1alpha1.Resources{Memory: "4Gi"}
	cases := map[string]struct {
		reason string
		root   *field.Path
		shape  v1alpha1.PoolShape
		want   []string
	}{
		"NothingSet": {
			reason: "A pool that sets none of the fields passes.",
			root:   field.NewPath("spec"),
		},
		"MemoryAloneSizesByResources": {
			reason: "resources.memory alone drops the instance type, so the CPU pair is usable.",
			root:   field.NewPath("spec"),
			shape:  v1alpha1.PoolShape{Resources: sized, PodCPURequest: "500m", PodCPULimit: "2"},
		},
		"TenantPoolPaths": {
			reason: "Each problem at once, named at the tenant cluster's pool.",
			root:   field.NewPath("spec", "nodePools").Key("gpu"),
			shape: v1alpha1.PoolShape{
				Roles:            []string{"ok", "bad role"},
				PodCPULimit:      "1",
				EphemeralStorage: &v1alpha1.EphemeralStorage{Limit: "0"},
				Disk:             &v1alpha1.SystemDisk{PCIAddress: "7:0.0", BlockSize: &v1alpha1.BlockSize{Physical: 1024}},
			},
			want: []string{
				`spec.nodePools[gpu].roles[1]: Invalid value: "bad role"`,
				`spec.nodePools[gpu].podCpuLimit: Invalid value: "1": cannot be combined with instance type sizing`,
				`spec.nodePools[gpu].ephemeralStorage.limit: Invalid value: "0": is not a positive quantity`,
				`spec.nodePools[gpu].disk.pciAddress: Invalid value: "7:0.0"`,
				`spec.nodePools[gpu].disk.blockSize.physical: Unsupported value: 1024`,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, errs := VMTemplate(tc.root, tc.shape)
			if len(errs) != len(tc.want) {
				t.Fatalf("%s\ngot %d errors, want %d: %v", tc.reason, len(errs), len(tc.want), errs)
			}
			for i, w := range tc.want {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("%s\nerror %d = %q, want it to contain %q", tc.reason, i, errs[i].Error(), w)
				}
			}
		})
	}
}
