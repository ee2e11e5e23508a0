package defaults_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/defaults"
	"github.com/cozystack/function-worker-image/internal/talosimage"
)

// shippedCatalog is the catalog example operators start from.
var shippedCatalog = filepath.Join("..", "..", "example", "catalog", "xr.yaml")

// TestShippedCatalogHoldsTheDefaultImage guards the out-of-the-box path: a
// pool with osImage.builtin: {} clones the golden of the default
// (schematicID, version), so the catalog that ships must compose that golden.
func TestShippedCatalogHoldsTheDefaultImage(t *testing.T) {
	raw, err := os.ReadFile(shippedCatalog)
	if err != nil {
		t.Fatalf("cannot read the shipped catalog example: %v", err)
	}
	var catalogs []v1alpha1.WorkerImageCatalogSpec
	for i, doc := range bytes.Split(raw, []byte("\n---")) {
		var obj struct {
			Kind string                          `json:"kind"`
			Spec v1alpha1.WorkerImageCatalogSpec `json:"spec"`
		}
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			t.Fatalf("%s: document %d is not valid YAML: %v", shippedCatalog, i, err)
		}
		if obj.Kind == v1alpha1.KindWorkerImageCatalog {
			catalogs = append(catalogs, obj.Spec)
		}
	}
	if len(catalogs) == 0 {
		t.Fatalf("%s holds no %s", shippedCatalog, v1alpha1.KindWorkerImageCatalog)
	}
	for _, c := range catalogs {
		for _, img := range c.Images {
			if img.SchematicID == defaults.TalosSchematicID && img.Version == defaults.TalosVersion {
				return
			}
		}
	}
	t.Errorf("%s has no spec.images entry for the default Talos image (schematicID %s, version %s): a pool with osImage.builtin: {} would wait for a golden nobody composes; add the entry, or change internal/defaults and the example together",
		shippedCatalog, defaults.TalosSchematicID, defaults.TalosVersion)
}

// TestEmptyInputTakesTheDefaults guards the one source of truth: the modes
// read their Talos defaults from config.Config, which must take them from
// this package when the Input says nothing.
func TestEmptyInputTakesTheDefaults(t *testing.T) {
	cfg, err := config.FromInput(&v1beta1.Input{}, time.Minute)
	if err != nil {
		t.Fatalf("config.FromInput(empty Input): %v", err)
	}
	// InstallerRepository stays empty: each pool derives its installer from
	// its factory, platform and version.
	type talos struct{ Version, SchematicID, ImageFactoryURL, InstallerRepository, KubernetesVersion, GoldenNamespace string }
	want := talos{defaults.TalosVersion, defaults.TalosSchematicID, defaults.ImageFactoryURL, "", defaults.KubernetesVersion, defaults.GoldenNamespace}
	got := talos{cfg.TalosVersion, cfg.SchematicID, cfg.ImageFactoryURL, cfg.InstallerRepository, cfg.KubernetesVersion, cfg.GoldenNamespace}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("An empty Input must yield the defaults of internal/defaults.\n-want, +got:\n%s", diff)
	}
}

// TestDefaultInstallerIsTheOpenstackInstaller pins the installer the
// defaults add up to, which README.md and docs/platform.md name: the
// factory's openstack installer, not its plain (metal) one.
func TestDefaultInstallerIsTheOpenstackInstaller(t *testing.T) {
	got, err := talosimage.DefaultInstallerRepository(defaults.ImageFactoryURL, defaults.ImagePlatform, defaults.TalosVersion)
	if err != nil {
		t.Fatalf("DefaultInstallerRepository(the defaults): %v", err)
	}
	if diff := cmp.Diff("factory.talos.dev/openstack-installer", got); diff != "" {
		t.Errorf("The default openstack disk must upgrade with the openstack installer; change README.md and docs/platform.md with it.\n-want, +got:\n%s", diff)
	}
}
