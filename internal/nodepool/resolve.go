package nodepool

import (
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/defaults"
	"github.com/cozystack/function-worker-image/internal/matrix"
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
// defaults. builtin and factory are selected by presence: builtin: {} clones
// the default golden, factory: {} (like an omitted osImage) imports the
// default image over HTTP. Every value it resolves to has been validated
// where it was set: the spec by readPool (poolspec), the Input by config.
func resolveOSImage(spec v1alpha1.NodePoolSpec, cfg config.Config) image {
	os := spec.OSImage
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
	if img.Source == SourceHTTP {
		img.URL = talosimage.DiskURL(img.FactoryURL.Value, img.SchematicID.Value, img.Version.Value, cfg.Platform, cfg.Arch)
		return img
	}
	img.GoldenNamespace = first(setting{spec.GoldenNamespace, "spec.goldenNamespace"}, setting{cfg.GoldenNamespace, "Input goldenNamespace"}).Value
	img.GoldenName = talosimage.GoldenName(img.SchematicID.Value, img.Version.Value)
	return img
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
	// KubernetesVersion is spec.version, a minor.
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
	// VM is the worker VM details (vmtemplate.go).
	VM vmTemplate
	// GPUs are passed through to the VM (machineconfig.go).
	GPUs []v1alpha1.GPU
	// Scaling and HealthCheck are the pool's Cluster API knobs
	// (autoscaling.go, healthcheck.go).
	Scaling     scaling
	HealthCheck healthCheck
}

// instanceTypeOf is the instance type a pool's VMs are sized by: its own,
// else the default one unless it is sized by resources (then "").
func instanceTypeOf(spec v1alpha1.PoolShape) string {
	r := spec.Resources
	switch {
	case spec.InstanceType != "":
		return spec.InstanceType
	case r != nil && (r.CPU != "" || r.Memory != ""):
		return ""
	}
	return defaults.InstanceType
}

// resolveShape applies defaults to the pool's shape, which readPool has
// validated (poolspec), and parses its quantities.
func resolveShape(spec v1alpha1.NodePoolSpec, cfg config.Config) shape {
	s := shape{
		Replicas:          defaults.Replicas,
		InstanceType:      instanceTypeOf(spec.PoolShape),
		DiskSize:          cfg.DiskSize,
		DeclaredClass:     spec.StorageClass,
		KubernetesVersion: first(setting{spec.Version, "spec.version"}, setting{cfg.KubernetesVersion, "Input talos.kubernetesVersion"}),
		TalosVersion:      first(setting{spec.Talos.Version, "spec.talos.version"}, setting{cfg.TalosVersion, "Input talos.version"}),
		Mirrors:           spec.Talos.RegistryMirrors,
		VM:                resolveVMTemplate(spec, cfg),
		GPUs:              spec.GPUs,
	}
	if spec.Replicas != nil {
		s.Replicas = *spec.Replicas
	}
	if r := spec.Resources; s.InstanceType == "" {
		m, _ := rules.Memory(nil, r.Memory)
		s.Memory = &m
		s.Cores, _ = rules.Cores(nil, r.CPU)
	}
	if spec.DiskSize != "" {
		s.DiskSize, _ = rules.DiskSize(nil, spec.DiskSize)
	}
	// Cluster API needs a full semantic version: the minor's shipped patch
	// release (matrix.Release); the Talos/Kubernetes pairing is checked on
	// the minor.
	s.MachineVersion = matrix.Release(cfg, s.KubernetesVersion.Value)
	s.Scaling, s.HealthCheck = resolveScaling(spec.PoolShape, s.Replicas), resolveHealthCheck(spec.HealthCheck)
	return s
}
