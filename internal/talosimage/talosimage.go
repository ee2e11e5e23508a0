// Package talosimage decides what a Talos image reference may look like and
// derives every name and URL built from one: the golden DataVolume name, the
// Image Factory disk URL and the installer image. Tenant-controlled strings are
// interpolated into all three, so each is validated against a closed pattern
// (internal/rules) before it reaches these functions.
package talosimage

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// GoldenName is the name of the golden DataVolume for (schematicID, version).
// It is a contract: the catalog creates it and every pool reconstructs it.
func GoldenName(schematicID, version string) string {
	return "talos-worker-" + schematicID + "-" + version
}

// GoldenClassName is the name of the golden of (schematicID, version,
// arch) on a StorageClass other than the first its catalog lists for the
// image: GoldenName-<arch>-<10 hex of the class name's SHA-256>. A class
// name can be 253 characters, so it is hashed to keep the name a bounded
// DNS subdomain (and the PVC CDI names after it); the architecture is
// spelled out so the name still says what it holds. It is a contract like
// GoldenName: the catalog creates it and a pool on that class reconstructs
// it.
func GoldenClassName(schematicID, version, arch, storageClass string) string {
	sum := sha256.Sum256([]byte(storageClass))
	return GoldenName(schematicID, version) + "-" + arch + "-" + hex.EncodeToString(sum[:])[:classHashLen]
}

// classHashLen is how much of the class hash a golden's name carries: 40
// bits, so two classes of one site collide with a chance of about n²/2^41.
const classHashLen = 10

// DiskURL is the Image Factory URL of the raw disk image.
func DiskURL(factory, schematicID, version, platform, arch string) string {
	return strings.TrimSuffix(factory, "/") + "/image/" + schematicID + "/" + version + "/" + platform + "-" + arch + ".raw.xz"
}

// InstallerImage is the in-guest installer image for (schematicID, version).
func InstallerImage(repository, schematicID, version string) string {
	return strings.TrimSuffix(repository, "/") + "/" + schematicID + ":" + version
}

// ArchitectureOf is the architecture a disk URL names in its file name,
// <platform>-<arch>.raw.xz (DiskURL), or "" when the URL does not end so.
func ArchitectureOf(url string) string {
	file := url[strings.LastIndex(url, "/")+1:]
	stem, ok := strings.CutSuffix(file, ".raw.xz")
	if !ok {
		return ""
	}
	i := strings.LastIndex(stem, "-")
	if i < 1 {
		return ""
	}
	return stem[i+1:]
}

// GoldenNames names the goldens of (schematicID, version) for each of
// archs, which a catalog lists in order. Names are pinned by the pools that
// clone them, so none may change: the unsuffixed GoldenName belongs to the
// architecture the existing unsuffixed golden was made with (existing, ""
// when there is none), else to the first of archs; every other architecture
// gets GoldenName-<arch>. An architecture that already has its suffixed
// golden (suffixed) keeps it and never takes the unsuffixed name, so a
// catalog whose unsuffixed golden retired renames nothing. An existing
// unsuffixed golden of an architecture no longer listed names none of archs.
func GoldenNames(schematicID, version string, archs []string, existing string, suffixed map[string]bool) map[string]string {
	base := GoldenName(schematicID, version)
	owner := existing
	if owner == "" {
		for _, a := range archs {
			if !suffixed[a] {
				owner = a
				break
			}
		}
	}
	out := make(map[string]string, len(archs))
	for _, a := range archs {
		if a == owner {
			out[a] = base
			continue
		}
		out[a] = base + "-" + a
	}
	return out
}
