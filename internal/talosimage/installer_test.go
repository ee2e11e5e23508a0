package talosimage

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDefaultInstallerRepository(t *testing.T) {
	type args struct{ factoryURL, platform, version string }
	cases := map[string]struct {
		reason  string
		args    args
		want    string
		wantErr string
	}{
		"OpenstackDiskUpgradesWithOpenstackInstaller": {
			reason: "The factory's plain installer is metal; an openstack disk needs openstack-installer, or a Talos >= 1.12 upgrade moves it to talos.platform=metal.",
			args:   args{"https://factory.talos.dev", "openstack", "v1.13.6"},
			want:   "factory.talos.dev/openstack-installer",
		},
		"NocloudDiskUpgradesWithNocloudInstaller": {
			reason: "Every platform but metal is <platform>-installer.",
			args:   args{"https://factory.talos.dev", "nocloud", "v1.12.0"},
			want:   "factory.talos.dev/nocloud-installer",
		},
		"MetalKeepsThePlainInstaller": {
			reason: "The factory builds installer as metal; metal pools keep the name they always rendered.",
			args:   args{"https://factory.talos.dev", "metal", "v1.13.6"},
			want:   "factory.talos.dev/installer",
		},
		"TalosBeforeTheUnifiedInstallerKeepsThePlainInstaller": {
			reason: "The factory offers <platform>-installer only from Talos 1.10 (SupportsUnifiedInstaller).",
			args:   args{"https://factory.talos.dev", "openstack", "v1.9.5"},
			want:   "factory.talos.dev/installer",
		},
		"UnifiedInstallerStartsAtTalos110": {
			reason: "Talos 1.10.0 is the first release with per-platform installers.",
			args:   args{"https://factory.talos.dev", "openstack", "v1.10.0"},
			want:   "factory.talos.dev/openstack-installer",
		},
		"SelfHostedFactoryServesItsOwnInstallers": {
			reason: "The factory's registry lives on its own host and port; the path of the factory URL is not part of an image reference.",
			args:   args{"https://Factory.Example.com:8443/talos/", "openstack", "v1.13.6"},
			want:   "factory.example.com:8443/openstack-installer",
		},
		"UnreadableVersionCountsAsNewest": {
			reason: "A version without vMAJOR.MINOR gets the current naming, as the factory's quirks do.",
			args:   args{"https://factory.talos.dev", "openstack", "latest"},
			want:   "factory.talos.dev/openstack-installer",
		},
		"BadFactoryURLIsRefused": {
			reason:  "The registry host is read from the factory URL, so it must be one.",
			args:    args{"not a url", "openstack", "v1.13.6"},
			wantErr: `imageFactoryURL: Invalid value: "not a url": is not an Image Factory base URL such as https://factory.talos.dev: http(s), a DNS name or IP address, an optional port and path, no user, query or fragment (the image path is appended to it)`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := DefaultInstallerRepository(tc.args.factoryURL, tc.args.platform, tc.args.version)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("%s\n-want error, +got error:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			if err == nil {
				if verr := validateInstallerRepository(got); verr != nil {
					t.Errorf("%s\nthe derived repository %q is not one rules.InstallerRepository accepts: %v", tc.reason, got, verr)
				}
			}
		})
	}
}

func TestAtLeast(t *testing.T) {
	cases := map[string]struct {
		reason       string
		version      string
		major, minor int
		want         bool
	}{
		"SameMinor":        {"A patch release is at least its own minor.", "v1.12.4", 1, 12, true},
		"PreReleaseCounts": {"Talos and CABPT read talosVersion as major.minor only.", "v1.12.0-alpha.1", 1, 12, true},
		"OlderMinor":       {"1.11 is below 1.12.", "v1.11.6", 1, 12, false},
		"NewerMinor":       {"Minors compare as numbers, not strings.", "v1.100.0", 1, 12, true},
		"NewerMajor":       {"A newer major is newer whatever its minor.", "v2.0.0", 1, 12, true},
		"Unreadable":       {"A version without vMAJOR.MINOR counts as the newest.", "main", 1, 12, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := AtLeast(tc.version, tc.major, tc.minor); got != tc.want {
				t.Errorf("%s\nAtLeast(%q, %d, %d) = %v, want %v", tc.reason, tc.version, tc.major, tc.minor, got, tc.want)
			}
		})
	}
}

func TestInstallerPlatform(t *testing.T) {
	cases := map[string]struct {
		reason string
		repo   string
		want   string
		ok     bool
	}{
		"PlainInstallerIsMetal":      {reason: "The factory's legacy name builds the metal profile.", repo: "factory.talos.dev/installer", want: "metal", ok: true},
		"SecureBootMetal":            {reason: "The secure boot variant is metal too.", repo: "factory.talos.dev/installer-secureboot", want: "metal", ok: true},
		"OpenstackInstaller":         {reason: "<platform>-installer names its platform.", repo: "factory.talos.dev/openstack-installer", want: "openstack", ok: true},
		"OpenstackSecureBoot":        {reason: "Its secure boot variant too.", repo: "factory.example.com:5000/openstack-installer-secureboot", want: "openstack", ok: true},
		"MirrorCannotBeTold":         {reason: "A repository not named like a factory installer has no known platform.", repo: "registry.local/talos/custom", ok: false},
		"BareSuffixIsNotAPlatform":   {reason: "\"-installer\" alone names no platform.", repo: "registry.local/-installer", ok: false},
		"GhcrSiderolabsInstallerRaw": {reason: "ghcr.io/siderolabs/installer is the metal installer as well.", repo: "ghcr.io/siderolabs/installer", want: "metal", ok: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := InstallerPlatform(tc.repo)
			if got != tc.want || ok != tc.ok {
				t.Errorf("%s\nInstallerPlatform(%q) = %q, %t; want %q, %t", tc.reason, tc.repo, got, ok, tc.want, tc.ok)
			}
		})
	}
}
