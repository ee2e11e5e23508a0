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
		want    []string // the fields named, in order
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
			want:    []string{"spec.version"},
		},
		"InvalidTalosFieldsAreNamed": {
			reason:  "Each talos.* default is checked by its rule and named by its path.",
			cluster: "acme",
			spec:    v1alpha1.TenantClusterSpec{Talos: v1alpha1.Talos{Version: "1.13", ImageFactoryURL: "https://f.example.com/$(id)"}},
			want:    []string{"spec.talos.version", "spec.talos.imageFactoryURL"},
		},
		"PoolNameThatIsNoDNSLabelIsRefused": {
			reason:  "A pool's name becomes part of object names.",
			cluster: "acme",
			spec:    v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{"GPU_Pool": {}}},
			want:    []string{"spec.nodePools[GPU_Pool]"},
		},
		"PoolNameTooLongForTheClusterIsRefused": {
			reason:  "<cluster>-<pool> names a MachineDeployment and must fit 63 characters; the fix says how short.",
			cluster: "acme-production-eu-west",
			spec:    v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{strings.Repeat("p", 40): {}}},
			want:    []string{"spec.nodePools[pppppppppppppppppppppppppppppppppppppppp]"},
		},
		"ClusterNameLeavingNoRoomIsNamed": {
			reason:  "When the cluster's own name fills the label, no pool name can fix it: the refusal is at the cluster's name.",
			cluster: strings.Repeat("c", 62),
			spec:    v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{"a": {}}},
			want:    []string{"metadata.name"},
		},
		"UnknownBootstrapModeIsNamedByPool": {
			reason:  "A tenant cluster's pool is checked by poolspec.Resolve, bootstrap mode included, at its own path.",
			cluster: "acme",
			spec:    v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{"workers": {Bootstrap: &v1alpha1.Bootstrap{Mode: "Kamaji"}}}},
			want:    []string{"spec.nodePools[workers].bootstrap.mode"},
		},
		"BuiltinAndFactoryTogetherAreRefused": {
			reason:  "osImage is a union: clone or import, never both.",
			cluster: "acme",
			spec: v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{
				"gpu": {OSImage: &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{}, Factory: &v1alpha1.FactoryImage{}}},
			}},
			want: []string{"spec.nodePools[gpu].osImage"},
		},
		"PoolProblemsAreListedInPoolOrder": {
			reason:  "Every problem is listed, pools in name order, so the message is stable and complete.",
			cluster: "acme",
			spec: v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{
				"zeta":  {Replicas: ptr[int32](-1)},
				"alpha": {DiskSize: "20GB", OSImage: &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{SchematicID: "Not_Hex"}}},
			}},
			want: []string{"spec.nodePools[alpha].diskSize", "spec.nodePools[alpha].osImage.builtin.schematicID", "spec.nodePools[zeta].replicas"},
		},
		"InvalidStorageClassIsRefusedOnTheCluster": {
			reason:  "The cluster's class is copied into every pool that names none; it is refused once, on the cluster, with the fix.",
			cluster: "acme",
			spec:    v1alpha1.TenantClusterSpec{StorageClass: "UPPER case", NodePools: map[string]v1alpha1.PoolShape{"a": {}, "b": {}}},
			want:    []string{"spec.storageClass"},
		},
		"StorageClassWithDollarIsRefused": {
			reason:  "Shell syntax never reaches a composed XNodePool.",
			cluster: "acme",
			spec:    v1alpha1.TenantClusterSpec{StorageClass: "fast$(id)"},
			want:    []string{"spec.storageClass"},
		},
		"InvalidPoolStorageClassIsNamedWithItsPool": {
			reason:  "A pool's own class is checked the same way and named by its path.",
			cluster: "acme",
			spec:    v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{"gpu": {StorageClass: "Local"}}},
			want:    []string{"spec.nodePools[gpu].storageClass"},
		},
		"PoolShapeIsBoundedAsTheNodePoolBoundsIt": {
			reason:  "Replicas, disk, cores and memory have the node pool's bounds and messages.",
			cluster: "acme",
			spec: v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{
				"big": {Replicas: ptr[int32](1001), DiskSize: "1000000000000000000000", Resources: &v1alpha1.Resources{CPU: "1e30", Memory: "1e30"}},
			}},
			want: []string{"spec.nodePools[big].replicas", "spec.nodePools[big].resources.memory", "spec.nodePools[big].resources.cpu", "spec.nodePools[big].diskSize"},
		},
		"ClusterNameWithDotsIsRefusedAtTheClustersName": {
			reason:  "A dotted cluster name makes no MachineDeployment name; the node pool would refuse the XNodePool, so the cluster refuses it first, at its own name (which the dots are in), not at the pool.",
			cluster: "acme.prod",
			spec:    v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{"md0": {}}},
			want:    []string{"metadata.name"},
		},
		"FactoryThatMakesNoInstallerIsRefusedWhereItIsWritten": {
			reason:  "An IP-literal factory is a URL, but no installer repository: the pool would refuse it, so the cluster refuses it at the pool's field.",
			cluster: "acme",
			spec:    v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{"web": {OSImage: &v1alpha1.OSImage{Factory: &v1alpha1.FactoryImage{ImageFactoryURL: "http://[::1]:8080"}}}}},
			want:    []string{"spec.nodePools[web].osImage.factory.imageFactoryURL"},
		},
		"ExplicitInstallerMakesAnyFactoryFine": {
			reason:  "With an installer named, the factory URL is only an HTTP source.",
			cluster: "acme",
			spec:    v1alpha1.TenantClusterSpec{Talos: v1alpha1.Talos{InstallerRepository: "registry.example.com/installer"}, NodePools: map[string]v1alpha1.PoolShape{"web": {OSImage: &v1alpha1.OSImage{Factory: &v1alpha1.FactoryImage{ImageFactoryURL: "http://[::1]:8080"}}}}},
		},
		"MirrorEndpointsAreCheckedOnTheCluster": {
			reason:  "Mirrors are copied into every pool; an endpoint the pool would refuse is refused here.",
			cluster: "acme",
			spec:    v1alpha1.TenantClusterSpec{Talos: v1alpha1.Talos{RegistryMirrors: map[string]v1alpha1.RegistryMirror{"docker.io": {Endpoints: []string{"https://m.example/\u2028"}}}}},
			want:    []string{"spec.talos.registryMirrors[docker.io].endpoints[0]"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, e := range validate(tc.cluster, tc.spec, defaultConfig(t)) {
				got = append(got, e.Field)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
