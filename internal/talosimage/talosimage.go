// Package talosimage decides what a Talos image reference may look like and
// derives every name and URL built from one: the golden DataVolume name, the
// Image Factory disk URL and the installer image. Tenant-controlled strings are
// interpolated into all three, so each is validated against a closed pattern
// before it is used.
package talosimage

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

var (
	// A real schematic ID is 64 lowercase hex characters; the pattern is the
	// wider DNS-label shape so that test and mirror schematics also pass.
	schematicPattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	// The pre-release is dot-separated identifiers, none empty: v1.0.0-rc..1
	// or v1.0.0-. would make the golden name an invalid DNS-1123 subdomain.
	// Each number has at most nine digits, so that it always fits an int
	// when the minor is compared against the support matrix.
	versionPattern = regexp.MustCompile(`^v[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}(-[0-9a-z]+(\.[0-9a-z]+)*)?$`)
	minorPattern   = regexp.MustCompile(`^v([0-9]+)\.([0-9]+)`)
	// Plain http(s) URL: no whitespace, quotes, $, backtick, <>, {} or |.
	urlPattern = regexp.MustCompile(`^https?://[A-Za-z0-9._~:/?#\[\]@!&'()*+,;=%-]+$`)
	// Registry path of an installer image: host[:port]/path, lowercase.
	repositoryPattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]+)?(/[a-z0-9]([-a-z0-9._]*[a-z0-9])?)*$`)
)

const (
	// MaxSchematicIDLength keeps a golden name inside the 253-character
	// DataVolume name limit with room for the version.
	MaxSchematicIDLength = 128
	// MaxVersionLength bounds a version for the same reason.
	MaxVersionLength = 64
	// MaxURLLength bounds a factory URL.
	MaxURLLength = 2048
)

// ValidateSchematicID returns an error saying why id is not a usable schematic.
func ValidateSchematicID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("schematicID is empty; set it to an Image Factory schematic ID (64 lowercase hex characters)")
	case len(id) > MaxSchematicIDLength:
		return fmt.Errorf("schematicID %q is %d characters, more than %d; an Image Factory schematic ID is 64 lowercase hex characters", truncate(id), len(id), MaxSchematicIDLength)
	case !schematicPattern.MatchString(id):
		return fmt.Errorf("schematicID %q is not a plain lowercase alphanumeric identifier; it is interpolated into the golden DataVolume name and the image URL, so use the 64 lowercase hex characters the Image Factory returns", id)
	}
	return nil
}

// ValidateVersion returns an error saying why v is not a Talos release.
func ValidateVersion(v string) error {
	switch {
	case v == "":
		return fmt.Errorf("version is empty; set it to a Talos release such as v1.13.6")
	case len(v) > MaxVersionLength:
		return fmt.Errorf("version %q is %d characters, more than %d; use a Talos release such as v1.13.6", truncate(v), len(v), MaxVersionLength)
	case !versionPattern.MatchString(v):
		return fmt.Errorf("version %q is not a vMAJOR.MINOR.PATCH Talos release (e.g. v1.13.6 or v1.14.0-alpha.0); the Image Factory publishes no artifact for anything else", v)
	}
	return nil
}

// ValidateFactoryURL returns an error saying why u is not a plain http(s) URL.
func ValidateFactoryURL(u string) error {
	switch {
	case u == "":
		return fmt.Errorf("imageFactoryURL is empty; set it to an http(s) Image Factory URL such as https://factory.talos.dev")
	case len(u) > MaxURLLength:
		return fmt.Errorf("imageFactoryURL %q is %d characters, more than %d", truncate(u), len(u), MaxURLLength)
	case !urlPattern.MatchString(u):
		return fmt.Errorf("imageFactoryURL %q is not a plain http(s) URL; it is interpolated into a DataVolume source URL, so it must carry no whitespace, quotes, $, backtick, <>, {} or |", u)
	}
	// The pattern admits characters that still make a broken base URL: the
	// artifact path is appended to it, so it must parse, name a host, and end
	// before any query or fragment that would swallow that path.
	parsed, err := url.Parse(u)
	switch {
	case err != nil:
		return fmt.Errorf("imageFactoryURL %q does not parse as a URL (%s); check its percent escapes", u, errorText(err))
	case parsed.Host == "":
		return fmt.Errorf("imageFactoryURL %q names no host; write it as https://<host>[:port][/path], e.g. https://factory.talos.dev", u)
	case parsed.RawQuery != "" || parsed.ForceQuery || parsed.Fragment != "" || strings.ContainsAny(u, "?#"):
		return fmt.Errorf("imageFactoryURL %q carries a query or fragment; the image path /image/<schematicID>/<version>/... is appended to it, so give the base URL only, e.g. https://factory.talos.dev", u)
	}
	return nil
}

// errorText is the reason of a url.Error without the repeated input.
func errorText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// ValidateInstallerRepository returns an error saying why r is not a registry
// repository the installer image can be pulled from.
func ValidateInstallerRepository(r string) error {
	trimmed := strings.TrimSuffix(r, "/")
	switch {
	case trimmed == "":
		return fmt.Errorf("installerRepository is empty; set it to a registry repository such as factory.talos.dev/openstack-installer")
	case len(trimmed) > 255:
		return fmt.Errorf("installerRepository %q is %d characters, more than 255", truncate(r), len(r))
	case !repositoryPattern.MatchString(trimmed):
		return fmt.Errorf("installerRepository %q is not a lowercase registry repository such as factory.talos.dev/openstack-installer; it becomes the worker's installer image", r)
	}
	return nil
}

// Minor returns the vMAJOR.MINOR prefix of a version, and whether it had one.
func Minor(version string) (string, bool) {
	m := minorPattern.FindString(version)
	return m, m != ""
}

// MinorNumbers returns the numeric major and minor of a vMAJOR.MINOR[...] string.
func MinorNumbers(version string) (major, minor int, ok bool) {
	m := minorPattern.FindStringSubmatch(version)
	if m == nil {
		return 0, 0, false
	}
	if _, err := fmt.Sscanf(m[1]+" "+m[2], "%d %d", &major, &minor); err != nil {
		return 0, 0, false
	}
	return major, minor, true
}

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

// truncate keeps oversized values readable in messages.
func truncate(s string) string {
	const keep = 64
	if len(s) <= keep {
		return s
	}
	return s[:keep] + "..."
}
