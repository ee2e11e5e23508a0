package talosimage

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation"
)

// The fuzz targets below check that whatever a validator accepts builds a
// valid object name, URL or image reference, and that a validator never
// panics and always answers the same. The seed corpora live in
// testdata/fuzz/<FuzzName>/; a crasher found later is added there.

const realSchematic = "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"

// Regressions of validator gaps the fuzz targets found: each value once
// passed its validator yet built an invalid golden name or disk URL.
func TestFormerlyAcceptedInputsAreRefused(t *testing.T) {
	cases := map[string]struct {
		reason   string
		validate func(string) error
		value    string
	}{
		"VersionWithEmptyPreReleasePart": {"v1.0.0-rc..1 would build an invalid golden name.", ValidateVersion, "v1.0.0-rc..1"},
		"VersionEndingInDot":             {"v1.0.0-. would build an invalid golden name.", ValidateVersion, "v1.0.0-."},
		"FactoryURLWithQuery":            {"A query would swallow the artifact path.", ValidateFactoryURL, "https://factory.talos.dev?q=1"},
		"FactoryURLWithEmptyQuery":       {"A bare ? would too.", ValidateFactoryURL, "https://factory.talos.dev?"},
		"FactoryURLWithFragment":         {"A fragment would swallow the artifact path.", ValidateFactoryURL, "https://factory.talos.dev#frag"},
		"FactoryURLWithBadEscape":        {"An invalid escape does not parse.", ValidateFactoryURL, "https://%zz"},
		"FactoryURLWithoutHost":          {"A host-less URL can never be fetched.", ValidateFactoryURL, "https:///path"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := tc.validate(tc.value); err == nil {
				t.Errorf("%s\n%q was accepted", tc.reason, tc.value)
			}
		})
	}
}

func FuzzGoldenName(f *testing.F) {
	for _, s := range [][2]string{
		{realSchematic, "v1.13.6"},
		{"abc123", "v1.14.0-alpha.0"},
		{"a", "v0.0.0"},
		{strings.Repeat("f", MaxSchematicIDLength), "v1.2.3-" + strings.Repeat("a", MaxVersionLength-7)},
		{"ABC", "v1.13"},
		{"abc\ndef", "v1.13.6: x"},
		{"аbc", "v1.13.6`id`"},
		{"a-", "v1.0.0-"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, schematic, version string) {
		for _, v := range []func(string) error{ValidateSchematicID, ValidateVersion} {
			for _, in := range []string{schematic, version} {
				a, b := v(in), v(in)
				if (a == nil) != (b == nil) || (a != nil && a.Error() != b.Error()) {
					t.Fatalf("validation of %q is not deterministic", in)
				}
			}
		}
		if p := goldenNameProblems(schematic, version); p != "" {
			t.Fatal(p)
		}
	})
}

// goldenNameProblems says what is wrong with the golden name of an accepted
// (schematic, version); "" when they are refused or the name is valid.
func goldenNameProblems(schematic, version string) string {
	if ValidateSchematicID(schematic) != nil || ValidateVersion(version) != nil {
		return ""
	}
	name := GoldenName(schematic, version)
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Sprintf("accepted schematicID %q and version %q build golden name %q, not a DNS-1123 subdomain: %v", schematic, version, name, errs)
	}
	if _, _, ok := MinorNumbers(version); !ok {
		return fmt.Sprintf("accepted version %q has no numeric minor", version)
	}
	return ""
}

func FuzzDiskURL(f *testing.F) {
	for _, s := range [][3]string{
		{"https://factory.talos.dev", realSchematic, "v1.13.6"},
		{"http://mirror.internal:8080/talos/", "abc", "v1.0.0"},
		{"https://[::1]:8443", "abc", "v1.0.0"},
		{"https://x/$HOME", "abc", "v1.0.0"},
		{"https://factory talos.dev", "abc", "v1.0.0"},
		{"ftp://factory.talos.dev", "abc", "v1.0.0"},
		{"https://user:pw@factory.talos.dev", "abc", "v1.0.0"},
		{"https://", "abc", "v1.0.0"},
		{"https://factory.talos.dev/" + strings.Repeat("a", MaxURLLength), "abc", "v1.0.0"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, factory, schematic, version string) {
		if p := diskURLProblems(factory, schematic, version); p != "" {
			t.Fatal(p)
		}
	})
}

// diskURLProblems says what is wrong with the disk URL built from an accepted
// factory URL; "" when the inputs are refused or the URL is sound.
func diskURLProblems(factory, schematic, version string) string {
	if ValidateFactoryURL(factory) != nil || ValidateSchematicID(schematic) != nil || ValidateVersion(version) != nil {
		return ""
	}
	raw := DiskURL(factory, schematic, version, "openstack", "amd64")
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Sprintf("accepted factory %q builds disk URL %q that does not parse: %v", factory, raw, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("accepted factory %q builds disk URL %q with scheme %q", factory, raw, u.Scheme)
	case u.Host == "":
		return fmt.Sprintf("accepted factory %q builds disk URL %q without a host", factory, raw)
	}
	want := "/image/" + schematic + "/" + version + "/openstack-amd64.raw.xz"
	if u.RawQuery != "" || u.Fragment != "" || !strings.HasSuffix(u.EscapedPath(), want) {
		return fmt.Sprintf("accepted factory %q builds disk URL %q whose path does not end in %q (query %q, fragment %q): CDI would fetch another artifact", factory, raw, want, u.RawQuery, u.Fragment)
	}
	return ""
}

func FuzzInstallerImage(f *testing.F) {
	for _, s := range [][3]string{
		{"factory.talos.dev/installer", realSchematic, "v1.13.6"},
		{"factory.talos.dev/installer/", "abc", "v1.0.0-beta.1"},
		{"registry.local:5000/talos/installer", "abc", "v1.0.0"},
		{"https://factory.talos.dev/installer", "abc", "v1.0.0"},
		{"Factory.talos.dev/installer", "abc", "v1.0.0"},
		{"factory.talos.dev//installer", "abc", "v1.0.0"},
		{"a/", "abc", "v1.0.0"},
		{"/", "abc", "v1.0.0"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, repository, schematic, version string) {
		if ValidateInstallerRepository(repository) != nil || ValidateSchematicID(schematic) != nil || ValidateVersion(version) != nil {
			return
		}
		ref := InstallerImage(repository, schematic, version)
		if !utf8.ValidString(ref) || strings.ContainsAny(ref, " \t\r\n\"'`$\\{}<>|") {
			t.Fatalf("accepted repository %q builds installer image %q with a metacharacter", repository, ref)
		}
		name, tag, ok := strings.Cut(ref[strings.LastIndex(ref, "/")+1:], ":")
		if !ok || name != schematic || tag != version {
			t.Fatalf("accepted repository %q builds installer image %q whose last path element is not %s:%s", repository, ref, schematic, version)
		}
		// A reference tag is at most 128 characters of [\w][\w.-]*.
		if len(tag) > 128 {
			t.Fatalf("installer image %q carries a tag longer than 128 characters", ref)
		}
		for _, seg := range strings.Split(strings.TrimSuffix(ref, ":"+tag), "/")[1:] {
			if seg == "" {
				t.Fatalf("accepted repository %q builds installer image %q with an empty path segment", repository, ref)
			}
		}
	})
}
