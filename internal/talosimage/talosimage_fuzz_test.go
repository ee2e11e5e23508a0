package talosimage

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/internal/rules"
)

// The fuzz targets below check that whatever a validator accepts builds a
// valid object name, URL or image reference, and that a validator never
// panics and always answers the same. The seed corpora live in
// testdata/fuzz/<FuzzName>/; a crasher found later is added there.

const realSchematic = "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"

// The validators live in internal/rules; these adapt them to the fuzz
// targets' func(string) error shape.
func validateSchematicID(v string) error {
	return rules.SchematicID(field.NewPath("schematicID"), v).ToAggregate()
}
func validateSchematicPath(v string) error {
	return rules.SchematicPath(field.NewPath("schematicID"), v).ToAggregate()
}
func validateVersion(v string) error {
	return rules.TalosVersion(field.NewPath("version"), v).ToAggregate()
}
func validateFactoryURL(v string) error {
	return rules.FactoryURL(field.NewPath("imageFactoryURL"), v).ToAggregate()
}
func validateInstallerRepository(v string) error {
	return rules.InstallerRepository(field.NewPath("installerRepository"), v).ToAggregate()
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

func FuzzGoldenName(f *testing.F) {
	for _, s := range [][2]string{
		{realSchematic, "v1.13.6"},
		{"abc123", "v1.14.0-alpha.0"},
		{"a", "v0.0.0"},
		{strings.Repeat("f", rules.MaxSchematicIDLength), "v1.2.3-" + strings.Repeat("a", rules.MaxVersionLength-7)},
		{"ABC", "v1.13"},
		{"abc\ndef", "v1.13.6: x"},
		{"аbc", "v1.13.6`id`"},
		{"a-", "v1.0.0-"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, schematic, version string) {
		for _, v := range []func(string) error{validateSchematicID, validateVersion} {
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
	if validateSchematicID(schematic) != nil || validateVersion(version) != nil {
		return ""
	}
	name := GoldenName(schematic, version)
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Sprintf("accepted schematicID %q and version %q build golden name %q, not a DNS-1123 subdomain: %v", schematic, version, name, errs)
	}
	if _, ok := rules.ParseMinor(version); !ok {
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
		{"https://factory.talos.dev/" + strings.Repeat("a", rules.MaxURLLength), "abc", "v1.0.0"},
		{"https://mirror.internal", "gpu/nvidia-open", "v1.13.6"},
		{"https://mirror.internal", "gpu/../x", "v1.13.6"},
		{"https://mirror.internal", "a/b?c#d", "v1.13.6"},
		{"https://mirror.internal", "gpu//x", "v1.13.6"},
		// Dot segments and encoded slashes the grammar admits and the
		// rule refuses (rules url.go pathAmbiguity).
		{"https://mirror.internal/talos/../x", "abc", "v1.0.0"},
		{"https://mirror.internal/talos/%2e%2e", "abc", "v1.0.0"},
		{"https://mirror.internal/%2E%2e/x", "abc", "v1.0.0"},
		{"https://mirror.internal/.%2e/x", "abc", "v1.0.0"},
		{"https://mirror.internal/%2e", "abc", "v1.0.0"},
		{"https://mirror.internal/%252e%252e/x", "abc", "v1.0.0"},
		{"https://mirror.internal/a%2f..", "abc", "v1.0.0"},
		{"https://mirror.internal/a%5cb", "abc", "v1.0.0"},
		{"https://mirror.internal/a%2eb/%2520", "abc", "v1.0.0"},
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
	// A pool imports by a schematic path (SchematicPath), which includes
	// every schematic ID a golden can be named by.
	if validateFactoryURL(factory) != nil || validateSchematicPath(schematic) != nil || validateVersion(version) != nil {
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
	// Whichever hop decodes the path, once or more, it names the path
	// written: no dot segment to resolve, no encoded separator.
	for p, n := u.EscapedPath(), 0; n < 4; n++ {
		for _, seg := range strings.Split(p, "/") {
			if seg == "." || seg == ".." {
				return fmt.Sprintf("accepted factory %q builds disk URL %q whose path, decoded %d times, has the dot segment %q: a hop that resolves it fetches another path", factory, raw, n, seg)
			}
		}
		if l := strings.ToLower(p); strings.Contains(l, "%2f") || strings.Contains(l, "%5c") {
			return fmt.Sprintf("accepted factory %q builds disk URL %q whose path, decoded %d times, has an encoded separator", factory, raw, n)
		}
		d, err := url.PathUnescape(p)
		if err != nil || d == p {
			break
		}
		p = d
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
		{"mirror.internal/installer", "gpu/nvidia-open", "v1.13.6"},
		{"mirror.internal/installer", "gpu/Nvidia", "v1.13.6"},
		{"mirror.internal/installer", "gpu/.x", "v1.13.6"},
		{"mirror.internal/" + strings.Repeat("i", 200), strings.Repeat("s", 60), "v1.13.6"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, repository, schematic, version string) {
		if validateInstallerRepository(repository) != nil || validateSchematicPath(schematic) != nil || validateVersion(version) != nil ||
			rules.InstallerName(field.NewPath("installerRepository"), repository, field.NewPath("schematicID"), schematic).ToAggregate() != nil {
			return
		}
		ref := InstallerImage(repository, schematic, version)
		if !utf8.ValidString(ref) || strings.ContainsAny(ref, " \t\r\n\"'`$\\{}<>|") {
			t.Fatalf("accepted repository %q builds installer image %q with a metacharacter", repository, ref)
		}
		name, tag, ok := strings.Cut(ref, ":"+version)
		if !ok || tag != "" || !strings.HasSuffix(name, "/"+schematic) {
			t.Fatalf("accepted repository %q builds installer image %q that does not end in /%s:%s", repository, ref, schematic, version)
		}
		// distribution/reference NameTotalLengthMax.
		if len(name) > rules.MaxImageNameLength {
			t.Fatalf("installer image %q has a name longer than %d characters", ref, rules.MaxImageNameLength)
		}
		tag = version
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
