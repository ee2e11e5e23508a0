package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Crossplane's xpkg conventions (crossplane/v2 internal/xpkg, v2.2.0): the
// package.yaml stream is one layer, marked in the image config by the label
// "io.crossplane.xpkg:<layer digest>" = "base"; examples, when present, are
// another layer marked "upbound".
const (
	xpkgLabelPrefix = "io.crossplane.xpkg:"
	xpkgBase        = "base"
	streamFile      = "package.yaml"
)

// Package is a built .xpkg, read back.
type Package struct {
	Image   v1.Image
	Config  *v1.ConfigFile
	Layers  []v1.Layer
	Objects []map[string]any
	// PackageLayer is the index in Layers of the package.yaml layer.
	PackageLayer int
}

// ReadPackage loads a .xpkg (an image tarball) and parses its package.yaml.
func ReadPackage(path string) (*Package, error) {
	img, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		return nil, fmt.Errorf("%s is not an image tarball: %w", path, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	p := &Package{Image: img, Config: cf, Layers: layers, PackageLayer: -1}
	for i, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return nil, err
		}
		if cf.Config.Labels[xpkgLabelPrefix+d.String()] == xpkgBase {
			if p.PackageLayer >= 0 {
				return nil, errors.New("more than one layer is marked as the package.yaml layer")
			}
			p.PackageLayer = i
		}
	}
	if p.PackageLayer < 0 {
		return nil, fmt.Errorf("no layer is labelled %s<digest>=%s: not a Crossplane package", xpkgLabelPrefix, xpkgBase)
	}
	files, err := LayerFiles(layers[p.PackageLayer])
	if err != nil {
		return nil, err
	}
	stream, ok := files[streamFile]
	if !ok || len(files) != 1 {
		return nil, fmt.Errorf("the package layer must hold exactly %s, holds %s", streamFile, strings.Join(slices.Sorted(maps.Keys(files)), ", "))
	}
	if p.Objects, err = decodeStream(stream.Data); err != nil {
		return nil, fmt.Errorf("%s: %w", streamFile, err)
	}
	return p, nil
}

// LayerFile is one entry of a layer.
type LayerFile struct {
	Header *tar.Header
	Data   []byte
}

// LayerFiles reads every entry of a layer, keyed by cleaned path.
func LayerFiles(l v1.Layer) (map[string]LayerFile, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	out := map[string]LayerFile{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		out[strings.TrimSuffix(strings.TrimPrefix(hdr.Name, "./"), "/")] = LayerFile{Header: hdr, Data: data}
	}
}

func decodeStream(data []byte) ([]map[string]any, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []map[string]any
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(obj) > 0 {
			out = append(out, obj)
		}
	}
}
