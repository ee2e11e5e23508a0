package tenantcluster

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
)

// subdomainError is apimachinery's explanation of a DNS-1123 subdomain.
const subdomainError = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`

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
				`spec.nodePools.alpha.diskSize "20GB" is not a positive quantity such as 20Gi`,
				`spec.nodePools.alpha.osImage.builtin.schematicID: schematicID "Not_Hex" is not a plain lowercase alphanumeric identifier; it is interpolated into the golden DataVolume name and the image URL, so use the 64 lowercase hex characters the Image Factory returns`,
				`spec.nodePools.zeta.replicas -1 is not a whole number from 0 to 1000; set how many workers the pool runs, at most 1000 per pool (split a larger fleet into several pools)`,
			},
		},
		"InvalidStorageClassIsRefusedOnTheCluster": {
			reason:  "The cluster's class is copied into every pool that names none; it is refused once, on the cluster, with the fix.",
			cluster: "acme",
			spec:    v1alpha1.TenantClusterSpec{StorageClass: "UPPER case", NodePools: map[string]v1alpha1.PoolShape{"a": {}, "b": {}}},
			want:    []string{`spec.storageClass "UPPER case" is not a StorageClass name (` + subdomainError + `); name an existing StorageClass, or leave it empty for the cluster default`},
		},
		"StorageClassWithDollarIsRefused": {
			reason:  "Shell syntax never reaches a composed XNodePool.",
			cluster: "acme",
			spec:    v1alpha1.TenantClusterSpec{StorageClass: "fast$(id)"},
			want:    []string{`spec.storageClass "fast$(id)" is not a StorageClass name (` + subdomainError + `); name an existing StorageClass, or leave it empty for the cluster default`},
		},
		"InvalidPoolStorageClassIsNamedWithItsPool": {
			reason:  "A pool's own class is checked the same way and named by its path.",
			cluster: "acme",
			spec:    v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{"gpu": {StorageClass: "Local"}}},
			want:    []string{`spec.nodePools.gpu.storageClass "Local" is not a StorageClass name (` + subdomainError + `); name an existing StorageClass, or leave it empty for the cluster default`},
		},
		"PoolShapeIsBoundedAsTheNodePoolBoundsIt": {
			reason:  "Replicas, disk, cores and memory have the node pool's bounds and messages.",
			cluster: "acme",
			spec: v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{
				"big": {Replicas: ptr[int32](1001), DiskSize: "1000000000000000000000", Resources: &v1alpha1.Resources{CPU: "1e30", Memory: "1e30"}},
			}},
			want: []string{
				`spec.nodePools.big.replicas 1001 is not a whole number from 0 to 1000; set how many workers the pool runs, at most 1000 per pool (split a larger fleet into several pools)`,
				`spec.nodePools.big.diskSize "1000000000000000000000" is larger than 1Pi, the largest worker disk accepted; sizes this large do not survive the API server's quantity canonicalisation, so write a size such as 20Gi`,
				`spec.nodePools.big.resources.cpu "1e30" is not a whole number of cores between 1 and 512, e.g. 2`,
				`spec.nodePools.big.resources.memory "1e30" is larger than 16Ti, the largest worker memory accepted; sizes this large do not survive the API server's quantity canonicalisation, so write a size such as 4Gi`,
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
