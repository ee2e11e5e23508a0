package rules

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MaxSchematicIDLength is a real schematic ID's length, which the XRDs
// carry as maxLength; it keeps a golden name well inside the
// 253-character DataVolume name limit with room for the version.
const MaxSchematicIDLength = 64

// SchematicIDPattern is the shape of a schematic ID that names a golden,
// shared with the XRDs. A real schematic ID is 64 lowercase hex characters;
// the pattern is the wider DNS-label shape so that test and mirror
// schematics also pass, and nothing else can: the ID is interpolated into
// the golden's DataVolume name, which holds no '/'.
const SchematicIDPattern = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`

// schematicSegment is one path component of an OCI repository name, as
// distribution's reference grammar writes it (distribution/reference
// regexp.go, pathComponent: alphanumerics joined by '.', '_', '__' or one
// or more '-'). The schematic becomes path components of the installer
// image <installerRepository>/<schematic>:<version>, so this is the widest
// shape that image can take; every character of it is also unreserved in
// the disk URL's path (RFC 3986).
const schematicSegment = `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*`

// SchematicPathPattern is what a pool may name its image by: a schematic
// ID, or a path of several segments (gpu/nvidia-open) that a self-hosted
// factory or mirror serves, which the chart accepts too (kubernetes-nodes
// _helpers.tpl "kubernetes.schematicID", cozystack c1ea547). Such a path
// reaches only the HTTP import and the installer; a golden needs a
// SchematicIDPattern ID.
const SchematicPathPattern = `^` + schematicSegment + `(/` + schematicSegment + `)*$`

// MaxSchematicPathLength bounds a schematic path. An OCI repository name
// is at most 255 characters (distribution/reference NameTotalLengthMax),
// and the path is part of the installer's; Installer checks the whole name.
const MaxSchematicPathLength = 255

// MaxImageNameLength is distribution's NameTotalLengthMax: the longest
// repository name (registry host and path, without tag) a reference holds.
const MaxImageNameLength = 255

var (
	schematicID   = regexp.MustCompile(SchematicIDPattern)
	schematicPath = regexp.MustCompile(SchematicPathPattern)
)

// SchematicID checks an Image Factory schematic ID that names a golden: a
// catalog entry's, or the one a pool's osImage.builtin resolves to.
func SchematicID(path *field.Path, v string) field.ErrorList {
	switch {
	case v == "":
		return field.ErrorList{field.Required(path, "set an Image Factory schematic ID (64 lowercase hex characters)")}
	case strings.Contains(v, "/") && schematicPath.MatchString(v):
		return field.ErrorList{field.Invalid(path, Quoted(v), "is a multi-segment schematic path, which cannot name a golden image: the golden DataVolume is named talos-worker-<schematicID>-<version> and a name holds no '/'; import this image over HTTP with osImage.factory, or serve it under a single-segment ID on the mirror and add that ID to the catalog")}
	case !schematicID.MatchString(v):
		return field.ErrorList{field.Invalid(path, Quoted(v), "is not a plain lowercase alphanumeric identifier; it is interpolated into the golden DataVolume name and the image URL, so use the 64 lowercase hex characters the Image Factory returns")}
	case len(v) > MaxSchematicIDLength:
		return field.ErrorList{tooLong(path, v, MaxSchematicIDLength, "an Image Factory schematic ID is 64 lowercase hex characters")}
	}
	return nil
}

// SchematicPath checks what a pool's image may be named by on the HTTP
// path: a schematic ID, or a mirror's multi-segment path.
func SchematicPath(path *field.Path, v string) field.ErrorList {
	return bounded(path, v, MaxSchematicPathLength, schematicPath,
		"set an Image Factory schematic ID (64 lowercase hex characters) or a mirror's schematic path such as gpu/nvidia-open",
		"a schematic path is at most 255 characters, the longest image name an OCI reference holds",
		"is neither a schematic ID nor a schematic path: write the 64 lowercase hex characters the Image Factory returns, or '/'-separated lowercase segments of letters and digits (joined inside a segment by '.', '_' or '-') such as gpu/nvidia-open, as the disk URL and the installer image reference <installerRepository>/<schematic>:<version> both carry it")
}

// InstallerName checks the repository name of the installer image
// repository + "/" + schematic (no tag): an OCI reference refuses a name
// longer than MaxImageNameLength, and Talos would then fail the upgrade
// that pulls it. The name is built from two fields, each named with the
// path it was set at (repoPath, schematicPath): the error is at the longer
// of the two, the one to shorten, and its fix gives that field's budget,
// what the name's limit leaves it beside the other.
func InstallerName(repoPath *field.Path, repository string, schematicPath *field.Path, schematic string) field.ErrorList {
	repository = strings.TrimSuffix(repository, "/")
	name := repository + "/" + schematic
	if len(name) <= MaxImageNameLength {
		return nil
	}
	at, value, other, otherValue := repoPath, repository, schematicPath, schematic
	if len(schematic) > len(repository) {
		at, value, other, otherValue = schematicPath, schematic, repoPath, repository
	}
	fix := fmt.Sprintf("shorten %s to at most %d characters, or shorten %s", at, MaxImageNameLength-1-len(otherValue), other)
	if len(otherValue) >= MaxImageNameLength-1 {
		fix = fmt.Sprintf("shorten both, to at most %d characters together", MaxImageNameLength-1)
	}
	return field.ErrorList{field.Invalid(at, Quoted(value), fmt.Sprintf("is %d characters and, with %s %q (%d characters), makes the installer image name <installerRepository>/<schematic> %d characters long, more than the %d an OCI reference holds; %s", len(value), other, Quoted(otherValue), len(otherValue), len(name), MaxImageNameLength, fix))}
}
