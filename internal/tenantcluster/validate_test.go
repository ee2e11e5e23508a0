package tenantcluster

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
)

func TestValidate(t *testing.T) {
	cases := map[string]struct {
		reason  string
		cluster string
		spec    v1alpha1.TenantClusterSpec
		want    []string
	}{
		"EmptySpecIsValid": {
			reason:  "Every field is optional; defaults fill what is left out.",
			cluster: "acme",
		},
		"ValidSpecHasNoProblems": {
			reason:  "A fully written spec passes.",
			cluster: "acme",
			spec: v1alpha1.TenantClusterSpec{
				Version:         "v1.35",
				GoldenNamespace: "cozy-public",
				Talos: v1alpha1.Talos{
					Version: "v1.13.6", SchematicID: "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515",
					ImageFactoryURL: "https://factory.example.com", InstallerRepository: "registry.example.com:5000/talos/installer",
				},
				NodePools: map[string]v1alpha1.PoolShape{
					"workers": {Replicas: ptr[int32](3), DiskSize: "40Gi"},
					"gpu":     {OSImage: &v1alpha1.OSImage{Factory: &v1alpha1.FactoryImage{Version: "v1.12.4", ImageFactoryURL: "http://mirror.internal"}}},
				},
			},
		},
		"PatchVersionIsRefused": {
			reason:  "spec.version is a Kubernetes minor; Talos picks the patch.",
			cluster: "acme",
			spec:    v1alpha1.TenantClusterSpec{Version: "v1.35.2"},
			want:    []string{`spec.version "v1.35.2" is not a Kubernetes minor such as v1.35; set the minor the tenant cluster runs, Talos picks the patch`},
		},
		"InvalidTalosFieldsAreNamed": {
			reason:  "Each talos.* default is checked by its talosimage validator and named by its path.",
			cluster: "acme",
			spec:    v1alpha1.TenantClusterSpec{Talos: v1alpha1.Talos{Version: "1.13", ImageFactoryURL: "https://f.example.com/$(id)"}},
			want: []string{
				`spec.talos.version: version "1.13" is not a vMAJOR.MINOR.PATCH Talos release (e.g. v1.13.6 or v1.14.0-alpha.0); the Image Factory publishes no artifact for anything else`,
				`spec.talos.imageFactoryURL: imageFactoryURL "https://f.example.com/$(id)" is not a plain http(s) URL; it is interpolated into a DataVolume source URL, so it must carry no whitespace, quotes, $, backtick, <>, {} or |`,
			},
		},
		"PoolNameThatIsNoDNSLabelIsRefused": {
			reason:  "A pool's name becomes part of object names.",
			cluster: "acme",
			spec:    v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{"GPU_Pool": {}}},
			want:    []string{`spec.nodePools: pool name "GPU_Pool" is not a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit); rename the pool, its name becomes part of the XNodePool and MachineDeployment names`},
		},
		"PoolNameTooLongForTheClusterIsRefused": {
			reason:  "<cluster>-<pool> names a MachineDeployment and must fit 63 characters; the fix says how short.",
			cluster: "acme-production-eu-west",
			spec:    v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{strings.Repeat("p", 40): {}}},
			want:    []string{`spec.nodePools: pool "` + strings.Repeat("p", 40) + `" would be named "acme-production-eu-west-` + strings.Repeat("p", 40) + `", 64 characters, more than 63; shorten the pool name to at most 39 characters`},
		},
		"ClusterNameLeavingNoRoomIsNamed": {
			reason:  "When the cluster's own name fills the label, no pool name can fix it.",
			cluster: strings.Repeat("c", 62),
			spec:    v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{"a": {}}},
			want:    []string{`spec.nodePools: pool "a" would be named "` + strings.Repeat("c", 62) + `-a", 64 characters, more than 63; the cluster name "` + strings.Repeat("c", 62) + `" leaves no room for a pool name, so recreate the cluster under a shorter name`},
		},
		"BuiltinAndFactoryTogetherAreRefused": {
			reason:  "osImage is a union: clone or import, never both.",
			cluster: "acme",
			spec: v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{
				"gpu": {OSImage: &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{}, Factory: &v1alpha1.FactoryImage{}}},
			}},
			want: []string{`spec.nodePools.gpu.osImage sets both builtin and factory; keep builtin to clone the catalog's golden image, or factory to import it over HTTP, not both`},
		},
		"PoolProblemsAreListedInPoolOrder": {
			reason:  "Every problem is listed, pools in name order, so the message is stable and complete.",
			cluster: "acme",
			spec: v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{
				"zeta":  {Replicas: ptr[int32](-1)},
				"alpha": {DiskSize: "20GB", OSImage: &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{SchematicID: "Not_Hex"}}},
			}},
			want: []string{
				`spec.nodePools.alpha.diskSize "20GB" is not a positive quantity such as 20Gi; set the size of each worker's system disk`,
				`spec.nodePools.alpha.osImage.builtin.schematicID: schematicID "Not_Hex" is not a plain lowercase alphanumeric identifier; it is interpolated into the golden DataVolume name and the image URL, so use the 64 lowercase hex characters the Image Factory returns`,
				`spec.nodePools.zeta.replicas -1 is negative; set 0 or more workers`,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := validate(tc.cluster, tc.spec)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
