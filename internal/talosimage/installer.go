package talosimage

import (
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/internal/rules"
)

// PlatformMetal is the Talos platform whose installer the Image Factory
// serves under the plain name "installer".
const PlatformMetal = "metal"

// Talos releases at which the installer naming changed.
const (
	// unifiedInstallerMajor/Minor: Talos 1.10 introduced the unified
	// installer, and the Image Factory offers the per-platform
	// <platform>-installer images from that release on
	// (siderolabs/image-factory internal/frontend/http/ui.go, behind
	// quirks.SupportsUnifiedInstaller, which is Talos >= 1.10.0 in
	// siderolabs/talos pkg/machinery/imager/quirks/quirks.go).
	unifiedInstallerMajor, unifiedInstallerMinor = 1, 10
)

// DefaultInstallerRepository is the Image Factory repository of the
// installer that matches a disk image of platform built by the factory at
// factoryURL for Talos version: the repository a worker booted from that disk
// must upgrade with.
//
// The Image Factory's registry frontend (siderolabs/image-factory
// internal/frontend/http/registry.go, getRequestedImage; its docs/api.md "OCI
// Registry Frontend API") serves, for a schematic and version:
//
//   - <host>/installer/<schematic>:<version>: the metal installer (the
//     legacy name; it builds the metal profile);
//   - <host>/installer-secureboot/<schematic>:<version>: the metal secure boot
//     installer;
//   - <host>/<platform>-installer/<schematic>:<version>: the installer of
//     that platform, e.g. openstack-installer;
//   - <host>/<platform>-installer-secureboot/<schematic>:<version>: its
//     secure boot variant.
//
// Secure boot installers pair with the -secureboot disk images; this function
// imports the plain <platform>-<arch>.raw.xz disk (DiskURL), so it never
// picks a secure boot flavour.
//
// The flavour matters: from Talos 1.12 the generated machine config sets
// install.grubUseUKICmdline, so an upgrade takes the kernel command line,
// talos.platform= included, from the installer image. An openstack disk
// upgraded with the metal installer becomes talos.platform=metal and stops
// reading its config drive.
//
// The host is the factory URL's host[:port]: the factory serves its registry
// under /v2/ on its own host, and its UI prints installer references as
// ExternalURL.Host/... (internal/frontend/http/ui.go), so a self-hosted
// factory's installers come from that factory. A path in the factory URL is
// not part of the reference (an image reference cannot carry one before
// /v2/). The host is lowercased: registry references are lowercase and DNS is
// not case sensitive.
//
// Metal keeps the plain "installer" name, which the factory builds as metal,
// so that metal pools render what they always did. Talos before 1.10 keeps it
// too: the factory itself offers the per-platform installers only from 1.10.
// An unparsable version is treated as the newest, as the factory's quirks do.
func DefaultInstallerRepository(factoryURL, platform, version string) (string, error) {
	if errs := rules.FactoryURL(field.NewPath("imageFactoryURL"), factoryURL); len(errs) > 0 {
		return "", errs.ToAggregate()
	}
	u, err := url.Parse(factoryURL)
	if err != nil {
		return "", err
	}
	host := strings.ToLower(u.Host)
	if platform == PlatformMetal || !AtLeast(version, unifiedInstallerMajor, unifiedInstallerMinor) {
		return host + "/installer", nil
	}
	return host + "/" + platform + "-installer", nil
}

// AtLeast reports whether version's major.minor is at least major.minor. A
// version without a vMAJOR.MINOR prefix counts as the newest release, so that
// a Talos version this function cannot read gets the current behaviour.
func AtLeast(version string, major, minor int) bool {
	v, ok := rules.ParseMinor(version)
	return !ok || v.Compare(rules.Version{Major: major, Minor: minor}) >= 0
}

// InstallerPlatform is the platform of an Image Factory installer repository,
// read from its last path segment as the factory names them (see
// DefaultInstallerRepository): "installer" and "installer-secureboot" are
// metal, "<platform>-installer[-secureboot]" is <platform>. ok is false for a
// repository not named like a factory installer (a mirror or a custom
// build), whose platform cannot be told.
func InstallerPlatform(repository string) (platform string, ok bool) {
	last := repository[strings.LastIndex(repository, "/")+1:]
	last = strings.TrimSuffix(last, "-secureboot")
	switch {
	case last == "installer":
		return PlatformMetal, true
	case strings.HasSuffix(last, "-installer") && len(last) > len("-installer"):
		return strings.TrimSuffix(last, "-installer"), true
	}
	return "", false
}
