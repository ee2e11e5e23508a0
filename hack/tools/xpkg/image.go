package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The runtime image's contract, as the Dockerfile's distroless final stage
// has it: the static binary at /function, run as nonroot (65532), serving
// gRPC on 9443.
const (
	Entrypoint  = "/function"
	User        = "65532:65532"
	NonrootUID  = 65532
	ExposedPort = "9443/tcp"
)

// epoch is the modification time of every file and the image's creation
// time, so the same binary always gives the same image digest.
var epoch = time.Unix(0, 0).UTC()

// file is one entry of a layer.
type file struct {
	name     string
	mode     int64
	uid, gid int
	dir      bool
	data     []byte
}

// baseFiles is a distroless-style static base: nonroot's passwd and group
// entries, its home, and a world-writable /tmp. No shell, no package manager,
// no CA certificates: the function never calls out to the network.
func baseFiles() []file {
	return []file{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n")},
		{name: "etc/nsswitch.conf", mode: 0o644, data: []byte("hosts: files dns\n")},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "home/", mode: 0o755, dir: true},
		{name: "home/nonroot/", mode: 0o700, uid: NonrootUID, gid: NonrootUID, dir: true},
		{name: "tmp/", mode: 0o1777, dir: true},
	}
}

// layer builds an uncompressed tar of files (in the given order) as a layer.
func layer(files []file) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{
			Name: f.name, Mode: f.mode, Uid: f.uid, Gid: f.gid, ModTime: epoch,
			Typeflag: tar.TypeReg, Size: int64(len(f.data)), Format: tar.FormatPAX,
		}
		if f.dir {
			hdr.Typeflag, hdr.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// RuntimeImage assembles the function's runtime image from its static binary:
// the base layer, then a layer holding only /function.
func RuntimeImage(binary []byte, arch string) (v1.Image, error) {
	if err := checkStatic(binary); err != nil {
		return nil, err
	}
	base, err := layer(baseFiles())
	if err != nil {
		return nil, fmt.Errorf("cannot build the base layer: %w", err)
	}
	fn, err := layer([]file{{name: "function", mode: 0o755, data: binary}})
	if err != nil {
		return nil, fmt.Errorf("cannot build the function layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.AppendLayers(img, base, fn)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	cf.Created = v1.Time{Time: epoch}
	cf.Config = v1.Config{
		Entrypoint:   []string{Entrypoint},
		User:         User,
		WorkingDir:   "/home/nonroot",
		Env:          []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		ExposedPorts: map[string]struct{}{ExposedPort: {}},
		Labels: map[string]string{
			"org.opencontainers.image.source": "https://github.com/cozystack/function-worker-image",
		},
	}
	cf.History = nil
	return mutate.ConfigFile(img, cf)
}
