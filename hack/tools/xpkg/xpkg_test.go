package main

import (
	"archive/tar"
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// fakeELF is a minimal x86-64 ELF executable header, with a PT_INTERP program
// header when dynamic is set.
func fakeELF(dynamic bool) []byte {
	var b bytes.Buffer
	b.Write([]byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	phnum := uint16(0)
	if dynamic {
		phnum = 1
	}
	le := binary.LittleEndian
	_ = binary.Write(&b, le, uint16(2))  // e_type EXEC
	_ = binary.Write(&b, le, uint16(62)) // e_machine x86-64
	_ = binary.Write(&b, le, uint32(1))  // e_version
	_ = binary.Write(&b, le, uint64(0))  // e_entry
	_ = binary.Write(&b, le, uint64(64)) // e_phoff
	_ = binary.Write(&b, le, uint64(0))  // e_shoff
	_ = binary.Write(&b, le, uint32(0))  // e_flags
	_ = binary.Write(&b, le, uint16(64)) // e_ehsize
	_ = binary.Write(&b, le, uint16(56)) // e_phentsize
	_ = binary.Write(&b, le, phnum)
	_ = binary.Write(&b, le, uint16(64)) // e_shentsize
	_ = binary.Write(&b, le, uint16(0))  // e_shnum
	_ = binary.Write(&b, le, uint16(0))  // e_shstrndx
	if dynamic {
		_ = binary.Write(&b, le, uint32(3)) // PT_INTERP
		b.Write(make([]byte, 52))
	}
	return b.Bytes()
}

// asPackage appends a package.yaml layer the way crossplane xpkg build does
// and writes the result as a tarball, returning its path.
func asPackage(t *testing.T, img v1.Image, stream string) string {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	_ = tw.WriteHeader(&tar.Header{Name: streamFile, Mode: 0o644, Size: int64(len(stream))})
	_, _ = tw.Write([]byte(stream))
	_ = tw.Close()
	data := buf.Bytes()
	l, err := tarball.LayerFromReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	d, _ := l.Digest()
	if img, err = mutate.AppendLayers(img, l); err != nil {
		t.Fatal(err)
	}
	cf, _ := img.ConfigFile()
	cf = cf.DeepCopy()
	if cf.Config.Labels == nil {
		cf.Config.Labels = map[string]string{}
	}
	cf.Config.Labels[xpkgLabelPrefix+d.String()] = xpkgBase
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "pkg.xpkg")
	if err := tarball.WriteToFile(path, name.MustParseReference("test:pkg").(name.Tag), img); err != nil {
		t.Fatal(err)
	}
	return path
}

const inputCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: inputs.workerimage.fn.crossplane.io
spec:
  group: workerimage.fn.crossplane.io
  names: {kind: Input, plural: inputs}
  scope: Namespaced
`

const functionMeta = `apiVersion: meta.pkg.crossplane.io/v1
kind: Function
metadata:
  name: function-worker-image
spec:
  capabilities: [composition]
`

func TestRuntimeImageIsDeterministic(t *testing.T) {
	a, err := RuntimeImage(fakeELF(false), "amd64")
	if err != nil {
		t.Fatal(err)
	}
	b, err := RuntimeImage(fakeELF(false), "amd64")
	if err != nil {
		t.Fatal(err)
	}
	da, _ := a.Digest()
	db, _ := b.Digest()
	if da != db {
		t.Errorf("the same binary gave two image digests, %s and %s: every timestamp and ordering must be fixed", da, db)
	}
}

func TestRuntimeImageRefusesADynamicBinary(t *testing.T) {
	_, err := RuntimeImage(fakeELF(true), "amd64")
	if err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Errorf("a dynamically linked binary cannot run on a base without libc; want an error naming CGO_ENABLED=0, got %v", err)
	}
}

func TestCheckFunction(t *testing.T) {
	inputDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(inputDir, "input.yaml"), []byte(inputCRD), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason string
		mutate func(*v1.ConfigFile)
		stream string
		want   []string
	}{
		"BuiltPackagePasses": {
			reason: "The runtime image from RuntimeImage plus the Function metadata and Input CRD is what make packages builds.",
			stream: functionMeta + "---\n" + inputCRD,
		},
		"RootUserIsCaught": {
			reason: "The function must run as nonroot.",
			mutate: func(c *v1.ConfigFile) { c.Config.User = "0" },
			stream: functionMeta + "---\n" + inputCRD,
			want:   []string{`runtime user is "0", want "65532:65532" (nonroot)`},
		},
		"WrongEntrypointIsCaught": {
			reason: "Crossplane's function runtime runs the image's entrypoint.",
			mutate: func(c *v1.ConfigFile) { c.Config.Entrypoint = []string{"/bin/function"} },
			stream: functionMeta + "---\n" + inputCRD,
			want:   []string{`runtime entrypoint is ["/bin/function"], want ["/function"]`},
		},
		"MissingInputCRDIsCaught": {
			reason: "The package documents the Input schema.",
			stream: functionMeta,
			want:   []string{"package.yaml lacks apiextensions.k8s.io/v1 CustomResourceDefinition inputs.workerimage.fn.crossplane.io from " + inputDir},
		},
		"StrayObjectIsCaught": {
			reason: "A Function package carries only its metadata and CRDs.",
			stream: functionMeta + "---\n" + inputCRD + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
			want:   []string{"unexpected object in a Function package: v1 ConfigMap x"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			img, err := RuntimeImage(fakeELF(false), "amd64")
			if err != nil {
				t.Fatal(err)
			}
			if tc.mutate != nil {
				cf, _ := img.ConfigFile()
				cf = cf.DeepCopy()
				tc.mutate(cf)
				img, _ = mutate.ConfigFile(img, cf)
			}
			p, err := ReadPackage(asPackage(t, img, tc.stream))
			if err != nil {
				t.Fatal(err)
			}
			got := []string(CheckFunction(p, "function-worker-image", inputDir))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestDependencyName(t *testing.T) {
	cases := map[string]struct {
		reason string
		pkg    string
		want   string
	}{
		"RegistryAndTagAreDropped": {"Crossplane names a dependency after its repository path.", "ghcr.io/cozystack/function-worker-image:v0.1.0", "cozystack-function-worker-image"},
		"NoTag":                    {"The Configuration's dependsOn names the repository without a tag.", "ghcr.io/cozystack/function-worker-image", "cozystack-function-worker-image"},
		"DefaultRegistry":          {"xpkg.crossplane.io gives the same name.", "xpkg.crossplane.io/cozystack/function-worker-image", "cozystack-function-worker-image"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := dependencyName(tc.pkg); got != tc.want {
				t.Errorf("%s\ndependencyName(%q) = %q, want %q", tc.reason, tc.pkg, got, tc.want)
			}
		})
	}
}
