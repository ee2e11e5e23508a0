package read

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
)

func TestChooseGolden(t *testing.T) {
	const base = "talos-worker-abc-v1.13.6"
	amd64, arm64 := Candidate{Exists: true, Arch: "amd64"}, Candidate{Exists: true, Arch: "arm64"}
	cases := map[string]struct {
		reason             string
		arch               string
		inputArch          bool
		suffixed, unsuffix Candidate
		want               GoldenChoice
	}{
		"Arm64PoolClonesItsSuffixedGolden": {
			reason: "The catalog keeps arm64 next to an amd64 golden: the pool clones -arm64.",
			arch:   "arm64", suffixed: arm64, unsuffix: amd64,
			want: GoldenChoice{Arch: "arm64", Name: base + "-arm64", Base: amd64},
		},
		"Arm64PoolClonesTheUnsuffixedArm64Golden": {
			reason: "The unsuffixed golden was made arm64: it is the pool's.",
			arch:   "arm64", unsuffix: arm64,
			want: GoldenChoice{Arch: "arm64", Name: base, Base: arm64},
		},
		"Arm64PoolHeldBesideAnAmd64Golden": {
			reason: "Only an amd64 golden exists: the pool is held, never cloning it.",
			arch:   "arm64", unsuffix: amd64,
			want: GoldenChoice{Arch: "arm64", Name: base + "-arm64", Missing: true, Base: amd64},
		},
		"Arm64PoolHeldWithoutGoldens": {
			reason: "No golden at all: the pool waits for the suffixed one.",
			arch:   "arm64",
			want:   GoldenChoice{Arch: "arm64", Name: base + "-arm64", Missing: true},
		},
		"Arm64PoolDoesNotTakeAnUnknownGolden": {
			reason: "A golden whose URL names no architecture was made before architectures, for the Input's.",
			arch:   "arm64", unsuffix: Candidate{Exists: true},
			want: GoldenChoice{Arch: "arm64", Name: base + "-arm64", Missing: true, Base: Candidate{Exists: true}},
		},
		"InputArchitecturePoolClonesAnUnknownGolden": {
			reason: "A pool of the Input's architecture clones the golden it always has.",
			arch:   "amd64", inputArch: true, unsuffix: Candidate{Exists: true},
			want: GoldenChoice{Arch: "amd64", Name: base, Base: Candidate{Exists: true}},
		},
		"InputArchitecturePoolWithoutGoldenIsTheGoldenGates": {
			reason: "No golden: the golden gate says GoldenMissing as before.",
			arch:   "amd64", inputArch: true,
			want: GoldenChoice{Arch: "amd64", Name: base},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ChooseGolden(base, tc.arch, tc.inputArch, tc.suffixed, tc.unsuffix)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCheckedChoice(t *testing.T) {
	const base = "talos-worker-abc-v1.13.6"
	dv := func(name, url string) *cdiv1.DataVolume {
		d := &cdiv1.DataVolume{Spec: cdiv1.DataVolumeSpec{Source: &cdiv1.DataVolumeSource{HTTP: &cdiv1.DataVolumeSourceHTTP{URL: url}}}}
		d.Name = name
		return d
	}
	cases := map[string]struct {
		reason string
		dv     *cdiv1.DataVolume
		want   GoldenChoice
	}{
		"GoldenOfThePoolsArchitecture": {
			reason: "An amd64 golden for an amd64 pool changes nothing.",
			dv:     dv(base, "https://f/image/abc/v1.13.6/openstack-amd64.raw.xz"),
			want:   GoldenChoice{Arch: "amd64", Name: base},
		},
		"GoldenOfAnotherArchitectureHolds": {
			reason: "The unsuffixed golden was made arm64: an amd64 pool must not clone it.",
			dv:     dv(base, "https://f/image/abc/v1.13.6/openstack-arm64.raw.xz"),
			want:   GoldenChoice{Arch: "amd64", Name: base, Missing: true, Base: Candidate{Exists: true, Arch: "arm64"}},
		},
		"GoldenURLOfAnotherForm": {
			reason: "A URL that names no architecture is taken as the Input's.",
			dv:     dv(base, "https://mirror/talos.raw"),
			want:   GoldenChoice{Arch: "amd64", Name: base},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := CheckedChoice(GoldenChoice{Arch: "amd64", Name: base}, tc.dv)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(GoldenChoice{}, Candidate{})); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestChooseClass(t *testing.T) {
	const base, classed = "talos-worker-abc-v1.13.6", "talos-worker-abc-v1.13.6-amd64-25bf8e1a23"
	byArch := GoldenChoice{Arch: "amd64", Name: base}
	cases := map[string]struct {
		reason  string
		exists  bool
		running string
		want    GoldenChoice
	}{
		"NewPoolClonesItsClasssGolden": {
			reason: "The catalog keeps the image on the pool's class: a new pool clones that golden.",
			exists: true,
			want:   GoldenChoice{Arch: "amd64", Name: classed},
		},
		"NoClassGoldenKeepsTheArchitecturesChoice": {
			reason: "The catalog does not keep the image on the pool's class: the golden of its architecture, which the class gate judges.",
			want:   byArch,
		},
		"RunningPoolKeepsTheGoldenItClones": {
			reason:  "A pool that runs on the golden of its architecture (the copy path, or before the catalog listed its class) keeps it: moving would roll every worker.",
			exists:  true,
			running: base,
			want:    byArch,
		},
		"PoolOfAnotherImageMovesToItsClasssGolden": {
			reason:  "A pool whose running template clones another image makes a new choice: its class's golden.",
			exists:  true,
			running: "talos-worker-abc-v1.12.0",
			want:    GoldenChoice{Arch: "amd64", Name: classed},
		},
		"RunningClassGoldenIsKept": {
			reason:  "A pool cloning its class's golden keeps it, even while the golden is not read.",
			running: classed,
			want:    GoldenChoice{Arch: "amd64", Name: classed},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ChooseClass(byArch, classed, tc.exists, tc.running)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
