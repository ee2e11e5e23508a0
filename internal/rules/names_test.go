package rules

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestNames(t *testing.T) {
	path := field.NewPath("spec", "x")
	cases := map[string]struct {
		reason string
		errs   field.ErrorList
		ok     bool
	}{
		"Namespace":                      {"cozy-public is a namespace.", Namespace(path, "cozy-public", ""), true},
		"NamespaceWithUnderscore":        {"A namespace is a DNS label.", Namespace(path, "cozy_public", ""), false},
		"NamespaceWithDot":               {"Labels have no dots.", Namespace(path, "cozy.public", ""), false},
		"StorageClassEmpty":              {"Empty means the cluster default.", StorageClass(path, ""), true},
		"StorageClassWithDot":            {"A class name is a subdomain.", StorageClass(path, "replicated.fast"), true},
		"StorageClassUppercase":          {"Subdomains are lowercase.", StorageClass(path, "Replicated"), false},
		"StorageClassYAML":               {"YAML syntax.", StorageClass(path, "fast: {x: y}"), false},
		"InstanceType":                   {"u1.medium is a name.", InstanceType(path, "u1.medium"), true},
		"InstanceTypeEmpty":              {"Callers default before checking.", InstanceType(path, ""), false},
		"ServiceAccount":                 {"default is a name.", ServiceAccount(path, "default", ""), true},
		"ServiceAccountWithSlash":        {"A name has no slash.", ServiceAccount(path, "kube-system/default", ""), false},
		"PathSegment":                    {"openstack is a segment.", PathSegment(path, "openstack"), true},
		"PathSegmentTraversal":           {"Path traversal never reaches a URL.", PathSegment(path, "../../etc"), false},
		"ObjectNameLabel":                {"demo-md0 is a label.", ObjectNameLabel(path, "demo-md0", "a name", ""), true},
		"ObjectNameLabelWithDot":         {"A label value of a name cannot hold a dot.", ObjectNameLabel(path, "a.b-md0", "a name", ""), false},
		"ObjectNameLabelTooLong":         {"63 characters at most.", ObjectNameLabel(path, strings.Repeat("a", 64), "a name", ""), false},
		"InstallerRepository":            {"A factory repository.", InstallerRepository(path, "factory.talos.dev/openstack-installer"), true},
		"InstallerRepositorySlash":       {"A trailing slash is tolerated.", InstallerRepository(path, "factory.talos.dev/openstack-installer/"), true},
		"InstallerRepositoryPort":        {"A registry with a port.", InstallerRepository(path, "registry.local:5000/talos/installer"), true},
		"InstallerRepositoryScheme":      {"An image reference carries no scheme.", InstallerRepository(path, "https://factory.talos.dev/installer"), false},
		"InstallerRepositoryUpper":       {"References are lowercase.", InstallerRepository(path, "Factory.talos.dev/installer"), false},
		"InstallerRepositoryEmpty":       {"Empty names nothing.", InstallerRepository(path, "/"), false},
		"Schematic":                      {"A real schematic.", SchematicID(path, "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"), true},
		"SchematicShort":                 {"Test schematics pass the DNS-label shape.", SchematicID(path, "abc123"), true},
		"SchematicUppercase":             {"Uppercase is not valid in a DataVolume name.", SchematicID(path, "ABC"), false},
		"SchematicCyrillic":              {"A look-alike must not pass.", SchematicID(path, "аbc"), false},
		"SchematicNewline":               {"A newline would split YAML.", SchematicID(path, "abc\ndef"), false},
		"SchematicOversized":             {"It would overflow the golden name.", SchematicID(path, strings.Repeat("a", 200)), false},
		"SchematicEmpty":                 {"Empty builds no name.", SchematicID(path, ""), false},
		"SchematicPathRefusedForAGolden": {"A golden's DataVolume name holds no '/'.", SchematicID(path, "gpu/nvidia-open"), false},
		"PathTakesAnID":                  {"Every schematic ID is also a path.", SchematicPath(path, "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"), true},
		"PathOfSegments":                 {"A mirror serves gpu/nvidia-open, as the chart accepts.", SchematicPath(path, "gpu/nvidia-open"), true},
		"PathSegmentSeparators":          {"OCI path components join alphanumerics by '.', '_', '__' or dashes.", SchematicPath(path, "talos/gpu_nvidia.open__x--y"), true},
		"PathEmptySegment":               {"An empty segment is no OCI path component.", SchematicPath(path, "gpu//nvidia"), false},
		"PathDotSegment":                 {"'..' would walk the disk URL up a level.", SchematicPath(path, "gpu/../x"), false},
		"PathLeadingSlash":               {"The installer repository supplies the leading '/'.", SchematicPath(path, "/gpu"), false},
		"PathTrailingSlash":              {"A trailing '/' leaves an empty component.", SchematicPath(path, "gpu/"), false},
		"PathUppercase":                  {"An OCI repository name is lowercase.", SchematicPath(path, "gpu/Nvidia"), false},
		"PathShellMetacharacter":         {"The chart's own guard: no $ or backtick.", SchematicPath(path, "gpu/$(id)"), false},
		"PathQuery":                      {"A '?' would end the disk URL's path.", SchematicPath(path, "gpu?x"), false},
		"PathOversized":                  {"An OCI name holds 255 characters.", SchematicPath(path, strings.Repeat("a/", 128)+"a"), false},
		"PathEmpty":                      {"Empty builds no URL.", SchematicPath(path, ""), false},
		"InstallerNameFits":              {"A name up to 255 characters.", InstallerName(path, "factory.talos.dev/openstack-installer/", path, "gpu/nvidia-open"), true},
		"InstallerNameTooLong":           {"distribution refuses a name over 255 characters.", InstallerName(path, "r.example/"+strings.Repeat("i", 200), path, strings.Repeat("s", 60)), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := len(tc.errs) == 0; got != tc.ok {
				t.Errorf("%s\nok = %t, want %t (%v)", tc.reason, got, tc.ok, tc.errs)
			}
			for _, e := range tc.errs {
				if e.Field != "spec.x" {
					t.Errorf("%s: the error names %q, not the field checked", tc.reason, e.Field)
				}
			}
		})
	}
}

// A few texts are pinned whole, as users read them.
func TestGoldenTexts(t *testing.T) {
	cases := map[string]struct {
		errs field.ErrorList
		want string
	}{
		"OversizedSchematic": {SchematicID(field.NewPath("spec", "images").Index(0).Child("schematicID"), strings.Repeat("a", 200)),
			`spec.images[0].schematicID: Invalid value: "` + strings.Repeat("a", 64) + `...": is 200 bytes, more than 64; an Image Factory schematic ID is 64 lowercase hex characters`},
		"Replicas": {Replicas(field.NewPath("spec", "nodePools").Key("gpu").Child("replicas"), float64(4294967297)),
			`spec.nodePools[gpu].replicas: Invalid value: 4294967297: is not a whole number from 0 to 1000; set how many workers the pool runs, at most 1000 per pool (split a larger fleet into several pools)`},
		"Polling": {PollingInterval(field.NewPath("polling", "inProgress"), 0),
			`polling.inProgress: Invalid value: "0s": must be at least 1s; it is how long Crossplane waits before calling the function again`},
		"KeyWithNewlineIsEscapedInThePath": {field.ErrorList{field.Invalid(field.NewPath("spec", "talos", "registryMirrors").Key("docker.io\nevil: true"), "docker.io\nevil: true", "is not a registry host")},
			`spec.talos.registryMirrors[docker.io\nevil: true]: Invalid value: "docker.io\nevil: true": is not a registry host`},
		"SchematicPathForAGolden": {SchematicID(field.NewPath("spec", "talos", "schematicID"), "gpu/nvidia-open"),
			`spec.talos.schematicID: Invalid value: "gpu/nvidia-open": is a multi-segment schematic path, which cannot name a golden image: the golden DataVolume is named talos-worker-<schematicID>-<version> and a name holds no '/'; import this image over HTTP with osImage.factory, or serve it under a single-segment ID on the mirror and add that ID to the catalog`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Message(tc.errs)); diff != "" {
				t.Errorf("-want, +got:\n%s", diff)
			}
		})
	}
}

func TestNameList(t *testing.T) {
	path := field.NewPath("spec", "storageClasses")
	cases := map[string]struct {
		reason string
		names  []string
		want   string
	}{
		"ValidSet": {
			reason: "Distinct valid names pass.",
			names:  []string{"replicated", "local"},
		},
		"EmptyItemIsRequired": {
			reason: "An empty item says what to put there.",
			names:  []string{"replicated", ""},
			want:   "spec.storageClasses[1]: Required value: name one",
		},
		"InvalidAndDuplicate": {
			reason: "Each item is checked, and a repeated one named at its second place.",
			names:  []string{"Fast SSD", "local", "local"},
			want:   `spec.storageClasses[0]: Invalid value: "Fast SSD": is not a StorageClass name (a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')); name an existing StorageClass, or leave it empty for the cluster default; spec.storageClasses[2]: Duplicate value: "local"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ""
			if errs := NameList(path, tc.names, StorageClass, "name one"); len(errs) > 0 {
				got = Message(errs)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestInstallerNameBlamesTheFieldToShorten pins that the refusal of an
// installer name too long is at the field to shorten, the longer of the
// two it is built from, with that field's budget beside the other.
func TestInstallerNameBlamesTheFieldToShorten(t *testing.T) {
	repoPath := field.NewPath("spec", "talos", "installerRepository")
	sidPath := field.NewPath("Input talos", "schematicID")
	sid := strings.Repeat("a", 64)
	longRepo := "registry.example/" + strings.Repeat("i", 190)
	cases := map[string]struct {
		reason     string
		repository string
		schematic  string
		want       string
	}{
		"Fits": {reason: "255 characters fit.", repository: "r/" + strings.Repeat("i", 188), schematic: sid},
		"LongRepository": {
			reason:     "A long installerRepository beside a real schematic ID is refused at installerRepository, with its budget.",
			repository: longRepo, schematic: sid,
			want: `spec.talos.installerRepository: Invalid value: "registry.example/iiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiii...": is 207 characters and, with Input talos.schematicID "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" (64 characters), makes the installer image name <installerRepository>/<schematic> 272 characters long, more than the 255 an OCI reference holds; shorten spec.talos.installerRepository to at most 190 characters, or shorten Input talos.schematicID`,
		},
		"TrailingSlashIsNotCounted": {
			reason:     "The trailing slash the repository may carry is not part of the name.",
			repository: "r/" + strings.Repeat("i", 188) + "/", schematic: sid,
		},
		"LongSchematicPath": {
			reason:     "A long mirror schematic path beside a short repository is refused at the schematic's field.",
			repository: "mirror.internal/installer", schematic: strings.Repeat("gpu/", 60) + "x",
			want: `Input talos.schematicID: Invalid value: "gpu/gpu/gpu/gpu/gpu/gpu/gpu/gpu/gpu/gpu/gpu/gpu/gpu/gpu/gpu/gpu/...": is 241 characters and, with spec.talos.installerRepository "mirror.internal/installer" (25 characters), makes the installer image name <installerRepository>/<schematic> 267 characters long, more than the 255 an OCI reference holds; shorten Input talos.schematicID to at most 229 characters, or shorten spec.talos.installerRepository`,
		},
		"BothTooLong": {
			reason:     "When either alone leaves no room, both are to be shortened.",
			repository: "r/" + strings.Repeat("i", 253), schematic: strings.Repeat("s", 254),
			want: `spec.talos.installerRepository: Invalid value: "r/iiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiii...": is 255 characters and, with Input talos.schematicID "ssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssss..." (254 characters), makes the installer image name <installerRepository>/<schematic> 510 characters long, more than the 255 an OCI reference holds; shorten both, to at most 254 characters together`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Message(InstallerName(repoPath, tc.repository, sidPath, tc.schematic))); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
