package tenantcluster

import (
	"fmt"
	"sort"

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
		errs = append(errs, rules.Namespace(specPath.Child("goldenNamespace"), spec.GoldenNamespace, "set the namespace that holds the golden DataVolumes, or omit it for the platform default")...)
	}
	// The class is copied into every pool that names none: refuse it once,
	// here, rather than in each XNodePool.
	errs = append(errs, rules.StorageClass(specPath.Child("storageClass"), spec.StorageClass)...)
	errs = append(errs, poolspec.Talos(specPath.Child("talos"), spec.Talos)...)
	for _, name := range sortedPoolNames(spec.NodePools) {
		errs = append(errs, validatePool(cluster, name, spec.NodePools[name])...)
	}
	if len(errs) == 0 {
		errs = append(errs, validateInstallers(spec, cfg)...)
	}
	return errs
}

// validateInstallers checks, for each pool whose installer no one names,
// that the installer the node pool would derive from its factory exists,
// naming the field the factory URL came from. Both modes derive it with
// poolspec.DefaultInstaller.
func validateInstallers(spec v1alpha1.TenantClusterSpec, cfg config.Config) field.ErrorList {
	if spec.Talos.InstallerRepository != "" || cfg.InstallerRepository != "" {
		return nil
	}
	var errs field.ErrorList
	for _, name := range sortedPoolNames(spec.NodePools) {
		factory, path := cfg.ImageFactoryURL, field.NewPath("Input talos", "imageFactoryURL")
		if spec.Talos.ImageFactoryURL != "" {
			factory, path = spec.Talos.ImageFactoryURL, specPath.Child("talos", "imageFactoryURL")
		}
		version := or(spec.Talos.Version, cfg.TalosVersion)
		if os := spec.NodePools[name].OSImage; os != nil && os.Factory != nil && os.Builtin == nil {
			if os.Factory.ImageFactoryURL != "" {
				factory, path = os.Factory.ImageFactoryURL, poolPath(name).Child("osImage", "factory", "imageFactoryURL")
			}
			version = or(os.Factory.Version, version)
		} else if os != nil && os.Builtin != nil {
			version = or(os.Builtin.Version, version)
		}
		if _, e := poolspec.DefaultInstaller(path, factory, cfg.Platform, version); len(e) > 0 {
			errs = append(errs, e...)
		}
	}
	return errs
}

// validatePool checks one pool's name and shape. The pool's name becomes
// part of the XNodePool's and the MachineDeployment's names.
func validatePool(cluster, name string, p v1alpha1.PoolShape) field.ErrorList {
	path := poolPath(name)
	errs := rules.ObjectNameLabel(path, name, "a pool name", "rename the pool: lowercase letters, digits and '-', starting and ending with a letter or digit, as its name becomes part of the XNodePool and MachineDeployment names")
	if len(errs) == 0 {
		errs = poolspec.DeploymentName(path, name, cluster, name)
	}
	return append(errs, poolspec.Shape(path, p)...)
}

// checkComposed runs the node pool's own validation on each XNodePool spec
// the plan composes. validate has already checked every value where the
// user wrote it, so a problem here is a rule the two modes disagree on: it
// is fatal rather than an XNodePool the node pool would refuse.
func checkComposed(p Plan) error {
	for _, pool := range p.Pools {
		if errs := poolspec.NodePool(specPath, pool.Spec, pool.Name); len(errs) > 0 {
			return fmt.Errorf("the XNodePool of pool %q would be refused by node-pool mode: %s; this is a bug in the function, please report it", pool.Name, rules.Message(errs))
		}
	}
	return nil
}

func sortedPoolNames(pools map[string]v1alpha1.PoolShape) []string {
	names := make([]string, 0, len(pools))
	for n := range pools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
