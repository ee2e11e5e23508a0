// Package talosimage decides what a Talos image reference may look like and
// derives every name and URL built from one: the golden DataVolume name, the
// Image Factory disk URL and the installer image. Tenant-controlled strings are
// interpolated into all three, so each is validated against a closed pattern
// (internal/rules) before it reaches these functions.
package talosimage

import (
	"strings"
)

// GoldenName is the name of the golden DataVolume for (schematicID, version).
// It is a contract: the catalog creates it and every pool reconstructs it.
func GoldenName(schematicID, version string) string {
	return "talos-worker-" + schematicID + "-" + version
}

// DiskURL is the Image Factory URL of the raw disk image.
func DiskURL(factory, schematicID, version, platform, arch string) string {
	return strings.TrimSuffix(factory, "/") + "/image/" + schematicID + "/" + version + "/" + platform + "-" + arch + ".raw.xz"
}

// InstallerImage is the in-guest installer image for (schematicID, version).
func InstallerImage(repository, schematicID, version string) string {
	return strings.TrimSuffix(repository, "/") + "/" + schematicID + ":" + version
}
