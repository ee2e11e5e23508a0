package tenantcluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/defaults"
)

func TestPlan(t *testing.T) {
	// No installerRepository: unless the cluster or the Input names one,
	// each XNodePool derives the installer of its own factory and platform.
	defaultTalos := v1alpha1.Talos{
		Version:         defaults.TalosVersion,
		SchematicID:     defaults.TalosSchematicID,
		ImageFactoryURL: defaults.ImageFactoryURL,
	}
	mirrors := map[string]v1alpha1.RegistryMirror{"docker.io": {Endpoints: []string{"https://mirror.internal"}}}
	clusterTalos := v1alpha1.Talos{
		Version:             "v1.12.4",
		SchematicID:         "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba",
		ImageFactoryURL:     defaults.ImageFactoryURL,
		InstallerRepository: "registry.internal/installer",
		RegistryMirrors:     mirrors,
	}
	cases := map[string]struct {
		reason string
		spec   v1alpha1.TenantClusterSpec
		want   Plan
	}{
		"NoPoolsTakesTheInputDefaults": {
			reason: "A cluster that says nothing gets the Input's defaults, which come from internal/defaults.",
			want:   Plan{Cluster: "acme", Version: defaults.KubernetesVersion, Talos: defaultTalos},
		},
		"PoolsInheritTheClusterDefaults": {
			reason: "Each pool gets the cluster's version, Talos defaults, golden namespace and StorageClass unless it sets its own class; osImage passes as written.",
			spec: v1alpha1.TenantClusterSpec{
				Version:         "v1.34",
				Talos:           v1alpha1.Talos{Version: "v1.12.4", SchematicID: clusterTalos.SchematicID, InstallerRepository: "registry.internal/installer", RegistryMirrors: mirrors},
				StorageClass:    "replicated",
				GoldenNamespace: "images",
				NodePools: map[string]v1alpha1.PoolShape{
					"workers": {Replicas: ptr[int32](3)},
					"gpu":     {StorageClass: "local", InstanceType: "gn1.xlarge", OSImage: &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{}}},
				},
			},
			want: Plan{
				Cluster: "acme", Version: "v1.34", Talos: clusterTalos,
				Pools: []Pool{
					{Name: "gpu", Resource: "nodepool-gpu", Spec: v1alpha1.NodePoolSpec{
						PoolShape:   v1alpha1.PoolShape{StorageClass: "local", InstanceType: "gn1.xlarge", OSImage: &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{}}},
						ClusterName: "acme", PoolName: "gpu", Version: "v1.34", Talos: clusterTalos, GoldenNamespace: "images",
					}},
					{Name: "workers", Resource: "nodepool-workers", Spec: v1alpha1.NodePoolSpec{
						PoolShape:   v1alpha1.PoolShape{Replicas: ptr[int32](3), StorageClass: "replicated"},
						ClusterName: "acme", PoolName: "workers", Version: "v1.34", Talos: clusterTalos, GoldenNamespace: "images",
					}},
				},
			},
		},
		"JoinPoolCarriesItsBootstrapMode": {
			reason: "A Kamaji cluster's pools ask for the Join mode in their shape; the composed XNodePool carries it as written.",
			spec:   v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{"workers": {Bootstrap: &v1alpha1.Bootstrap{Mode: v1alpha1.BootstrapJoin, FactsRevision: 2}}}},
			want: Plan{
				Cluster: "acme", Version: defaults.KubernetesVersion, Talos: defaultTalos,
				Pools: []Pool{{Name: "workers", Resource: "nodepool-workers", Spec: v1alpha1.NodePoolSpec{
					PoolShape:   v1alpha1.PoolShape{Bootstrap: &v1alpha1.Bootstrap{Mode: v1alpha1.BootstrapJoin, FactsRevision: 2}},
					ClusterName: "acme", PoolName: "workers", Version: defaults.KubernetesVersion, Talos: defaultTalos, GoldenNamespace: defaults.GoldenNamespace,
				}}},
			},
		},
		"ClusterCAReachesItsPools": {
			reason: "A cluster on its own factory mirror names its CA once; each of its pools carries it, and the Input's stays out of their specs (each pool falls back to it).",
			spec:   v1alpha1.TenantClusterSpec{Talos: v1alpha1.Talos{ImageFactoryCA: "-----BEGIN CERTIFICATE-----"}, NodePools: map[string]v1alpha1.PoolShape{"workers": {}}},
			want: Plan{
				Cluster: "acme", Version: defaults.KubernetesVersion, Talos: withCA(defaultTalos),
				Pools: []Pool{{Name: "workers", Resource: "nodepool-workers", Spec: v1alpha1.NodePoolSpec{
					ClusterName: "acme", PoolName: "workers", Version: defaults.KubernetesVersion, Talos: withCA(defaultTalos), GoldenNamespace: defaults.GoldenNamespace,
				}}},
			},
		},
		"OmittedOSImageStaysOmitted": {
			reason: "The node pool mode owns the rule that an omitted osImage means HTTP; the cluster must not decide it.",
			spec:   v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{"workers": {}}},
			want: Plan{
				Cluster: "acme", Version: defaults.KubernetesVersion, Talos: defaultTalos,
				Pools: []Pool{{Name: "workers", Resource: "nodepool-workers", Spec: v1alpha1.NodePoolSpec{
					ClusterName: "acme", PoolName: "workers", Version: defaults.KubernetesVersion, Talos: defaultTalos, GoldenNamespace: defaults.GoldenNamespace,
				}}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := plan(defaultConfig(t), "acme", tc.spec)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func withCA(t v1alpha1.Talos) v1alpha1.Talos {
	t.ImageFactoryCA = "-----BEGIN CERTIFICATE-----"
	return t
}
