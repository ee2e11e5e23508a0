// Package catalog composes the golden DataVolumes of an XWorkerImageCatalog
// and the RBAC that lets tenant VMs clone them. It validates every entry
// before composing anything, refuses entries that drifted from their existing
// golden (a DataVolume spec is immutable), and keeps a removed entry's golden
// while any template still pins it.
package catalog

import (
	"errors"
	"fmt"

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
	URL         string
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
	URL, Storage, StorageClass bool
}

// resolveGoldens validates and resolves every entry, reporting every invalid
// one at once so the catalog is fixed in one pass.
func resolveGoldens(xrName string, spec v1alpha1.WorkerImageCatalogSpec, cfg config.Config) ([]Golden, error) {
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
	errs = append(errs, rules.StorageClass(root.Child("storageClass"), spec.StorageClass)...)
	imp, e := resolveImportSource(xrName, root, spec, cfg)
	errs = append(errs, e...)
	if len(errs) > 0 {
		return nil, catalogError(xrName, errs)
	}

	goldens := make([]Golden, 0, len(spec.Images))
	byName := map[string]int{}
	for i, e := range spec.Images {
		path := root.Child("images").Index(i)
		g := Golden{Index: i, Namespace: ns, SchematicID: e.SchematicID, Version: e.Version, Storage: defStorage, StorageText: defStorageText, StorageClass: spec.StorageClass, Import: imp}
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
		if e.StorageClass != "" {
			entry = append(entry, rules.StorageClass(path.Child("storageClass"), e.StorageClass)...)
			g.StorageClass, g.Explicit.StorageClass = e.StorageClass, true
		}
		if len(entry) > 0 {
			errs = append(errs, entry...)
			continue
		}
		g.Name = talosimage.GoldenName(e.SchematicID, e.Version)
		g.URL = talosimage.DiskURL(entryFactory, e.SchematicID, e.Version, cfg.Platform, cfg.Arch)
		if first, dup := byName[g.Name]; dup {
			errs = append(errs, field.Invalid(path, field.OmitValueType{}, fmt.Sprintf("resolves to the same golden DataVolume %q as spec.images[%d]; the name is keyed on (schematicID, version) alone, so a second entry would silently replace the first: drop the duplicate or give it a distinct (schematicID, version)", g.Name, first)))
			continue
		}
		byName[g.Name] = i
		goldens = append(goldens, g)
	}
	if len(errs) > 0 {
		return nil, catalogError(xrName, errs)
	}
	return goldens, nil
}

func catalogError(xrName string, errs field.ErrorList) error {
	return refused(xrName, errors.New(rules.Message(errs)))
}

// refused is the fatal error of the catalog xrName, naming it first.
func refused(xrName string, err error) error {
	return fmt.Errorf("%s %q: %w", v1alpha1.KindWorkerImageCatalog, xrName, err)
}
