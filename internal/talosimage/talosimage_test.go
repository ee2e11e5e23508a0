package talosimage

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/google/go-cmp/cmp"
)

func TestGoldenNames(t *testing.T) {
	const id, v = "abc", "v1.13.6"
	cases := map[string]struct {
		reason   string
		archs    []string
		existing string
		suffixed map[string]bool
		want     map[string]string
	}{
		"FirstArchitectureTakesTheUnsuffixedName": {
			reason: "With no golden yet, the first listed architecture gets the name pools have always cloned.",
			archs:  []string{"amd64", "arm64"},
			want:   map[string]string{"amd64": "talos-worker-abc-v1.13.6", "arm64": "talos-worker-abc-v1.13.6-arm64"},
		},
		"ExistingUnsuffixedGoldenKeepsItsName": {
			reason:   "The unsuffixed golden was made arm64: arm64 keeps it, however the list is ordered.",
			archs:    []string{"amd64", "arm64"},
			existing: "arm64",
			want:     map[string]string{"amd64": "talos-worker-abc-v1.13.6-amd64", "arm64": "talos-worker-abc-v1.13.6"},
		},
		"UnlistedExistingArchitectureNamesNone": {
			reason:   "An unsuffixed amd64 golden whose architecture left the list retires; arm64 must not take its name.",
			archs:    []string{"arm64"},
			existing: "amd64",
			want:     map[string]string{"arm64": "talos-worker-abc-v1.13.6-arm64"},
		},
		"SuffixedGoldenKeepsItsNameAfterTheUnsuffixedRetired": {
			reason:   "arm64 already has its suffixed golden: the unsuffixed name goes to the next architecture without one.",
			archs:    []string{"arm64", "amd64"},
			suffixed: map[string]bool{"arm64": true},
			want:     map[string]string{"amd64": "talos-worker-abc-v1.13.6", "arm64": "talos-worker-abc-v1.13.6-arm64"},
		},
		"SingleArchitectureIsUnsuffixed": {
			reason: "A catalog of one architecture names its goldens as before.",
			archs:  []string{"arm64"},
			want:   map[string]string{"arm64": "talos-worker-abc-v1.13.6"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := GoldenNames(id, v, tc.archs, tc.existing, tc.suffixed)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestArchitectureOf(t *testing.T) {
	cases := map[string]struct {
		reason string
		url    string
		want   string
	}{
		"FactoryURL":         {reason: "The factory's file name ends in -<arch>.raw.xz.", url: DiskURL("https://factory.talos.dev", "abc", "v1.13.6", "openstack", "arm64"), want: "arm64"},
		"HyphenatedPlatform": {reason: "The architecture is after the last hyphen.", url: "https://m.example/image/abc/v1.13.6/some-platform-amd64.raw.xz", want: "amd64"},
		"OtherFileName":      {reason: "A URL that does not name <platform>-<arch>.raw.xz says nothing.", url: "https://m.example/talos.img", want: ""},
		"NoPlatform":         {reason: "A file name without a platform says nothing.", url: "https://m.example/-amd64.raw.xz", want: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ArchitectureOf(tc.url); got != tc.want {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, cmp.Diff(tc.want, got))
			}
		})
	}
}

func TestGoldenClassName(t *testing.T) {
	long := strings.Repeat("a", 253)
	cases := map[string]struct {
		reason string
		class  string
		want   string
	}{
		"ShortClass": {
			reason: "The class is hashed, the architecture spelled out.",
			class:  "local",
			want:   "talos-worker-abc-v1.13.6-arm64-25bf8e1a23",
		},
		"LongestClassStaysBounded": {
			reason: "A 253-character class name adds no more than any other.",
			class:  long,
			want:   "talos-worker-abc-v1.13.6-arm64-" + hashPrefix(long),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := GoldenClassName("abc", "v1.13.6", "arm64", tc.class)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
				t.Errorf("%s: %q is no DNS subdomain: %v", tc.reason, got, errs)
			}
		})
	}
	if GoldenClassName("abc", "v1.13.6", "arm64", "local") == GoldenClassName("abc", "v1.13.6", "arm64", "local-2") {
		t.Error("two classes must not share a golden name")
	}
}

func hashPrefix(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:10]
}
