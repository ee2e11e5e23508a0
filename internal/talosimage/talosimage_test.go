package talosimage

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidate(t *testing.T) {
	real := "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"
	cases := map[string]struct {
		reason string
		check  func(string) error
		value  string
		want   string // "" means valid
	}{
		"RealSchematicIsAccepted":          {"A 64-character hex schematic is what the factory returns.", ValidateSchematicID, real, ""},
		"ShortSchematicIsAccepted":         {"The pattern is a DNS label, not a hex check, so test schematics pass.", ValidateSchematicID, "abc123", ""},
		"EmptySchematicIsRefused":          {"An empty schematic builds no name.", ValidateSchematicID, "", "schematicID is empty; set it to an Image Factory schematic ID (64 lowercase hex characters)"},
		"UppercaseSchematicIsRefused":      {"Uppercase is not valid in a DataVolume name.", ValidateSchematicID, "ABC", `schematicID "ABC" is not a plain lowercase alphanumeric identifier; it is interpolated into the golden DataVolume name and the image URL, so use the 64 lowercase hex characters the Image Factory returns`},
		"SchematicWithNewlineIsRefused":    {"A newline would split YAML.", ValidateSchematicID, "abc\ndef", `schematicID "abc\ndef" is not a plain lowercase alphanumeric identifier; it is interpolated into the golden DataVolume name and the image URL, so use the 64 lowercase hex characters the Image Factory returns`},
		"SchematicWithCyrillicIsRefused":   {"A unicode look-alike must not pass for an ASCII schematic.", ValidateSchematicID, "аbc", `schematicID "аbc" is not a plain lowercase alphanumeric identifier; it is interpolated into the golden DataVolume name and the image URL, so use the 64 lowercase hex characters the Image Factory returns`},
		"OversizedSchematicIsRefused":      {"An oversized schematic would overflow the DataVolume name.", ValidateSchematicID, strings.Repeat("a", 200), `schematicID "` + strings.Repeat("a", 64) + `..." is 200 characters, more than 128; an Image Factory schematic ID is 64 lowercase hex characters`},
		"ReleaseVersionIsAccepted":         {"vMAJOR.MINOR.PATCH is a release.", ValidateVersion, "v1.13.6", ""},
		"PreReleaseVersionIsAccepted":      {"A lowercase pre-release suffix is published by the factory.", ValidateVersion, "v1.14.0-alpha.0", ""},
		"MinorOnlyVersionIsRefused":        {"The factory publishes no artifact for a minor.", ValidateVersion, "v1.13", `version "v1.13" is not a vMAJOR.MINOR.PATCH Talos release (e.g. v1.13.6 or v1.14.0-alpha.0); the Image Factory publishes no artifact for anything else`},
		"VersionWithoutVIsRefused":         {"Talos releases carry a leading v.", ValidateVersion, "1.13.6", `version "1.13.6" is not a vMAJOR.MINOR.PATCH Talos release (e.g. v1.13.6 or v1.14.0-alpha.0); the Image Factory publishes no artifact for anything else`},
		"VersionWithYAMLMetaIsRefused":     {"A YAML metacharacter must not reach a manifest.", ValidateVersion, "v1.13.6: x", `version "v1.13.6: x" is not a vMAJOR.MINOR.PATCH Talos release (e.g. v1.13.6 or v1.14.0-alpha.0); the Image Factory publishes no artifact for anything else`},
		"EmptyVersionIsRefused":            {"An empty version builds no name.", ValidateVersion, "", "version is empty; set it to a Talos release such as v1.13.6"},
		"FactoryURLIsAccepted":             {"A plain https URL is fine.", ValidateFactoryURL, "https://factory.talos.dev", ""},
		"MirrorWithPortAndPathIsAccepted":  {"Mirrors may carry a port and a path.", ValidateFactoryURL, "http://mirror.internal:8080/talos/", ""},
		"URLWithSpaceIsRefused":            {"Whitespace would break the URL.", ValidateFactoryURL, "https://factory talos.dev", `imageFactoryURL "https://factory talos.dev" is not a plain http(s) URL; it is interpolated into a DataVolume source URL, so it must carry no whitespace, quotes, $, backtick, <>, {} or |`},
		"URLWithDollarIsRefused":           {"A shell metacharacter is refused.", ValidateFactoryURL, "https://x/$HOME", `imageFactoryURL "https://x/$HOME" is not a plain http(s) URL; it is interpolated into a DataVolume source URL, so it must carry no whitespace, quotes, $, backtick, <>, {} or |`},
		"FTPURLIsRefused":                  {"Only http(s) is imported by CDI's HTTP source.", ValidateFactoryURL, "ftp://factory.talos.dev", `imageFactoryURL "ftp://factory.talos.dev" is not a plain http(s) URL; it is interpolated into a DataVolume source URL, so it must carry no whitespace, quotes, $, backtick, <>, {} or |`},
		"URLWithQueryIsRefused":            {"The artifact path is appended, so a query would swallow it.", ValidateFactoryURL, "https://factory.talos.dev?q=1", `imageFactoryURL "https://factory.talos.dev?q=1" carries a query or fragment; the image path /image/<schematicID>/<version>/... is appended to it, so give the base URL only, e.g. https://factory.talos.dev`},
		"URLWithoutHostIsRefused":          {"A URL without a host can never be fetched.", ValidateFactoryURL, "https:///path", `imageFactoryURL "https:///path" names no host; write it as https://<host>[:port][/path], e.g. https://factory.talos.dev`},
		"URLWithBadEscapeIsRefused":        {"A URL CDI cannot parse is refused here.", ValidateFactoryURL, "https://%zz", `imageFactoryURL "https://%zz" does not parse as a URL (invalid URL escape "%zz"); check its percent escapes`},
		"PreReleaseWithEmptyPartIsRefused": {"An empty pre-release identifier makes an invalid golden name.", ValidateVersion, "v1.0.0-rc..1", `version "v1.0.0-rc..1" is not a vMAJOR.MINOR.PATCH Talos release (e.g. v1.13.6 or v1.14.0-alpha.0); the Image Factory publishes no artifact for anything else`},
		"InstallerRepositoryIsAccepted":    {"A factory repository is valid, a trailing slash included.", ValidateInstallerRepository, "factory.talos.dev/openstack-installer/", ""},
		"InstallerWithPortIsAccepted":      {"A registry with a port is valid.", ValidateInstallerRepository, "registry.local:5000/talos/installer", ""},
		"InstallerWithSchemeIsRefused":     {"An image reference carries no scheme.", ValidateInstallerRepository, "https://factory.talos.dev/installer", `installerRepository "https://factory.talos.dev/installer" is not a lowercase registry repository such as factory.talos.dev/openstack-installer; it becomes the worker's installer image`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ""
			if err := tc.check(tc.value); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestNames(t *testing.T) {
	cases := map[string]struct {
		reason string
		got    string
		want   string
	}{
		"GoldenNameIsTheContract": {"Catalog and pools must agree on this name.", GoldenName("abc", "v1.13.6"), "talos-worker-abc-v1.13.6"},
		"DiskURLTrimsOneTrailingSlash": {"A factory URL written with a trailing slash must not double it.",
			DiskURL("https://factory.talos.dev/", "abc", "v1.13.6", "openstack", "amd64"), "https://factory.talos.dev/image/abc/v1.13.6/openstack-amd64.raw.xz"},
		"InstallerImageFollowsTheResolvedImage": {"The installer upgrades to the OS the pool booted.",
			InstallerImage("factory.talos.dev/openstack-installer/", "abc", "v1.13.6"), "factory.talos.dev/openstack-installer/abc:v1.13.6"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestMinor(t *testing.T) {
	cases := map[string]struct {
		in     string
		want   string
		wantOK bool
	}{
		"Release":    {"v1.13.6", "v1.13", true},
		"PreRelease": {"v1.14.0-rc.1", "v1.14", true},
		"Kubernetes": {"v1.35", "v1.35", true},
		"NoV":        {"1.35", "", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := Minor(tc.in)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("Minor(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
