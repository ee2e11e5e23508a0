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
	// Talos 1.10 brought the unified installer; the Image Factory serves
	// <platform>-installer from then on (siderolabs/image-factory
	// internal/frontend/http/ui.go, quirks.SupportsUnifiedInstaller in
	// siderolabs/talos pkg/machinery/imager/quirks/quirks.go).
	unifiedInstallerMajor, unifiedInstallerMinor = 1, 10
)

// DefaultInstallerRepository is the Image Factory installer repository that
// matches the platform disk the factory at factoryURL builds for version:
// the one a worker booted from that disk must upgrade with. From Talos 1.12
// an upgrade takes the kernel command line, talos.platform= included, from
// the installer (install.grubUseUKICmdline), so an openstack disk upgraded
// with the metal installer stops reading its config drive.
//
// The factory's registry (siderolabs/image-factory
// internal/frontend/http/registry.go getRequestedImage, docs/api.md "OCI
// Registry Frontend API") serves <host>/installer (metal, the legacy name)
// and <host>/<platform>-installer, each with a -secureboot variant; the disk
// imported (DiskURL) is never secure boot, so neither is the installer.
// Metal keeps "installer" so metal pools render what they always did, as
// does Talos below 1.10, where the factory has no per-platform installers.
// An unparsable version counts as the newest, as the factory's quirks do.
//
// The host is the factory URL's host[:port], lowercased: the factory serves
// /v2/ on its own host and its UI prints ExternalURL.Host/...
// (internal/frontend/http/ui.go); a reference cannot carry a path before /v2/.
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

// AtLeast reports whether version's major.minor is at least major.minor; a
// version without a vMAJOR.MINOR prefix counts as the newest.
func AtLeast(version string, major, minor int) bool {
	v, ok := rules.ParseMinor(version)
	return !ok || v.Compare(rules.Version{Major: major, Minor: minor}) >= 0
}

// InstallerPlatform is the platform of a factory installer repository, by
// its last path segment as DefaultInstallerRepository names them; ok is
// false for a mirror or a custom build, whose platform cannot be told.
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
