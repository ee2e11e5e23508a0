package nodepool

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
)

func TestResolveInstallerRepository(t *testing.T) {
	builtinSpec := func(talos v1alpha1.Talos) v1alpha1.NodePoolSpec {
		return v1alpha1.NodePoolSpec{Talos: talos, PoolShape: v1alpha1.PoolShape{OSImage: &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{}}}}
	}
	cases := map[string]struct {
		reason  string
		input   v1beta1.Input
		spec    v1alpha1.NodePoolSpec
		want    pool.Setting
		wantErr string
	}{
		"DefaultIsTheOpenstackInstaller": {
			reason: "The default disk is openstack, so its installer is openstack-installer, not the factory's plain (metal) installer.",
			want:   pool.Setting{Value: "factory.talos.dev/openstack-installer", Field: "Input talos.imageFactoryURL and Input image.platform"},
		},
		"MetalPlatformKeepsThePlainInstaller": {
			reason: "The factory's plain installer is the metal one.",
			input:  v1beta1.Input{Image: v1beta1.ImageOptions{Platform: "metal"}},
			want:   pool.Setting{Value: "factory.talos.dev/installer", Field: "Input talos.imageFactoryURL and Input image.platform"},
		},
		"SelfHostedFactoryOfThePool": {
			reason: "A pool on a self-hosted factory pulls that factory's installer.",
			spec:   v1alpha1.NodePoolSpec{Talos: v1alpha1.Talos{ImageFactoryURL: "https://images.corp.example:5443"}},
			want:   pool.Setting{Value: "images.corp.example:5443/openstack-installer", Field: "spec.talos.imageFactoryURL and Input image.platform"},
		},
		"FactoryOverrideOfTheOSImage": {
			reason: "osImage.factory.imageFactoryURL is where the disk came from, so the installer comes from there too.",
			spec: v1alpha1.NodePoolSpec{PoolShape: v1alpha1.PoolShape{OSImage: &v1alpha1.OSImage{Factory: &v1alpha1.FactoryImage{
				ImageFactoryURL: "http://mirror.local/factory/",
			}}}},
			want: pool.Setting{Value: "mirror.local/openstack-installer", Field: "spec.osImage.factory.imageFactoryURL and Input image.platform"},
		},
		"OldTalosOfTheOSImage": {
			reason: "The version that decides the name is the resolved image's: before Talos 1.10 the factory offers only the plain installer.",
			spec: v1alpha1.NodePoolSpec{PoolShape: v1alpha1.PoolShape{OSImage: &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{
				Version: "v1.9.6",
			}}}},
			want: pool.Setting{Value: "factory.talos.dev/installer", Field: "Input talos.imageFactoryURL and Input image.platform"},
		},
		"SpecRepositoryWinsVerbatim": {
			reason: "An explicit repository is used as written, even the metal one.",
			input:  v1beta1.Input{Talos: v1beta1.TalosDefaults{InstallerRepository: "registry.internal/talos/installer"}},
			spec:   v1alpha1.NodePoolSpec{Talos: v1alpha1.Talos{InstallerRepository: "factory.talos.dev/installer"}},
			want:   pool.Setting{Value: "factory.talos.dev/installer", Field: "spec.talos.installerRepository"},
		},
		"InputRepositoryWinsOverTheDerivedOne": {
			reason: "The Input's repository is the platform's explicit choice.",
			input:  v1beta1.Input{Talos: v1beta1.TalosDefaults{InstallerRepository: "registry.internal/talos/installer"}},
			want:   pool.Setting{Value: "registry.internal/talos/installer", Field: "Input talos.installerRepository"},
		},
		"BadFactoryURLOfACloneIsFatalWhenTheInstallerComesFromIt": {
			reason:  "A clone needs no HTTP source, but its installer host is read from the factory URL; the message offers both fixes.",
			spec:    builtinSpec(v1alpha1.Talos{ImageFactoryURL: "not a url"}),
			wantErr: `XNodePool "tenant-a/demo-md0": spec.talos.imageFactoryURL: Invalid value: "not a url": is not an Image Factory base URL such as https://factory.talos.dev: http(s), a DNS name or IP address, an optional port and path, no user, query or fragment (the image path is appended to it)`,
		},
		"IPFactoryMakesNoRepositoryOfAClone": {
			reason:  "A factory URL with an IP literal host is a URL, but [fd00::1] cannot start an image reference; the message offers both fixes.",
			spec:    builtinSpec(v1alpha1.Talos{ImageFactoryURL: "https://[fd00::1]:8080"}),
			wantErr: `XNodePool "tenant-a/demo-md0": spec.talos.imageFactoryURL: Invalid value: "https://[fd00::1]:8080": makes no installer repository ("[fd00::1]:8080/openstack-installer" is not an image repository); the default installer is <factory host>/openstack-installer, so give the factory a DNS name, or set talos.installerRepository`,
		},
		"BadFactoryURLOfACloneIsFineWithAnExplicitRepository": {
			reason: "With an explicit repository the factory URL plays no part in a clone.",
			spec:   builtinSpec(v1alpha1.Talos{ImageFactoryURL: "not a url", InstallerRepository: "registry.internal/openstack-installer"}),
			want:   pool.Setting{Value: "registry.internal/openstack-installer", Field: "spec.talos.installerRepository"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg, err := config.FromInput(&tc.input, time.Minute)
			if err != nil {
				t.Fatalf("config.FromInput: %v", err)
			}
			img := resolveOSImage(tc.spec, cfg)
			got, err := decide.ResolveInstallerRepository(fxPoolID, tc.spec, cfg, img)
			if os.Getenv("PRINT_WANT") != "" {
				fmt.Printf("%s\t%s\n", name, errString(err))
			}
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("%s\n-want error, +got error:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
