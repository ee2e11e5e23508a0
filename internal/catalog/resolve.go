// Package catalog composes the golden DataVolumes of an XWorkerImageCatalog
// and the RBAC that lets tenant VMs clone them. It validates every entry
// before composing anything, refuses entries that drifted from their existing
// golden (a DataVolume spec is immutable), and keeps a removed entry's golden
// while any template still pins it.
package catalog

import (
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/rules"
	"github.com/cozystack/function-worker-image/internal/talosimage"
)

// Golden is one golden image, fully resolved: what its DataVolume holds.
type Golden struct {
	// Index of the catalog entry it came from; -1 for a golden that is no
	// longer in the catalog.
	Index       int
	Namespace   string
	Name        string
	SchematicID string
	Version     string
	// Arch is the architecture of its disk image: the catalog's list's, or
	// for a golden that exists, the one its source URL names.
	Arch string
	URL  string
	// Storage is the requested size; StorageText is how the user wrote it,
	// which is what the DataVolume carries.
	Storage      resource.Quantity
	StorageText  string
	StorageClass string
	// Import is what else the import carries: the CA, the credentials and
	// the checksum.
	Import importSource
	// Explicit says which of the values above the entry wrote itself, as
	// opposed to taking the catalog's or the Input's default: only those
	// can contradict an existing golden (settle.go).
	Explicit explicit
}

// importSource is what a golden's source.http carries besides its URL.
type importSource struct {
	// CertConfigMap names the catalog's CA ConfigMap (ca.go), empty
	// without a CA.
	CertConfigMap      string
	SecretRef          string
	SecretExtraHeaders []string
	Checksum           string
}

// explicit marks the values a catalog entry wrote itself.
type explicit struct {
	URL, Storage bool
	// Arch is true when the catalog or the entry lists architectures.
	Arch bool
}

// resolveGoldens validates and resolves every entry, reporting every invalid
// one at once so the catalog is fixed in one pass.
// made is what each observed golden was made with (madeGoldens): a new
// architecture or class takes a name no golden of another holds.
func resolveGoldens(xrName string, spec v1alpha1.WorkerImageCatalogSpec, cfg config.Config, made madeGoldens) ([]Golden, error) {
	root := field.NewPath("spec")
	var errs field.ErrorList

	ns := spec.GoldenNamespace
	if ns == "" {
		ns = cfg.GoldenNamespace
	}
	errs = append(errs, rules.Namespace(root.Child("goldenNamespace"), ns, "set it to an existing namespace such as "+cfg.GoldenNamespace)...)
	factory := spec.ImageFactoryURL
	if factory == "" {
		factory = cfg.ImageFactoryURL
	}
	if spec.ImageFactoryURL != "" {
		errs = append(errs, rules.FactoryURL(root.Child("imageFactoryURL"), spec.ImageFactoryURL)...)
	}
	defStorage, defStorageText := cfg.GoldenStorage, cfg.GoldenStorage.String()
	if spec.Storage != "" {
		q, e := rules.GoldenStorage(root.Child("storage"), string(spec.Storage), cfg.MinimumImageStorage, cfg.GoldenStorage.String())
		errs = append(errs, e...)
		if len(e) == 0 {
			defStorage, defStorageText = q, string(spec.Storage)
		}
	}
	defClasses, e := storageClasses(root, spec.StorageClass, spec.StorageClasses)
	errs = append(errs, e...)
	imp, e := resolveImportSource(xrName, root, spec, cfg)
	errs = append(errs, e...)
	errs = append(errs, architectures(root.Child("architectures"), spec.Architectures)...)
	defArchs := spec.Architectures
	if len(defArchs) == 0 {
		defArchs = []string{cfg.Arch}
	}
	if len(errs) > 0 {
		return nil, catalogError(xrName, errs)
	}

	goldens := make([]Golden, 0, len(spec.Images))
	byName := map[string]int{}
	for i, e := range spec.Images {
		path := root.Child("images").Index(i)
		g := Golden{Index: i, Namespace: ns, SchematicID: e.SchematicID, Version: e.Version, Storage: defStorage, StorageText: defStorageText, Import: imp}
		g.Import.Checksum = e.Checksum
		entry := rules.SchematicID(path.Child("schematicID"), e.SchematicID)
		entry = append(entry, rules.TalosVersion(path.Child("version"), e.Version)...)
		entry = append(entry, rules.Checksum(path.Child("checksum"), e.Checksum)...)
		entryFactory := factory
		if e.ImageFactoryURL != "" {
			entryFactory = e.ImageFactoryURL
			g.Explicit.URL = true
			entry = append(entry, rules.FactoryURL(path.Child("imageFactoryURL"), e.ImageFactoryURL)...)
		}
		if e.Storage != "" {
			q, ee := rules.GoldenStorage(path.Child("storage"), string(e.Storage), cfg.MinimumImageStorage, cfg.GoldenStorage.String())
			entry = append(entry, ee...)
			g.Storage, g.StorageText, g.Explicit.Storage = q, string(e.Storage), true
		}
		classes := defClasses
		if e.StorageClass != "" || len(e.StorageClasses) > 0 {
			var ee field.ErrorList
			classes, ee = storageClasses(path, e.StorageClass, e.StorageClasses)
			entry = append(entry, ee...)
		}
		archs := defArchs
		g.Explicit.Arch = len(spec.Architectures) > 0 || len(e.Architectures) > 0
		if len(e.Architectures) > 0 {
			archs = e.Architectures
			entry = append(entry, architectures(path.Child("architectures"), e.Architectures)...)
		}
		if len(entry) > 0 {
			errs = append(errs, entry...)
			continue
		}
		names := made.names(e.SchematicID, e.Version, archs, classes)
		for _, arch := range archs {
			for _, class := range classes {
				a := g
				a.Arch, a.StorageClass, a.Name = arch, class, names[variant{arch, class}]
				a.URL = talosimage.DiskURL(entryFactory, e.SchematicID, e.Version, cfg.Platform, arch)
				if first, dup := byName[a.Name]; dup {
					// Names are keyed on (schematicID, version, architecture,
					// class), which the schema keeps unique; a hash collision
					// of two class names is all that can land here.
					errs = append(errs, field.Invalid(path, field.OmitValueType{}, fmt.Sprintf("resolves to the same golden DataVolume %q as spec.images[%d]: one entry per (schematicID, version) keeps every golden of that image, and a second would silently replace the first: drop the duplicate, listing its classes in the first's storageClasses and its architectures in its architectures", a.Name, first)))
					continue
				}
				byName[a.Name] = i
				goldens = append(goldens, a)
			}
		}
	}
	if len(errs) > 0 {
		return nil, catalogError(xrName, errs)
	}
	return goldens, nil
}

// storageClasses is the classes of an entry or of the catalog, from
// storageClass or storageClasses at path: one class, "" for the default
// class, when neither is set. Setting both is refused, should the schema
// not have: which one was meant cannot be told.
func storageClasses(path *field.Path, class string, classes []string) ([]string, field.ErrorList) {
	if len(classes) == 0 {
		return []string{class}, rules.StorageClass(path.Child("storageClass"), class)
	}
	var errs field.ErrorList
	if class != "" {
		errs = append(errs, field.Invalid(path.Child("storageClass"), class, fmt.Sprintf("set storageClass or storageClasses, not both: list %q in %s instead", class, path.Child("storageClasses"))))
	}
	errs = append(errs, rules.NameList(path.Child("storageClasses"), classes, rules.StorageClass,
		"name a StorageClass: the default class is the one storageClass left empty means, and it cannot be listed")...)
	return classes, errs
}

// architectures refuses an architecture a golden cannot be imported for,
// should the schema not have.
func architectures(path *field.Path, archs []string) field.ErrorList {
	var errs field.ErrorList
	for i, a := range archs {
		if !slices.Contains(supportedArchitectures, a) {
			errs = append(errs, field.NotSupported(path.Index(i), a, supportedArchitectures))
		}
	}
	return errs
}

// supportedArchitectures are the architectures of Talos disk images a
// golden can hold, as the XRD's enum lists them.
var supportedArchitectures = []string{"amd64", "arm64"}

// madeGoldens is what each observed golden of the catalog was made with,
// by name: the architecture its source URL names and the StorageClass its
// spec names, each "" when not known (a golden the function cannot read, a
// URL of another form, a golden left to the default class).
type madeGoldens map[string]made

// made is what one golden was made with.
type made struct{ Arch, Class string }

// madeGoldensOf reads madeGoldens from the observed goldens.
func madeGoldensOf(obs observedState) madeGoldens {
	out := madeGoldens{}
	for name, dv := range obs.Live {
		l := liveSpecOf(dv)
		out[name] = made{Arch: talosimage.ArchitectureOf(l.URL), Class: l.StorageClass}
	}
	for name := range obs.unreadableGoldens() {
		out[name] = made{}
	}
	return out
}

// variant is one golden of an image: its architecture and class.
type variant struct{ Arch, Class string }

// names names an entry's goldens, one per architecture and class. Names
// are pinned by the pools that clone them, so none may change:
//
//   - on the entry's first class (home), the goldens are named as before
//     classes (talosimage.GoldenNames): the unsuffixed name stays with the
//     architecture its golden was made with, an architecture's own golden
//     keeps its suffixed name, and an unsuffixed golden of an unknown
//     architecture counts as none, so the first listed keeps it;
//   - a golden of one of those names that was made on another class keeps
//     its name for that class, if listed: a golden is never moved, and an
//     existing golden left to the default class (no class in its spec)
//     counts as the home class's, as it did before classes;
//   - every other golden is talosimage.GoldenClassName(arch, class), which
//     hashes the class.
func (m madeGoldens) names(schematicID, version string, archs, classes []string) map[variant]string {
	base := talosimage.GoldenName(schematicID, version)
	suffixed := map[string]bool{}
	for _, a := range archs {
		if _, ok := m[base+"-"+a]; ok {
			suffixed[a] = true
		}
	}
	home := classes[0]
	byArch := talosimage.GoldenNames(schematicID, version, archs, m[base].Arch, suffixed)
	out := make(map[variant]string, len(archs)*len(classes))
	for _, a := range archs {
		n := byArch[a]
		got, exists := m[n]
		for _, c := range classes {
			switch {
			case !exists && c == home:
				out[variant{a, c}] = n
			case exists && (got.Class == c || got.Class == "" && c == home):
				out[variant{a, c}] = n
			default:
				out[variant{a, c}] = talosimage.GoldenClassName(schematicID, version, a, c)
			}
		}
	}
	return out
}

func catalogError(xrName string, errs field.ErrorList) error {
	return refused(xrName, errors.New(rules.Message(errs)))
}

// refused is the fatal error of the catalog xrName, naming it first.
func refused(xrName string, err error) error {
	return fmt.Errorf("%s %q: %w", v1alpha1.KindWorkerImageCatalog, xrName, err)
}
