package tenantcluster

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/poolspec"
	"github.com/cozystack/function-worker-image/internal/rules"
)

// validate returns every problem of spec, cluster fields first and then
// pools in name order, so a user fixes them in one pass and the fatal
// message is the same on every call. cluster is the composite's name; the
// pools' names are built from it. Each rule is the one the node pool runs
// on the same value (internal/rules, internal/poolspec), at the path the
// user wrote it here.
func validate(cluster string, spec v1alpha1.TenantClusterSpec, cfg config.Config) field.ErrorList {
	var errs field.ErrorList
	// spec.version is a minor, never a patch: Talos picks the patch of the
	// Kubernetes it installs.
	if spec.Version != "" {
		errs = append(errs, rules.KubernetesMinor(specPath.Child("version"), spec.Version)...)
	}
	if spec.GoldenNamespace != "" {
		errs = append(errs, poolspec.GoldenNamespace(specPath.Child("goldenNamespace"), spec.GoldenNamespace, cfg)...)
	}
	// The class is copied into every pool that names none: refuse it once,
	// here, rather than in each XNodePool.
	errs = append(errs, rules.StorageClass(specPath.Child("storageClass"), spec.StorageClass)...)
	errs = append(errs, poolspec.Talos(specPath.Child("talos"), spec.Talos)...)
	names := slices.Sorted(maps.Keys(spec.NodePools))
	for _, name := range names {
		errs = append(errs, validatePool(cluster, name, poolLayers(spec, name, cfg))...)
	}
	if len(errs) > 0 {
		return errs
	}
	// The installer each pool derives when no one names one must exist;
	// the node pool derives it the same way (poolspec.Installer), but only
	// once it composes.
	for _, name := range names {
		l := poolLayers(spec, name, cfg)
		_, e := poolspec.Installer(l, poolspec.ResolveImage(l))
		errs = append(errs, e...)
	}
	return errs
}

// poolLayers are what pool name of spec inherits: the cluster's talos block
// and golden namespace, then the Input.
func poolLayers(spec v1alpha1.TenantClusterSpec, name string, cfg config.Config) poolspec.Layers {
	return poolspec.Layers{
		Root: poolPath(name), Shape: spec.NodePools[name],
		Talos: spec.Talos, TalosPath: specPath.Child("talos"),
		GoldenNamespace: spec.GoldenNamespace, Config: cfg,
	}
}

// validatePool checks one pool's name and shape. The pool's name becomes
// part of the XNodePool's and the MachineDeployment's names.
func validatePool(cluster, name string, l poolspec.Layers) field.ErrorList {
	errs := rules.ObjectNameLabel(l.Root, name, "a pool name", "rename the pool: lowercase letters, digits and '-', starting and ending with a letter or digit, as its name becomes part of the XNodePool and MachineDeployment names")
	if len(errs) == 0 {
		errs = poolspec.DeploymentName(field.NewPath("metadata", "name"), cluster, l.Root, name)
	}
	_, e := poolspec.Resolve(l)
	return append(errs, e...)
}
