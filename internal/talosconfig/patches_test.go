package talosconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/poolspec"
)

func TestStrategicPatches(t *testing.T) {
	const installer = "factory.talos.dev/openstack-installer/abc:v1.13.6"
	mirrors := map[string]v1alpha1.RegistryMirror{
		"docker.io": {Endpoints: []string{"https://mirror.internal", "http://10.0.0.1:5000"}},
		"*":         {Endpoints: []string{"https://all.internal"}, SkipFallback: true},
	}
	reserved, _ := poolspec.Reservations(nil, nil, poolspec.NodeSize{})
	node, err := NodePatch(Node{Reserved: reserved})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason  string
		version string
		mirrors map[string]v1alpha1.RegistryMirror
		want    []string
	}{
		"InstallerOnly": {
			reason:  "Without mirrors the patch sets the installer image only, whatever the Talos version.",
			version: "v1.13.6",
			want:    []string{"machine:\n  install:\n    image: " + installer + "\n", node},
		},
		"MirrorsInTheMachineConfigBeforeTalos112": {
			reason:  "Talos before 1.12 knows only machine.registries.mirrors.",
			version: "v1.11.5",
			mirrors: mirrors,
			want: []string{"machine:\n  install:\n    image: " + installer + "\n  registries:\n    mirrors:\n" +
				"      '*':\n        endpoints:\n        - https://all.internal\n        skipFallback: true\n" +
				"      docker.io:\n        endpoints:\n        - https://mirror.internal\n        - http://10.0.0.1:5000\n", node},
		},
		"RegistryMirrorConfigDocumentsFromTalos112": {
			reason:  "From Talos 1.12 each mirrored registry is a RegistryMirrorConfig document of its own list entry, in host order; the machine patch keeps the installer only.",
			version: "v1.12.0",
			mirrors: mirrors,
			want: []string{
				"machine:\n  install:\n    image: " + installer + "\n",
				node,
				"apiVersion: v1alpha1\nendpoints:\n- url: https://all.internal\nkind: RegistryMirrorConfig\nname: '*'\nskipFallback: true\n",
				"apiVersion: v1alpha1\nendpoints:\n- url: https://mirror.internal\n- url: http://10.0.0.1:5000\nkind: RegistryMirrorConfig\nname: docker.io\n",
			},
		},
		"PreReleaseOfTalos112CountsAs112": {
			reason:  "CABPT reads talosVersion as major.minor, so a 1.12 pre-release gets the 1.12 config.",
			version: "v1.12.0-beta.1",
			mirrors: map[string]v1alpha1.RegistryMirror{"ghcr.io": {Endpoints: []string{"https://ghcr.internal"}}},
			want: []string{
				"machine:\n  install:\n    image: " + installer + "\n",
				node,
				"apiVersion: v1alpha1\nendpoints:\n- url: https://ghcr.internal\nkind: RegistryMirrorConfig\nname: ghcr.io\n",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := StrategicPatches(installer, tc.version, tc.mirrors, Node{Reserved: reserved})
			if err != nil {
				t.Fatalf("StrategicPatches: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
