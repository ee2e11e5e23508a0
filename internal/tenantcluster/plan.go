package tenantcluster

import (
	"cmp"
	"maps"
	"slices"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/config"
)

// Plan is what a tenant cluster resolves to before anything is emitted: the
// cluster's defaults with the Input's filled in, and every pool's XNodePool
// spec with the cluster's filled in. It is plain data, so tests compare it.
type Plan struct {
	// Cluster is the XTenantCluster's name, the clusterName of every pool.
	Cluster string
	// Version is the Kubernetes minor.
	Version string
	// Talos holds the cluster's Talos defaults, resolved.
	Talos v1alpha1.Talos
	// Pools in name order.
	Pools []Pool
}

// Pool is one node pool of the cluster.
type Pool struct {
	// Name is the pool's key in spec.nodePools.
	Name string
	// Resource is the composition-resource-name of its XNodePool.
	Resource resource.Name
	// Spec is the composed XNodePool's spec.
	Spec v1alpha1.NodePoolSpec
}

// plan resolves spec: a field the pool leaves out takes the cluster's value,
// and one the cluster leaves out takes the Input's, which in turn defaults
// from internal/defaults. Resolving here, once, means each XNodePool carries
// explicit values and a change to the function's defaults shows up as a diff
// of the composed pools rather than as a silent change inside them.
//
// installerRepository is the exception: it is passed on only when the cluster
// or the Input names one. Its default is the Image Factory installer of the
// pool's own factory (osImage.factory.imageFactoryURL included), platform and
// version, which the node pool mode derives where it resolves osImage;
// writing one repository here would pin every pool to it.
func plan(cfg config.Config, cluster string, spec v1alpha1.TenantClusterSpec) Plan {
	p := Plan{
		Cluster: cluster,
		Version: cmp.Or(spec.Version, cfg.KubernetesVersion),
		Talos: v1alpha1.Talos{
			Version:             cmp.Or(spec.Talos.Version, cfg.TalosVersion),
			SchematicID:         cmp.Or(spec.Talos.SchematicID, cfg.SchematicID),
			ImageFactoryURL:     cmp.Or(spec.Talos.ImageFactoryURL, cfg.ImageFactoryURL),
			InstallerRepository: cmp.Or(spec.Talos.InstallerRepository, cfg.InstallerRepository),
			// The tenant cluster's own CA only: each pool falls back to its
			// Input's, so the platform's stays out of every pool's spec.
			ImageFactoryCA:  spec.Talos.ImageFactoryCA,
			RegistryMirrors: spec.Talos.RegistryMirrors,
		},
	}
	goldenNamespace := cmp.Or(spec.GoldenNamespace, cfg.GoldenNamespace)
	for _, name := range slices.Sorted(maps.Keys(spec.NodePools)) {
		shape := spec.NodePools[name]
		shape.StorageClass = cmp.Or(shape.StorageClass, spec.StorageClass)
		// osImage is passed on as written: the node pool mode resolves it,
		// so the rule "omitted means HTTP" lives in one place.
		p.Pools = append(p.Pools, Pool{
			Name:     name,
			Resource: resourceName(name),
			Spec: v1alpha1.NodePoolSpec{
				PoolShape:       shape,
				ClusterName:     cluster,
				PoolName:        name,
				Version:         p.Version,
				Talos:           p.Talos,
				GoldenNamespace: goldenNamespace,
			},
		})
	}
	return p
}

// resourcePrefix starts the composition-resource-name of every XNodePool.
const resourcePrefix = "nodepool-"

// resourceName is the composition-resource-name of a pool's XNodePool. It is
// derived from the pool's name alone, so that adding, changing or removing
// another pool never renames it.
func resourceName(pool string) resource.Name {
	return resource.Name(resourcePrefix + pool)
}
