package schema

import (
	"bytes"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the generated files (legacy variant, docs/platform.md reference) instead of comparing")

// TestLegacyVariantIsUpToDate checks that the legacy variant's XRDs and
// Compositions are exactly what LegacyFiles derives from the modern ones.
func TestLegacyVariantIsUpToDate(t *testing.T) {
	want, err := LegacyFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range slices.Sorted(maps.Keys(want)) {
		path := filepath.Join(root, f)
		if *update {
			if err := os.WriteFile(path, want[f], 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v (run go test ./test/schema -update)", f, err)
			continue
		}
		if !bytes.Equal(want[f], got) {
			t.Errorf("%s is stale; run go test ./test/schema -update\n-want, +got:\n%s", f, cmp.Diff(string(want[f]), string(got)))
		}
	}
	// Nothing else but crossplane.yaml may live in the legacy directory.
	files, err := YAMLFiles(root, legacyDir, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, ok := want[f]; !ok && f != legacyDir+"/crossplane.yaml" {
			t.Errorf("%s is not derived from %s: remove it or add its source there", f, configurationDir)
		}
	}
}
