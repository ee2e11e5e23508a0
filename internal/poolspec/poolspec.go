// Package poolspec is the one parser of a node pool: Resolve (NodePool for
// an XNodePool) checks a pool's fields and resolves them against the layers
// it inherits, so the node pool resolves its spec with it and the tenant
// cluster each pool it composes, at the pool's path there, before it
// composes anything: a value the pool would refuse is refused where the
// user wrote it, and both modes read the osImage and installer precedence
// from one place.
package poolspec

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/rules"
	"github.com/cozystack/function-worker-image/internal/talosimage"
)

// osImageFields are the keys each osImage member takes.
var osImageFields = map[string][]string{
	"builtin": {"schematicID", "version"},
	"factory": {"schematicID", "version", "imageFactoryURL"},
}

// AsWritten checks what must be read before the shape is decoded: the
// replica count as the JSON number it is (4294967297 would otherwise wrap
// through int32), and the keys of osImage (a typo such as buitin would
// otherwise silently select the HTTP path and roll the pool onto another
// disk source). raw is the shape as unstructured JSON, at root. The paths of
// values it reports are returned too, for the decoder to skip.
func AsWritten(root *field.Path, raw map[string]any) (field.ErrorList, []string) {
	var skip []string
	errs := rules.Replicas(root.Child("replicas"), raw["replicas"])
	if len(errs) > 0 {
		skip = append(skip, root.Child("replicas").String())
	}
	bounds, boundsSkip := replicaBoundsAsWritten(root, raw)
	errs, skip = append(errs, bounds...), append(skip, boundsSkip...)
	os, ok := raw["osImage"].(map[string]any)
	if !ok {
		return errs, skip // absent, null, or of a type the decoder reports
	}
	for _, k := range slices.Sorted(maps.Keys(os)) {
		path := root.Child("osImage", k)
		fields, known := osImageFields[k]
		if !known {
			errs = append(errs, field.NotSupported(path, k, slices.Sorted(maps.Keys(osImageFields))))
			skip = append(skip, path.String())
			continue
		}
		member, _ := os[k].(map[string]any)
		for _, f := range slices.Sorted(maps.Keys(member)) {
			if !slices.Contains(fields, f) {
				errs = append(errs, field.NotSupported(path.Child(f), f, fields))
			}
		}
	}
	return errs, skip
}

// OSImage checks the osImage union at path: at most one member, and each
// value it names.
func OSImage(path *field.Path, os *v1alpha1.OSImage) field.ErrorList {
	if os == nil {
		return nil
	}
	var errs field.ErrorList
	if os.Builtin != nil && os.Factory != nil {
		errs = append(errs, field.Invalid(path, field.OmitValueType{}, "sets both builtin and factory; set only one: builtin clones the golden image of the catalog, factory imports over HTTP from the Image Factory"))
	}
	if b := os.Builtin; b != nil {
		if b.SchematicID != "" {
			errs = append(errs, rules.SchematicID(path.Child("builtin", "schematicID"), b.SchematicID)...)
		}
		errs = append(errs, version(path.Child("builtin", "version"), b.Version)...)
	}
	if f := os.Factory; f != nil {
		if f.SchematicID != "" {
			errs = append(errs, rules.SchematicPath(path.Child("factory", "schematicID"), f.SchematicID)...)
		}
		errs = append(errs, version(path.Child("factory", "version"), f.Version)...)
		if f.ImageFactoryURL != "" {
			errs = append(errs, rules.FactoryURL(path.Child("factory", "imageFactoryURL"), f.ImageFactoryURL)...)
		}
	}
	return errs
}

func version(path *field.Path, v string) field.ErrorList {
	if v == "" {
		return nil
	}
	return rules.TalosVersion(path, v)
}

// Talos checks a talos block at path, the tenant cluster's or the pool's.
func Talos(path *field.Path, t v1alpha1.Talos) field.ErrorList {
	var errs field.ErrorList
	if t.Version != "" {
		errs = append(errs, rules.TalosVersion(path.Child("version"), t.Version)...)
	}
	// A path names an image only osImage.factory can import; a pool that
	// clones with it is refused where it resolves (Resolve).
	if t.SchematicID != "" {
		errs = append(errs, rules.SchematicPath(path.Child("schematicID"), t.SchematicID)...)
	}
	if t.ImageFactoryURL != "" {
		errs = append(errs, rules.FactoryURL(path.Child("imageFactoryURL"), t.ImageFactoryURL)...)
	}
	if t.InstallerRepository != "" {
		errs = append(errs, rules.InstallerRepository(path.Child("installerRepository"), t.InstallerRepository)...)
	}
	_, e := rules.CABundle(path.Child("imageFactoryCA"), t.ImageFactoryCA)
	errs = append(errs, e...)
	for _, host := range slices.Sorted(maps.Keys(t.RegistryMirrors)) {
		mp := path.Child("registryMirrors").Key(host)
		errs = append(errs, rules.MirrorHost(mp, host)...)
		eps := t.RegistryMirrors[host].Endpoints
		if len(eps) == 0 {
			errs = append(errs, field.Required(mp.Child("endpoints"), "list at least one http(s) mirror endpoint"))
		}
		for i, ep := range eps {
			errs = append(errs, rules.MirrorEndpoint(mp.Child("endpoints").Index(i), ep)...)
		}
	}
	return errs
}

// maxLabel is the longest DNS-1123 label, and so the longest
// MachineDeployment name.
const maxLabel = validation.DNS1123LabelMaxLength

// DeploymentName checks "<cluster>-<pool>", the name of the pool's
// XNodePool (when a tenant cluster composes it) and of its
// MachineDeployment, which is also the value of the MachineDeployment's
// cluster.x-k8s.io/deployment-name label, so it must be a DNS-1123 label.
// The name is built from two fields, each named at the path the user wrote
// it (clusterPath, poolPath): a part that is no label by itself is refused
// at its own field; a name too long at the longer part, the one to
// shorten, with what the 63 characters leave each field beside the other.
func DeploymentName(clusterPath *field.Path, cluster string, poolPath *field.Path, pool string) field.ErrorList {
	name := labels.PoolName(cluster, pool)
	if len(validation.IsDNS1123Label(name)) == 0 {
		return nil
	}
	for _, part := range []struct {
		path  *field.Path
		value string
	}{{clusterPath, cluster}, {poolPath, pool}} {
		if errs := validation.IsDNS1123Label(part.value); len(errs) > 0 && len(part.value) <= maxLabel {
			return field.ErrorList{field.Invalid(part.path, rules.Quoted(part.value), fmt.Sprintf("cannot be part of the MachineDeployment name <cluster>-<pool> (also a label value), which is a DNS-1123 label (%s); use lowercase letters, digits and '-', starting and ending with a letter or digit", errs[0]))}
		}
	}
	at, value, other, otherValue := poolPath, pool, clusterPath, cluster
	if len(cluster) > len(pool) {
		at, value, other, otherValue = clusterPath, cluster, poolPath, pool
	}
	room, otherRoom := maxLabel-1-len(otherValue), maxLabel-1-len(value)
	var fix string
	switch {
	case room < 1:
		fix = fmt.Sprintf("shorten both, to at most %d characters together", maxLabel-1)
	case otherRoom < 1:
		fix = fmt.Sprintf("shorten %s to at most %d characters", at, room)
	default:
		fix = fmt.Sprintf("shorten %s to at most %d characters, or %s to at most %d", at, room, other, otherRoom)
	}
	return field.ErrorList{field.Invalid(at, rules.Quoted(value), fmt.Sprintf("is %d characters and, with %s %q (%d characters), makes the MachineDeployment name <cluster>-<pool> (also a label value) %d characters long, more than the %d a DNS-1123 label holds; %s", len(value), other, rules.Quoted(otherValue), len(otherValue), len(name), maxLabel, fix))}
}

// NodePool resolves an XNodePool's spec at root (spec) against the Input:
// its shape (Resolve), its Talos block, its Kubernetes version and golden
// namespace, and that its cluster and pool names make a MachineDeployment
// name. pool is the pool's resolved name (spec.poolName, else from the
// composite's name).
func NodePool(root *field.Path, spec v1alpha1.NodePoolSpec, pool string, cfg config.Config) (Pool, field.ErrorList) {
	p, errs := Resolve(NodePoolLayers(root, spec, cfg))
	errs = append(errs, nodePool(root, spec, pool, cfg)...)
	if len(errs) > 0 {
		return Pool{}, errs
	}
	return p, nil
}

// NodePoolLayers are the layers of an XNodePool's spec at root.
func NodePoolLayers(root *field.Path, spec v1alpha1.NodePoolSpec, cfg config.Config) Layers {
	return Layers{Root: root, Shape: spec.PoolShape, Talos: spec.Talos, TalosPath: root.Child("talos"), GoldenNamespace: spec.GoldenNamespace, Config: cfg}
}

// nodePool checks what an XNodePool's spec holds beside its shape.
func nodePool(root *field.Path, spec v1alpha1.NodePoolSpec, pool string, cfg config.Config) field.ErrorList {
	var errs field.ErrorList
	talos := spec.Talos
	if spec.OSImage != nil && spec.OSImage.Builtin != nil {
		// A clone renders no HTTP source, so the pool's factory URL is
		// checked only where it is used: by resolveInstallerRepository,
		// when the default installer is derived from it (README, "Decisions,
		// in order", 1: the factory URL on the HTTP path). A stale URL must not block a
		// clone pool whose installer is named explicitly.
		talos.ImageFactoryURL = ""
	}
	errs = append(errs, Talos(root.Child("talos"), talos)...)
	if spec.Version != "" {
		errs = append(errs, rules.KubernetesMinor(root.Child("version"), spec.Version)...)
	}
	if spec.GoldenNamespace != "" {
		errs = append(errs, GoldenNamespace(root.Child("goldenNamespace"), spec.GoldenNamespace, cfg)...)
	}
	if spec.ClusterName == "" {
		return append(errs, field.Required(root.Child("clusterName"), "set it to the Cluster API cluster this pool joins"))
	}
	// A pool without poolName takes it from its composite's name.
	poolPath := field.NewPath("metadata", "name")
	if spec.PoolName != "" {
		poolPath = root.Child("poolName")
	}
	return append(errs, DeploymentName(root.Child("clusterName"), spec.ClusterName, poolPath, pool)...)
}

// DefaultInstaller derives the installer repository a pool upgrades with
// when neither the pool, its cluster nor the Input names one: the Image
// Factory installer of the pool's factory (talosimage
// DefaultInstallerRepository says why the flavour matters). A URL the
// grammar accepts can still make no repository, an IP literal such as
// [::1] cannot start an image reference, so the tenant cluster checks
// each pool with this before composing it, and the node pool derives its
// installer with it. path is where factoryURL was set.
func DefaultInstaller(path *field.Path, factoryURL, platform, version string) (string, field.ErrorList) {
	if errs := rules.FactoryURL(path, factoryURL); len(errs) > 0 {
		return "", errs
	}
	repo, err := talosimage.DefaultInstallerRepository(factoryURL, platform, version)
	if err == nil && len(rules.InstallerRepository(path, repo)) == 0 {
		return repo, nil
	}
	return "", field.ErrorList{field.Invalid(path, rules.Quoted(factoryURL), fmt.Sprintf("makes no installer repository (%q is not an image repository); the default installer is <factory host>/%s-installer, so give the factory a DNS name, or set talos.installerRepository", rules.Quoted(repo), platform))}
}

// GoldenNamespace checks a composite's goldenNamespace: a namespace name,
// and one the platform keeps goldens in (config.Config.GoldenNamespaces).
// Any other, such as another tenant's namespace, is refused: the pool
// would read that namespace's golden-named objects and its Usages would
// hold their deletion.
func GoldenNamespace(path *field.Path, ns string, cfg config.Config) field.ErrorList {
	if errs := rules.Namespace(path, ns, "set the namespace of the golden images, or omit it for the platform default"); len(errs) > 0 {
		return errs
	}
	allowed := cfg.GoldenNamespaces()
	if slices.Contains(allowed, ns) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, rules.Quoted(ns), fmt.Sprintf("is not a namespace the platform keeps golden images in (%s); omit it for %s, or ask the platform to add it to the function Input's goldenNamespaces", strings.Join(allowed, ", "), cfg.GoldenNamespace))}
}
