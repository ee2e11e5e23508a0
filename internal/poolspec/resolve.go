package poolspec

import (
	"cmp"
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/defaults"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/rules"
	"github.com/cozystack/function-worker-image/internal/talosimage"
)

// inputTalos is where a message names the Input's talos block.
var inputTalos = field.NewPath("Input talos")

// Layers are the values a pool takes, most specific first: the pool's own
// shape, then the Talos block and golden namespace it inherits, then the
// Input. The node pool passes its spec; the tenant cluster passes
// spec.nodePools[<name>] and its own talos block, so both modes resolve a
// pool by the same precedence.
type Layers struct {
	// Root is where the shape was written: spec for an XNodePool,
	// spec.nodePools[<name>] for a tenant cluster's pool.
	Root  *field.Path
	Shape v1alpha1.PoolShape
	// Talos is the block at TalosPath the pool inherits: the XNodePool's
	// spec.talos, or the tenant cluster's.
	Talos     v1alpha1.Talos
	TalosPath *field.Path
	// GoldenNamespace is the XNodePool's or the tenant cluster's.
	GoldenNamespace string
	Config          config.Config
}

// SourceType is where a pool's boot disk comes from.
type SourceType string

// Source types, as written to status.image.sourceType.
const (
	// SourceClone clones the golden DataVolume of the catalog.
	SourceClone SourceType = v1alpha1.SourceTypeClone
	// SourceHTTP imports the disk from the Image Factory per worker.
	SourceHTTP SourceType = v1alpha1.SourceTypeHTTP
)

// Setting is a resolved value and the field it came from, so that a message
// can point the user at the field to change.
type Setting struct {
	Value string
	Field string
}

// First is the first setting with a value. (cmp.Or would stop at a
// setting that names its field but has no value.)
func First(s ...Setting) Setting {
	for _, v := range s {
		if v.Value != "" {
			return v
		}
	}
	return Setting{}
}

func at(value string, path *field.Path) Setting { return Setting{Value: value, Field: path.String()} }

// Image is what a pool's osImage resolves to.
type Image struct {
	// Source is a function of the spec alone: it is part of the template
	// hash, so letting observed state (say, a golden appearing) flip it
	// would roll every worker of the pool.
	Source      SourceType
	SchematicID Setting
	Version     Setting
	// FactoryURL is validated on the HTTP path only: a clone renders no
	// HTTP source, so a stale factory URL must not block its golden
	// requirements. Installer validates it on both paths when the
	// installer's registry host is taken from it.
	FactoryURL Setting
	// Arch is the workers' architecture: spec.architecture, else the
	// Input's image.arch. The disk image is of it; on the clone path the
	// node pool picks the golden of it (nodepool goldenchoice.go).
	Arch Setting
	// URL is the disk image URL (HTTP path only).
	URL string
	// GoldenNamespace and GoldenName locate the golden (clone path only).
	GoldenNamespace string
	GoldenName      string
}

// GoldenRef is the golden's "<namespace>/<name>", as messages and
// annotations name it.
func (i Image) GoldenRef() string { return labels.GoldenRef(i.GoldenNamespace, i.GoldenName) }

// ResolveImage resolves the osImage union against the pool's Talos
// defaults. builtin and factory are selected by presence: builtin: {} clones
// the default golden, factory: {} (like an omitted osImage) imports the
// default image over HTTP. The values are used as they are: the caller has
// validated them where they were set (Resolve, the cluster's talos block,
// the Input by config).
func ResolveImage(l Layers) Image {
	os, t, tp, cfg := l.Shape.OSImage, l.Talos, l.TalosPath, l.Config
	img := Image{
		Source:      SourceHTTP,
		SchematicID: First(at(t.SchematicID, tp.Child("schematicID")), at(cfg.SchematicID, inputTalos.Child("schematicID"))),
		Version:     First(at(t.Version, tp.Child("version")), at(cfg.TalosVersion, inputTalos.Child("version"))),
		FactoryURL:  First(at(t.ImageFactoryURL, tp.Child("imageFactoryURL")), at(cfg.ImageFactoryURL, inputTalos.Child("imageFactoryURL"))),
		Arch:        First(at(l.Shape.Architecture, l.Root.Child("architecture")), Setting{Value: cfg.Arch, Field: "Input image.arch"}),
	}
	switch p := l.Root.Child("osImage"); {
	case os != nil && os.Builtin != nil:
		img.Source = SourceClone
		img.SchematicID = First(at(os.Builtin.SchematicID, p.Child("builtin", "schematicID")), img.SchematicID)
		img.Version = First(at(os.Builtin.Version, p.Child("builtin", "version")), img.Version)
	case os != nil && os.Factory != nil:
		img.SchematicID = First(at(os.Factory.SchematicID, p.Child("factory", "schematicID")), img.SchematicID)
		img.Version = First(at(os.Factory.Version, p.Child("factory", "version")), img.Version)
		img.FactoryURL = First(at(os.Factory.ImageFactoryURL, p.Child("factory", "imageFactoryURL")), img.FactoryURL)
	}
	if img.Source == SourceHTTP {
		img.URL = talosimage.DiskURL(img.FactoryURL.Value, img.SchematicID.Value, img.Version.Value, cfg.Platform, img.Arch.Value)
		return img
	}
	img.GoldenNamespace = cmp.Or(l.GoldenNamespace, cfg.GoldenNamespace)
	img.GoldenName = talosimage.GoldenName(img.SchematicID.Value, img.Version.Value)
	return img
}

// Installer decides where the pool's workers pull their installer from:
// the inherited talos.installerRepository, else the Input's, each verbatim
// (validated where they were set); else the Image Factory installer of the
// pool's resolved factory, for the platform of the disk image (Input
// image.platform) and the resolved version (DefaultInstaller). The factory
// is the image's on the clone path too: the golden was imported from the
// catalog's factory, which the pool cannot see without making its template
// depend on observed state, and a platform points its pools and catalog at
// the same factory.
func Installer(l Layers, img Image) (Setting, field.ErrorList) {
	repo := First(at(l.Talos.InstallerRepository, l.TalosPath.Child("installerRepository")), at(l.Config.InstallerRepository, inputTalos.Child("installerRepository")))
	if repo.Value == "" {
		v, errs := DefaultInstaller(field.NewPath(img.FactoryURL.Field), img.FactoryURL.Value, l.Config.Platform, img.Version.Value)
		if len(errs) > 0 {
			return Setting{}, errs
		}
		repo = Setting{Value: v, Field: img.FactoryURL.Field + " and Input image.platform"}
	}
	if errs := rules.InstallerName(field.NewPath(repo.Field), repo.Value, field.NewPath(img.SchematicID.Field), img.SchematicID.Value); len(errs) > 0 {
		return Setting{}, errs
	}
	return repo, nil
}

// Size is what a pool's shape sizes and how Cluster API runs it, its values
// parsed once, where they are validated, with the chart's defaults.
type Size struct {
	Replicas int32
	// InstanceType sizes the VMs: the pool's own, else the default one
	// unless the pool is sized by resources (then "").
	InstanceType string
	// Cores and Memory size the VM when no instance type is given.
	Cores  uint32
	Memory *resource.Quantity
	// DiskSize is the worker system disk size, the Input's by default.
	DiskSize resource.Quantity
	// Node is the size the kubelet reservations are computed from, pending
	// on an instance type.
	Node NodeSize
	// Reserved is the kubelet reservations on Node; the node pool computes
	// them again on the instance type's size while Node is pending.
	Reserved Reserved
	// Labels are the pool's labels by what puts them on the Node.
	Labels NodeLabels
	// Pod is the virt-launcher Pod's resources (VMTemplate).
	Pod PodResources
	// Scaling and HealthCheck are the pool's Cluster API knobs (CAPI).
	Scaling     Scaling
	HealthCheck HealthCheck
}

// Pool is a pool resolved from its layers.
type Pool struct {
	Size  Size
	Image Image
}

// Resolve checks the pool's shape at l.Root (Shape) and resolves it against
// its layers: every error at its own path, or the pool with its quantities
// parsed and its image resolved. The installer is left to Installer: both
// modes derive it only once everything else is valid.
func Resolve(l Layers) (Pool, field.ErrorList) {
	size, errs := shape(l.Root, l.Shape, l.Config)
	if len(errs) > 0 {
		return Pool{}, errs
	}
	img := ResolveImage(l)
	if img.Source == SourceHTTP {
		if errs := importDisk(l, size.DiskSize); len(errs) > 0 {
			return Pool{}, errs
		}
	}
	// A schematic inherited from talos.schematicID may be a mirror's
	// multi-segment path, which only the HTTP path can use; refuse it on
	// the clone path at the field it came from.
	if img.Source == SourceClone && img.SchematicID.Value != "" {
		if errs := rules.SchematicID(field.NewPath(img.SchematicID.Field), img.SchematicID.Value); len(errs) > 0 {
			return Pool{}, errs
		}
	}
	return Pool{Size: size, Image: img}, nil
}

// importDisk checks that the worker disk a pool imports over HTTP holds
// the Talos image, by the rule and the minimum the catalog holds its
// goldens to (rules.HoldsImage, the Input's storage.minimumImageStorage).
// On the clone path the golden's own size is the floor instead, a hold
// that waits for the golden (nodepool decide gate.go GateOnSize). The
// message names the field the size came from: the pool's diskSize, else
// the Input's default.
func importDisk(l Layers, disk resource.Quantity) field.ErrorList {
	minimum := l.Config.MinimumImageStorage
	if l.Shape.DiskSize == "" {
		return rules.HoldsImage(field.NewPath("Input storage", "diskSize"), l.Config.DiskSize.String(), disk, minimum,
			fmt.Sprintf("set the Input's storage.diskSize to at least %s, or set diskSize on the pool", minimum.String()))
	}
	fix := fmt.Sprintf("set diskSize to at least %s", minimum.String())
	if l.Config.DiskSize.Cmp(minimum) >= 0 {
		fix += fmt.Sprintf(", or omit it for the default %s", l.Config.DiskSize.String())
	}
	return rules.HoldsImage(l.Root.Child("diskSize"), string(l.Shape.DiskSize), disk, minimum, fix)
}

// InstanceTypeOf is the instance type a pool's VMs are sized by: its own,
// else the default one unless it is sized by resources (then "").
func InstanceTypeOf(s v1alpha1.PoolShape) string {
	r := s.Resources
	switch {
	case s.InstanceType != "":
		return s.InstanceType
	case r != nil && (r.CPU != "" || r.Memory != ""):
		return ""
	}
	return defaults.InstanceType
}

// shape checks a pool's shape at root: spec for an XNodePool,
// spec.nodePools[<name>] for a tenant cluster, keeping what it parses.
// Omitted fields pass; they take defaults (cfg's, internal/defaults) that
// are validated where they are set.
func shape(root *field.Path, s v1alpha1.PoolShape, cfg config.Config) (Size, field.ErrorList) {
	var errs field.ErrorList
	size := Size{Replicas: defaults.Replicas, InstanceType: InstanceTypeOf(s), DiskSize: cfg.DiskSize, Node: NodeSize{Pending: true}}
	if s.Replicas != nil {
		size.Replicas = *s.Replicas
		errs = append(errs, rules.Replicas(root.Child("replicas"), int64(*s.Replicas))...)
	}
	hasResources := s.Resources != nil && (s.Resources.CPU != "" || s.Resources.Memory != "")
	switch {
	case s.InstanceType != "" && hasResources:
		errs = append(errs, field.Invalid(root.Child("resources"), field.OmitValueType{}, fmt.Sprintf("cannot be set together with instanceType %q; KubeVirt takes the VM size from one of them, so remove one", rules.Quoted(s.InstanceType))))
	case s.InstanceType != "":
		errs = append(errs, rules.InstanceType(root.Child("instanceType"), s.InstanceType)...)
	case hasResources:
		if s.Resources.Memory == "" {
			errs = append(errs, field.Required(root.Child("resources", "memory"), "a VM without an instance type needs its memory, e.g. 4Gi"))
		}
		m, e := rules.Memory(root.Child("resources", "memory"), string(s.Resources.Memory))
		errs = append(errs, e...)
		c, e2 := rules.Cores(root.Child("resources", "cpu"), string(s.Resources.CPU))
		errs = append(errs, e2...)
		size.Memory, size.Cores = &m, c
		// The node's size for the reservations: a value that does not
		// parse counts as unknown, and is reported above.
		size.Node = NodeSize{From: root.Child("resources").String()}
		if len(e) == 0 {
			size.Node.MemoryBytes = m.Value()
		}
		if len(e2) == 0 {
			size.Node.MilliCPU = int64(c) * 1000
		}
	}
	if s.DiskSize != "" {
		d, e := rules.DiskSize(root.Child("diskSize"), string(s.DiskSize))
		size.DiskSize = d
		errs = append(errs, e...)
	}
	errs = append(errs, rules.StorageClass(root.Child("storageClass"), s.StorageClass)...)
	if a := s.Architecture; a != "" && a != "amd64" && a != "arm64" {
		errs = append(errs, field.NotSupported(root.Child("architecture"), a, []string{"amd64", "arm64"}))
	}
	var e field.ErrorList
	size.Pod, e = VMTemplate(root, s)
	errs = append(errs, e...)
	errs = append(errs, Bootstrap(root.Child("bootstrap"), s.Bootstrap)...)
	errs = append(errs, rules.TemplateRevision(root.Child("templateRevision"), s.TemplateRevision)...)
	errs = append(errs, OSImage(root.Child("osImage"), s.OSImage)...)
	size.Reserved, size.Labels, e = machine(root, s, size.Node, cfg.SyncMachineLabels)
	errs = append(errs, e...)
	size.Scaling, size.HealthCheck, e = CAPI(root, s, size.Replicas)
	return size, append(errs, e...)
}
