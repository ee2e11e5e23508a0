package nodepool

import (
	"fmt"
	"maps"
	"regexp"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/defaults"
	"github.com/cozystack/function-worker-image/internal/rules"
	"github.com/cozystack/function-worker-image/internal/talosimage"
)

// SourceType is where a pool's boot disk comes from.
type SourceType string

// Source types, as written to status.image.sourceType.
const (
	// SourceClone clones the golden DataVolume of the catalog.
	SourceClone SourceType = v1alpha1.SourceTypeClone
	// SourceHTTP imports the disk from the Image Factory per worker.
	SourceHTTP SourceType = v1alpha1.SourceTypeHTTP
)

// sourceTypeOf is the pool's disk source. It is a function of the spec alone:
// the source is part of the template hash, so letting observed state (say, a
// golden appearing) flip it would roll every worker of the pool.
func sourceTypeOf(os *v1alpha1.OSImage) SourceType {
	if os != nil && os.Builtin != nil {
		return SourceClone
	}
	return SourceHTTP
}

// setting is a resolved value and the field it came from, so that a message
// can point the user at the field to change.
type setting struct {
	Value string
	Field string
}

// first returns the first setting with a value.
func first(s ...setting) setting {
	for _, v := range s {
		if v.Value != "" {
			return v
		}
	}
	return setting{}
}

// image is what a pool's osImage resolves to.
type image struct {
	Source      SourceType
	SchematicID setting
	Version     setting
	// FactoryURL is validated here on the HTTP path only: a clone renders no
	// HTTP source, so a stale factory URL must not block its golden
	// requirements. resolveInstallerRepository validates it on both paths
	// when the installer's registry host is taken from it.
	FactoryURL setting
	// URL is the disk image URL (HTTP path only).
	URL string
	// GoldenNamespace and GoldenName locate the golden (clone path only).
	GoldenNamespace string
	GoldenName      string
}

// resolveOSImage resolves the osImage union against the pool's Talos
// defaults and validates the result. builtin and factory are selected by
// presence: builtin: {} clones the default golden, factory: {} (like an
// omitted osImage) imports the default image over HTTP.
func resolveOSImage(p pool, spec v1alpha1.NodePoolSpec, cfg config.Config) (image, error) {
	os := spec.OSImage
	if os != nil && os.Builtin != nil && os.Factory != nil {
		return image{}, fmt.Errorf("node pool %q: spec.osImage sets both builtin and factory; set only one: builtin clones the golden image of the catalog, factory imports over HTTP from the Image Factory", p.Ref())
	}
	talos := spec.Talos
	img := image{
		Source:      sourceTypeOf(os),
		SchematicID: first(setting{talos.SchematicID, "spec.talos.schematicID"}, setting{cfg.SchematicID, "Input talos.schematicID"}),
		Version:     first(setting{talos.Version, "spec.talos.version"}, setting{cfg.TalosVersion, "Input talos.version"}),
		FactoryURL:  first(setting{talos.ImageFactoryURL, "spec.talos.imageFactoryURL"}, setting{cfg.ImageFactoryURL, "Input talos.imageFactoryURL"}),
	}
	switch {
	case os != nil && os.Builtin != nil:
		img.SchematicID = first(setting{os.Builtin.SchematicID, "spec.osImage.builtin.schematicID"}, img.SchematicID)
		img.Version = first(setting{os.Builtin.Version, "spec.osImage.builtin.version"}, img.Version)
	case os != nil && os.Factory != nil:
		img.SchematicID = first(setting{os.Factory.SchematicID, "spec.osImage.factory.schematicID"}, img.SchematicID)
		img.Version = first(setting{os.Factory.Version, "spec.osImage.factory.version"}, img.Version)
		img.FactoryURL = first(setting{os.Factory.ImageFactoryURL, "spec.osImage.factory.imageFactoryURL"}, img.FactoryURL)
	}

	if err := talosimage.ValidateSchematicID(img.SchematicID.Value); err != nil {
		return image{}, fieldError(p, img.SchematicID.Field, err)
	}
	if err := talosimage.ValidateVersion(img.Version.Value); err != nil {
		return image{}, fieldError(p, img.Version.Field, err)
	}
	if img.Source == SourceHTTP {
		if err := talosimage.ValidateFactoryURL(img.FactoryURL.Value); err != nil {
			return image{}, fieldError(p, img.FactoryURL.Field, err)
		}
		img.URL = talosimage.DiskURL(img.FactoryURL.Value, img.SchematicID.Value, img.Version.Value, cfg.Platform, cfg.Arch)
		return img, nil
	}

	ns := first(setting{spec.GoldenNamespace, "spec.goldenNamespace"}, setting{cfg.GoldenNamespace, "Input goldenNamespace"})
	if errs := validation.IsDNS1123Label(ns.Value); len(errs) > 0 {
		return image{}, fmt.Errorf("node pool %q: %s %q is not a namespace name: %s; set it to the namespace of the golden images (default %s)", p.Ref(), ns.Field, ns.Value, errs[0], defaults.GoldenNamespace)
	}
	img.GoldenNamespace = ns.Value
	img.GoldenName = talosimage.GoldenName(img.SchematicID.Value, img.Version.Value)
	return img, nil
}

// shape is everything else a pool's spec resolves to.
type shape struct {
	Replicas     int32
	InstanceType string
	// Cores and Memory size the VM when no instance type is given.
	Cores  uint32
	Memory *resource.Quantity
	// DiskSize is the worker system disk size.
	DiskSize resource.Quantity
	// DeclaredClass is spec.storageClass; empty means "resolve it".
	DeclaredClass string
	// KubernetesVersion is spec.version as given (a minor, or a release).
	KubernetesVersion setting
	// MachineVersion is the Kubernetes release the Machines run.
	MachineVersion string
	// TalosVersion is the pool's default Talos version (spec.talos.version,
	// else the Input's), checked against the matrix even when osImage
	// overrides it.
	TalosVersion setting
	// InstallerRepository is where the workers pull their installer from;
	// resolveInstallerRepository fills it in, as it depends on the image.
	InstallerRepository setting
	Mirrors             map[string]v1alpha1.RegistryMirror
}

var (
	mirrorHostPattern     = regexp.MustCompile(`^(\*|[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?(:[0-9]+)?)$`)
	mirrorEndpointPattern = regexp.MustCompile(`^https?://[^\s"'\x60$<>{}|\\]+$`)
)

// resolveShape applies defaults to the pool's shape and validates it.
func resolveShape(p pool, spec v1alpha1.NodePoolSpec, cfg config.Config) (shape, error) {
	s := shape{
		Replicas:          defaults.Replicas,
		InstanceType:      spec.InstanceType,
		DiskSize:          cfg.DiskSize,
		DeclaredClass:     spec.StorageClass,
		KubernetesVersion: first(setting{spec.Version, "spec.version"}, setting{cfg.KubernetesVersion, "Input talos.kubernetesVersion"}),
		TalosVersion:      first(setting{spec.Talos.Version, "spec.talos.version"}, setting{cfg.TalosVersion, "Input talos.version"}),
		Mirrors:           spec.Talos.RegistryMirrors,
	}
	if spec.Replicas != nil {
		// readPool has checked the value as written; this checks it again
		// for callers that build the spec themselves.
		if err := rules.CheckReplicas("spec.replicas", *spec.Replicas); err != nil {
			return shape{}, poolError(p, err)
		}
		s.Replicas = *spec.Replicas
	}

	r := spec.Resources
	hasResources := r != nil && (r.CPU != "" || r.Memory != "")
	switch {
	case s.InstanceType != "" && hasResources:
		return shape{}, fmt.Errorf("node pool %q: spec.instanceType %q and spec.resources are both set; KubeVirt takes the VM size from one of them, so remove one", p.Ref(), s.InstanceType)
	case s.InstanceType != "":
		if errs := validation.IsDNS1123Subdomain(s.InstanceType); len(errs) > 0 {
			return shape{}, fmt.Errorf("node pool %q: spec.instanceType %q is not a VirtualMachineClusterInstancetype name: %s", p.Ref(), s.InstanceType, errs[0])
		}
	case hasResources:
		if r.Memory == "" {
			return shape{}, fmt.Errorf("node pool %q: spec.resources.memory is empty; a VM without an instance type needs its memory, e.g. 4Gi", p.Ref())
		}
		m, err := rules.ParseMemory("spec.resources.memory", r.Memory)
		if err != nil {
			return shape{}, poolError(p, err)
		}
		s.Memory = &m
		if s.Cores, err = rules.ParseCores("spec.resources.cpu", r.CPU); err != nil {
			return shape{}, poolError(p, err)
		}
	default:
		s.InstanceType = defaults.InstanceType
	}

	if spec.DiskSize != "" {
		q, err := rules.ParseDiskSize("spec.diskSize", spec.DiskSize)
		if err != nil {
			return shape{}, poolError(p, err)
		}
		s.DiskSize = q
	}
	if err := rules.CheckStorageClass("spec.storageClass", s.DeclaredClass); err != nil {
		return shape{}, poolError(p, err)
	}

	if rules.KubernetesVersion(field.NewPath(s.KubernetesVersion.Field), s.KubernetesVersion.Value) != nil {
		return shape{}, fmt.Errorf("node pool %q: %s %q is not a Kubernetes version such as v1.35 or v1.35.2", p.Ref(), s.KubernetesVersion.Field, s.KubernetesVersion.Value)
	}
	// Cluster API needs a full semantic version; a minor means its first
	// release, and the Talos/Kubernetes pairing is checked on the minor.
	s.MachineVersion = s.KubernetesVersion.Value
	if !rules.IsKubernetesRelease(s.KubernetesVersion.Value) {
		s.MachineVersion += ".0"
	}

	for _, host := range slices.Sorted(maps.Keys(s.Mirrors)) {
		if len(host) > 253 || !mirrorHostPattern.MatchString(host) {
			return shape{}, fmt.Errorf("node pool %q: spec.talos.registryMirrors key %q is not a registry host[:port] or *", p.Ref(), host)
		}
		eps := s.Mirrors[host].Endpoints
		if len(eps) == 0 {
			return shape{}, fmt.Errorf("node pool %q: spec.talos.registryMirrors[%q].endpoints is empty; list at least one http(s) mirror endpoint", p.Ref(), host)
		}
		for i, ep := range eps {
			if len(ep) > talosimage.MaxURLLength || !mirrorEndpointPattern.MatchString(ep) {
				return shape{}, fmt.Errorf("node pool %q: spec.talos.registryMirrors[%q].endpoints[%d] %q is not a plain http(s) URL", p.Ref(), host, i, ep)
			}
		}
	}
	return s, nil
}

// poolError prefixes err, which names the field and value, with the pool.
func poolError(p pool, err error) error {
	return fmt.Errorf("node pool %q: %w", p.Ref(), err)
}

func fieldError(p pool, field string, err error) error {
	return fmt.Errorf("node pool %q: %s: %w", p.Ref(), field, err)
}
