package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// Problems collects what is wrong with a package; empty means it passed.
type Problems []string

func (p *Problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// ident is "<apiVersion> <kind> <name>" of an object.
func ident(o map[string]any) string {
	name, _ := get(o, "metadata", "name").(string)
	return fmt.Sprintf("%v %v %s", o["apiVersion"], o["kind"], name)
}

func get(o any, path ...string) any {
	for _, p := range path {
		m, ok := o.(map[string]any)
		if !ok {
			return nil
		}
		o = m[p]
	}
	return o
}

// CheckFunction checks a built Function package: the runtime contract of its
// image (entrypoint, user, port, a static /function on the base layer) and
// its package.yaml (the Function metadata and the Input CRD from inputDir,
// nothing else).
func CheckFunction(p *Package, name, inputDir string) Problems {
	var probs Problems
	c := p.Config.Config
	if !reflect.DeepEqual(c.Entrypoint, []string{Entrypoint}) {
		probs.add("runtime entrypoint is %q, want [%q]", c.Entrypoint, Entrypoint)
	}
	if c.User != User {
		probs.add("runtime user is %q, want %q (nonroot)", c.User, User)
	}
	if _, ok := c.ExposedPorts[ExposedPort]; !ok {
		probs.add("runtime image does not expose %s", ExposedPort)
	}
	if p.Config.OS != "linux" {
		probs.add("runtime OS is %q, want linux", p.Config.OS)
	}
	if len(p.Layers) != 3 || p.PackageLayer != 2 {
		probs.add("want 3 layers (base, function, package.yaml), got %d with package.yaml at %d", len(p.Layers), p.PackageLayer)
	} else {
		probs = append(probs, checkRuntimeLayers(p)...)
	}

	want := sourceObjects(inputDir, &probs)
	var metas int
	for _, o := range p.Objects {
		switch {
		case o["apiVersion"] == "meta.pkg.crossplane.io/v1" && o["kind"] == "Function":
			metas++
			if n := get(o, "metadata", "name"); n != name {
				probs.add("Function metadata name is %v, want %s", n, name)
			}
			if caps, _ := get(o, "spec", "capabilities").([]any); !contains(caps, "composition") {
				probs.add("Function metadata lacks spec.capabilities [composition]")
			}
		case o["kind"] == "CustomResourceDefinition":
			w, ok := want[ident(o)]
			if !ok {
				probs.add("package.yaml holds %s, which is not in %s", ident(o), inputDir)
				continue
			}
			delete(want, ident(o))
			if !reflect.DeepEqual(get(w, "spec"), get(o, "spec")) {
				probs.add("package.yaml's %s differs from %s", ident(o), inputDir)
			}
			if g := get(o, "spec", "group"); g != "workerimage.fn.crossplane.io" {
				probs.add("the Input CRD's group is %v, want workerimage.fn.crossplane.io", g)
			}
		default:
			probs.add("unexpected object in a Function package: %s", ident(o))
		}
	}
	if metas != 1 {
		probs.add("want exactly one Function metadata object, got %d", metas)
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		probs.add("package.yaml lacks %s from %s", k, inputDir)
	}
	return probs
}

func checkRuntimeLayers(p *Package) Problems {
	var probs Problems
	base, err := LayerFiles(p.Layers[0])
	if err != nil {
		probs.add("base layer: %v", err)
		return probs
	}
	if !strings.Contains(string(base["etc/passwd"].Data), "nonroot:x:65532:65532:") {
		probs.add("base layer: /etc/passwd has no nonroot user 65532")
	}
	if !strings.Contains(string(base["etc/group"].Data), "nonroot:x:65532:") {
		probs.add("base layer: /etc/group has no nonroot group 65532")
	}
	if tmp, ok := base["tmp"]; !ok || !tmp.Header.FileInfo().IsDir() || tmp.Header.Mode&0o1777 != 0o1777 {
		probs.add("base layer: /tmp is missing or not a sticky world-writable directory")
	}
	fn, err := LayerFiles(p.Layers[1])
	if err != nil {
		probs.add("function layer: %v", err)
		return probs
	}
	bin, ok := fn["function"]
	switch {
	case !ok || len(fn) != 1:
		probs.add("function layer must hold only /function, holds %s", strings.Join(slices.Sorted(maps.Keys(fn)), ", "))
	case bin.Header.Mode&0o111 == 0:
		probs.add("/function is not executable (mode %o)", bin.Header.Mode)
	default:
		if err := checkStatic(bin.Data); err != nil {
			probs.add("/function: %v", err)
		}
		if f, err := elf.NewFile(bytes.NewReader(bin.Data)); err == nil {
			if arch := goarch(f.Machine); arch != p.Config.Architecture {
				probs.add("/function is built for %s but the image says %s", arch, p.Config.Architecture)
			}
			_ = f.Close()
		}
	}
	return probs
}

func goarch(m elf.Machine) string {
	switch m {
	case elf.EM_X86_64:
		return "amd64"
	case elf.EM_AARCH64:
		return "arm64"
	default:
		return m.String()
	}
}

// CheckConfiguration checks a built Configuration package: its metadata
// depends on the function package, and its objects are exactly the XRDs and
// Compositions of sourceDir, each Composition calling the function under the
// name Crossplane gives the dependency.
func CheckConfiguration(p *Package, name, sourceDir, functionPackage string) Problems {
	var probs Problems
	if len(p.Layers) != 1 {
		probs.add("want a single package.yaml layer, got %d layers", len(p.Layers))
	}
	if len(p.Config.Config.Entrypoint) > 0 {
		probs.add("a Configuration embeds no runtime, but the image has entrypoint %q", p.Config.Config.Entrypoint)
	}
	want := sourceObjects(sourceDir, &probs)
	fnName := dependencyName(functionPackage)
	xrKinds, compKinds, defaultComps, compNames := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	var metas int
	for _, o := range p.Objects {
		if o["apiVersion"] == "meta.pkg.crossplane.io/v1" && o["kind"] == "Configuration" {
			metas++
			if n := get(o, "metadata", "name"); n != name {
				probs.add("Configuration metadata name is %v, want %s", n, name)
			}
			deps, _ := get(o, "spec", "dependsOn").([]any)
			found := false
			for _, d := range deps {
				if get(d, "kind") == "Function" && get(d, "package") == functionPackage {
					found = true
				}
			}
			if !found {
				probs.add("Configuration does not depend on the Function package %s", functionPackage)
			}
			continue
		}
		w, ok := want[ident(o)]
		if !ok {
			probs.add("package.yaml holds %s, which is not in %s", ident(o), sourceDir)
			continue
		}
		delete(want, ident(o))
		if !reflect.DeepEqual(get(w, "spec"), get(o, "spec")) {
			probs.add("package.yaml's %s differs from its source in %s", ident(o), sourceDir)
		}
		switch o["kind"] {
		case "CompositeResourceDefinition":
			k, _ := get(o, "spec", "names", "kind").(string)
			xrKinds[k] = true
			if d, ok := get(o, "spec", "defaultCompositionRef", "name").(string); ok {
				defaultComps[d] = true
			}
		case "Composition":
			n, _ := get(o, "metadata", "name").(string)
			compNames[n] = true
			k, _ := get(o, "spec", "compositeTypeRef", "kind").(string)
			compKinds[k] = true
			steps, _ := get(o, "spec", "pipeline").([]any)
			for _, s := range steps {
				if r := get(s, "functionRef", "name"); r != fnName {
					probs.add("Composition %s calls function %v; Crossplane names the dependency %s %q", n, r, functionPackage, fnName)
				}
			}
		}
	}
	if metas != 1 {
		probs.add("want exactly one Configuration metadata object, got %d", metas)
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		probs.add("package.yaml lacks %s from %s", k, sourceDir)
	}
	for _, k := range slices.Sorted(maps.Keys(xrKinds)) {
		if !compKinds[k] {
			probs.add("no Composition composes %s", k)
		}
	}
	for _, d := range slices.Sorted(maps.Keys(defaultComps)) {
		if !compNames[d] {
			probs.add("an XRD's defaultCompositionRef %s is not in the package", d)
		}
	}
	return probs
}

// dependencyName is the name Crossplane's package manager gives a dependency
// it installs: the repository path without registry and tag, as a DNS label
// (crossplane v2.2.0 internal/controller/pkg/resolver and xpkg.ToDNSLabel).
func dependencyName(pkg string) string {
	ref, err := name.ParseReference(pkg)
	if err != nil {
		return ""
	}
	return toDNSLabel(ref.Context().RepositoryStr())
}

// toDNSLabel follows xpkg.ToDNSLabel of crossplane v2.2.0.
func toDNSLabel(s string) string {
	var cut strings.Builder
	for i := range len(s) {
		b := s[i]
		if ('a' <= b && b <= 'z') || ('0' <= b && b <= '9') {
			cut.WriteByte(b)
		}
		if (b == '.' || b == '/' || b == ':' || b == '-') && (i != 0 && i != 62 && i != len(s)-1) {
			cut.WriteByte('-')
		}
		if i == 62 {
			break
		}
	}
	return strings.Trim(cut.String(), "-")
}

func contains(xs []any, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// sourceObjects reads the objects a package is built from: every YAML file of
// dir except the package metadata (crossplane.yaml), keyed by identity.
func sourceObjects(dir string, probs *Problems) map[string]map[string]any {
	want := map[string]map[string]any{}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	for _, f := range files {
		if filepath.Base(f) == "crossplane.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			probs.add("%v", err)
			continue
		}
		objs, err := decodeStream(data)
		if err != nil {
			probs.add("%s: %v", f, err)
		}
		for _, o := range objs {
			want[ident(o)] = o
		}
	}
	return want
}
