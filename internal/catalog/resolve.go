// Package catalog composes the golden DataVolumes of an XWorkerImageCatalog
// and the RBAC that lets tenant VMs clone them. It validates every entry
// before composing anything, refuses entries that drifted from their existing
// golden (a DataVolume spec is immutable), and keeps a removed entry's golden
// while any template still pins it.
package catalog

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/config"
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
}

// resolveGoldens validates every catalog entry and resolves it against the
// catalog and Input defaults. It reports every invalid entry at once, in entry
// order, so an operator fixes the catalog in one pass.
func resolveGoldens(xrName string, spec v1alpha1.WorkerImageCatalogSpec, cfg config.Config) ([]Golden, error) {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	ns := spec.GoldenNamespace
	if ns == "" {
		ns = cfg.GoldenNamespace
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		add("spec.goldenNamespace %q is not a valid namespace name (%s); set it to an existing namespace such as %s", ns, errs[0], cfg.GoldenNamespace)
	}
	factory := spec.ImageFactoryURL
	if factory == "" {
		factory = cfg.ImageFactoryURL
	}
	if spec.ImageFactoryURL != "" {
		if err := talosimage.ValidateFactoryURL(spec.ImageFactoryURL); err != nil {
			add("spec.%s", err)
		}
	}
	defStorage, defStorageText := cfg.GoldenStorage, cfg.GoldenStorage.String()
	if spec.Storage != "" {
		q, err := parseStorage(spec.Storage, cfg)
		if err != nil {
			add("spec.storage %s", err)
		} else {
			defStorage, defStorageText = q, spec.Storage
		}
	}
	if spec.StorageClass != "" {
		if err := validateStorageClass(spec.StorageClass); err != nil {
			add("spec.storageClass %s", err)
		}
	}
	if len(problems) > 0 {
		return nil, catalogError(xrName, problems)
	}

	goldens := make([]Golden, 0, len(spec.Images))
	byName := map[string]int{}
	for i, e := range spec.Images {
		g := Golden{Index: i, Namespace: ns, SchematicID: e.SchematicID, Version: e.Version, Storage: defStorage, StorageText: defStorageText, StorageClass: spec.StorageClass}
		entryOK := true
		for _, err := range []error{talosimage.ValidateSchematicID(e.SchematicID), talosimage.ValidateVersion(e.Version)} {
			if err != nil {
				add("images[%d].%s", i, err)
				entryOK = false
			}
		}
		entryFactory := factory
		if e.ImageFactoryURL != "" {
			entryFactory = e.ImageFactoryURL
			if err := talosimage.ValidateFactoryURL(e.ImageFactoryURL); err != nil {
				add("images[%d].%s", i, err)
				entryOK = false
			}
		}
		if e.Storage != "" {
			q, err := parseStorage(e.Storage, cfg)
			if err != nil {
				add("images[%d].storage %s", i, err)
				entryOK = false
			}
			g.Storage, g.StorageText = q, e.Storage
		}
		if e.StorageClass != "" {
			if err := validateStorageClass(e.StorageClass); err != nil {
				add("images[%d].storageClass %s", i, err)
				entryOK = false
			}
			g.StorageClass = e.StorageClass
		}
		if !entryOK {
			continue
		}
		g.Name = talosimage.GoldenName(e.SchematicID, e.Version)
		g.URL = talosimage.DiskURL(entryFactory, e.SchematicID, e.Version, cfg.Platform, cfg.Arch)
		if first, dup := byName[g.Name]; dup {
			add("images[%d] resolves to the same golden DataVolume %q as images[%d]; the name is keyed on (schematicID, version) alone, so a second entry would silently replace the first: drop the duplicate or give it a distinct (schematicID, version)", i, g.Name, first)
			continue
		}
		byName[g.Name] = i
		goldens = append(goldens, g)
	}
	if len(problems) > 0 {
		return nil, catalogError(xrName, problems)
	}
	return goldens, nil
}

// maximumImageStorage bounds a golden's size: far above any Talos image, far
// below the sizes (around 1e21 bytes) that apimachinery renders as another
// quantity ("1000000000000000000000" canonicalises to "1").
var maximumImageStorage = resource.MustParse("1Ti")

func parseStorage(v string, cfg config.Config) (resource.Quantity, error) {
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return resource.Quantity{}, fmt.Errorf("%q is not a quantity; write a size such as %s", v, cfg.GoldenStorage.String())
	}
	if q.Cmp(maximumImageStorage) > 0 {
		return resource.Quantity{}, fmt.Errorf("%q is larger than %s; a golden holds one Talos disk image (about 1.2 GiB), and sizes this large do not survive the API server's quantity canonicalisation: write a size such as %s", v, maximumImageStorage.String(), cfg.GoldenStorage.String())
	}
	if q.Cmp(cfg.MinimumImageStorage) < 0 {
		return resource.Quantity{}, fmt.Errorf("%q is smaller than the Talos disk image (%s), so the import would fail; raise it to at least %s", v, cfg.MinimumImageStorage.String(), cfg.MinimumImageStorage.String())
	}
	return q, nil
}

func validateStorageClass(v string) error {
	if errs := validation.IsDNS1123Subdomain(v); len(errs) > 0 {
		return fmt.Errorf("%q is not a valid StorageClass name (%s); name an existing StorageClass or leave it empty for the cluster default", v, errs[0])
	}
	return nil
}

func catalogError(xrName string, problems []string) error {
	return fmt.Errorf("XWorkerImageCatalog %q: %s", xrName, strings.Join(problems, "; "))
}
