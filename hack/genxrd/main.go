// Command genxrd writes the Crossplane XRDs of package/configuration from the
// Go types of apis/v1alpha1, so that the API has one source. It runs
// controller-gen's CRD generator on the types and rewrites each CRD as the
// CompositeResourceDefinition Crossplane v2 expects. make generate runs it
// (through go generate in apis/v1alpha1); a test fails when the committed
// XRDs are not what it writes.
package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
)

func main() {
	paths := flag.String("paths", "./apis/v1alpha1", "Go package pattern holding the composite types")
	out := flag.String("out", "package/configuration", "directory to write the xrd-<kind>.yaml files into")
	flag.Parse()
	if err := run(*paths, *out); err != nil {
		fmt.Fprintln(os.Stderr, "genxrd:", err)
		os.Exit(1)
	}
}

func run(paths, out string) error {
	files, err := Generate(paths)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := os.WriteFile(filepath.Join(out, name), files[name], 0o644); err != nil {
			return fmt.Errorf("cannot write %s: %w", name, err)
		}
	}
	return nil
}
