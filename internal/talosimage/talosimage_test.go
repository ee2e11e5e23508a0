package talosimage

import (
	"testing"

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
