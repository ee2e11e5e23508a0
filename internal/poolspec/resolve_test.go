package poolspec

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/defaults"
	"github.com/cozystack/function-worker-image/internal/rules"
)

func testConfig(t *testing.T) config.Config {
	t.Helper()
	cfg, err := config.FromInput(&v1beta1.Input{}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// tenantLayers are a tenant cluster's pool md0 under the cluster's talos.
func tenantLayers(cfg config.Config, s v1alpha1.PoolShape, t v1alpha1.Talos) Layers {
	spec := field.NewPath("spec")
	return Layers{Root: spec.Child("nodePools").Key("md0"), Shape: s, Talos: t, TalosPath: spec.Child("talos"), Config: cfg}
}

func TestResolveImage(t *testing.T) {
	cfg := testConfig(t)
	builtin := &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{Version: "v1.12.4"}}
	inputArch := Setting{Value: cfg.Arch, Field: "Input image.arch"}
	cases := map[string]struct {
		reason string
		layers Layers
		want   Image
	}{
		"NodePoolInputDefaults": {
			reason: "An omitted osImage imports the Input's image over HTTP.",
			layers: NodePoolLayers(field.NewPath("spec"), v1alpha1.NodePoolSpec{}, cfg),
			want: Image{
				Source:      SourceHTTP,
				SchematicID: Setting{Value: defaults.TalosSchematicID, Field: "Input talos.schematicID"},
				Version:     Setting{Value: defaults.TalosVersion, Field: "Input talos.version"},
				FactoryURL:  Setting{Value: defaults.ImageFactoryURL, Field: "Input talos.imageFactoryURL"},
				Arch:        inputArch,
				URL:         defaults.ImageFactoryURL + "/image/" + defaults.TalosSchematicID + "/" + defaults.TalosVersion + "/" + cfg.Platform + "-" + cfg.Arch + ".raw.xz",
			},
		},
		"TenantPoolOverridesClusterTalos": {
			reason: "A tenant pool's builtin version wins over the cluster's talos.version, named at the pool's path.",
			layers: tenantLayers(cfg, v1alpha1.PoolShape{OSImage: builtin}, v1alpha1.Talos{Version: "v1.13.6", SchematicID: "abc"}),
			want: Image{
				Source:          SourceClone,
				SchematicID:     Setting{Value: "abc", Field: "spec.talos.schematicID"},
				Version:         Setting{Value: "v1.12.4", Field: "spec.nodePools[md0].osImage.builtin.version"},
				FactoryURL:      Setting{Value: defaults.ImageFactoryURL, Field: "Input talos.imageFactoryURL"},
				Arch:            inputArch,
				GoldenNamespace: defaults.GoldenNamespace,
				GoldenName:      "talos-worker-abc-v1.12.4",
			},
		},
		"PoolArchitectureNamesTheDiskImage": {
			reason: "A tenant pool's architecture picks the factory's disk image of that architecture.",
			layers: tenantLayers(cfg, v1alpha1.PoolShape{Architecture: "arm64"}, v1alpha1.Talos{}),
			want: Image{
				Source:      SourceHTTP,
				SchematicID: Setting{Value: defaults.TalosSchematicID, Field: "Input talos.schematicID"},
				Version:     Setting{Value: defaults.TalosVersion, Field: "Input talos.version"},
				FactoryURL:  Setting{Value: defaults.ImageFactoryURL, Field: "Input talos.imageFactoryURL"},
				Arch:        Setting{Value: "arm64", Field: "spec.nodePools[md0].architecture"},
				URL:         defaults.ImageFactoryURL + "/image/" + defaults.TalosSchematicID + "/" + defaults.TalosVersion + "/" + cfg.Platform + "-arm64.raw.xz",
			},
		},
		"FactoryURLOfTheMember": {
			reason: "factory.imageFactoryURL wins over the inherited talos block.",
			layers: tenantLayers(cfg, v1alpha1.PoolShape{OSImage: &v1alpha1.OSImage{Factory: &v1alpha1.FactoryImage{ImageFactoryURL: "https://f.example"}}}, v1alpha1.Talos{ImageFactoryURL: "https://g.example"}),
			want: Image{
				Source:      SourceHTTP,
				SchematicID: Setting{Value: defaults.TalosSchematicID, Field: "Input talos.schematicID"},
				Version:     Setting{Value: defaults.TalosVersion, Field: "Input talos.version"},
				FactoryURL:  Setting{Value: "https://f.example", Field: "spec.nodePools[md0].osImage.factory.imageFactoryURL"},
				Arch:        inputArch,
				URL:         "https://f.example/image/" + defaults.TalosSchematicID + "/" + defaults.TalosVersion + "/" + cfg.Platform + "-" + cfg.Arch + ".raw.xz",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ResolveImage(tc.layers)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestInstaller(t *testing.T) {
	cfg := testConfig(t)
	cases := map[string]struct {
		reason    string
		talos     v1alpha1.Talos
		wantValue string
		wantField string
		wantErrAt []string
	}{
		"InheritedRepositoryVerbatim": {
			reason: "An installer the cluster names is used as written.",
			talos:  v1alpha1.Talos{InstallerRepository: "registry.local/installer"}, wantValue: "registry.local/installer", wantField: "spec.talos.installerRepository",
		},
		"DerivedFromTheFactory": {
			reason: "Without one, the factory's installer of the disk's platform.",
			talos:  v1alpha1.Talos{ImageFactoryURL: "https://f.example"}, wantValue: "f.example/" + cfg.Platform + "-installer", wantField: "spec.talos.imageFactoryURL and Input image.platform",
		},
		"LongRepositoryNamedAtItsField": {
			reason: "An installer name too long for its repository is refused at installerRepository, not at the schematic it was joined to.",
			talos:  v1alpha1.Talos{InstallerRepository: "registry.example/" + strings.Repeat("i", 190)}, wantErrAt: []string{"spec.talos.installerRepository"},
		},
		"LongSchematicPathNamedAtItsField": {
			reason: "A mirror's long schematic path beside a short repository is refused at the schematic's field.",
			talos:  v1alpha1.Talos{InstallerRepository: "mirror.internal/installer", SchematicID: strings.Repeat("gpu/", 60) + "x"}, wantErrAt: []string{"spec.talos.schematicID"},
		},
		"FactoryThatMakesNoRepository": {
			reason: "An IP literal cannot start an image reference; the error is at the factory URL's field.",
			talos:  v1alpha1.Talos{ImageFactoryURL: "https://[fd00::1]:8080"}, wantErrAt: []string{"spec.talos.imageFactoryURL"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			l := tenantLayers(cfg, v1alpha1.PoolShape{}, tc.talos)
			got, errs := Installer(l, ResolveImage(l))
			if diff := cmp.Diff(Setting{Value: tc.wantValue, Field: tc.wantField}, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantErrAt, fieldsOrNil(errs)); diff != "" {
				t.Errorf("%s\nerrors at -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func fieldsOrNil(errs field.ErrorList) []string {
	if len(errs) == 0 {
		return nil
	}
	return fields(errs)
}

func TestResolveSize(t *testing.T) {
	cfg := testConfig(t)
	three := int32(3)
	memory, cpuRequest := resource.MustParse("8Gi"), resource.MustParse("500m")
	// The chart's defaults: a 2Gi ephemeral limit and limit/40 in whole
	// bytes as the request, and its MachineHealthCheck values.
	pod := PodResources{EphemeralRequest: *resource.NewQuantity((2<<30)/40, resource.DecimalSI), EphemeralLimit: resource.MustParse("2Gi")}
	hc := HealthCheck{MaxUnhealthy: intstr.FromString("50%"), NodeStartupTimeout: 20 * time.Minute, ReadyUnknownTimeout: 5 * time.Minute, ReadyFalseTimeout: 10 * time.Minute}
	fixed := func(n int32) Scaling {
		return Scaling{MaxSurge: intstr.FromInt32(n), MaxUnavailable: intstr.FromInt32(1)}
	}
	cases := map[string]struct {
		reason string
		shape  v1alpha1.PoolShape
		want   Size
	}{
		"Defaults": {
			reason: "An empty shape runs the default replicas on the default instance type and the Input's disk size.",
			want: Size{Replicas: defaults.Replicas, InstanceType: defaults.InstanceType, DiskSize: cfg.DiskSize, Node: NodeSize{Pending: true},
				Reserved: mustReservations(t, NodeSize{Pending: true}), Pod: pod, Scaling: fixed(max(defaults.Replicas, 1)), HealthCheck: hc},
		},
		"Resources": {
			reason: "A shape sized by resources is parsed once and states the node's size.",
			shape:  v1alpha1.PoolShape{Replicas: &three, Resources: &v1alpha1.Resources{CPU: "4", Memory: "8Gi"}, DiskSize: "40Gi", PodCPURequest: "500m"},
			want: Size{Replicas: 3, Cores: 4, Memory: &memory, DiskSize: resource.MustParse("40Gi"),
				Node:     NodeSize{MemoryBytes: 8 << 30, MilliCPU: 4000, From: "spec.nodePools[md0].resources"},
				Reserved: mustReservations(t, NodeSize{MemoryBytes: 8 << 30, MilliCPU: 4000}),
				Pod:      PodResources{PodCPURequest: &cpuRequest, EphemeralRequest: pod.EphemeralRequest, EphemeralLimit: pod.EphemeralLimit},
				Scaling:  fixed(3), HealthCheck: hc},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, errs := Resolve(tenantLayers(cfg, tc.shape, v1alpha1.Talos{}))
			if len(errs) > 0 {
				t.Fatalf("%s\nrefused: %v", tc.reason, errs)
			}
			if diff := cmp.Diff(tc.want, got.Size); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func mustReservations(t *testing.T, node NodeSize) Reserved {
	t.Helper()
	r, errs := Reservations(nil, nil, node)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return r
}

// A pool that imports its disk over HTTP writes the Talos image into the
// worker disk itself: a disk smaller than the image can only fail to
// import, so it is refused where the size came from, by the minimum the
// catalog holds its goldens to. A clone's floor is its golden's size, a
// hold (nodepool decide GateOnSize), so the same size passes here.
func TestImportDisk(t *testing.T) {
	cfg := testConfig(t)
	small := cfg
	small.DiskSize = resource.MustParse("1Gi")
	factory := &v1alpha1.OSImage{Factory: &v1alpha1.FactoryImage{}}
	builtin := &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{}}
	cases := map[string]struct {
		reason string
		cfg    config.Config
		shape  v1alpha1.PoolShape
		want   string
	}{
		"HTTPDiskHoldsTheImage":  {reason: "The default disk holds the image.", cfg: cfg, shape: v1alpha1.PoolShape{OSImage: factory}},
		"HTTPDiskOfTheImageSize": {reason: "A disk exactly the image's size holds it.", cfg: cfg, shape: v1alpha1.PoolShape{OSImage: factory, DiskSize: "1246Mi"}},
		"HTTPDiskOfFiveBytes": {
			reason: "diskSize: 5 is five bytes: refused at the pool's field, with the minimum and the default as the fix.",
			cfg:    cfg, shape: v1alpha1.PoolShape{OSImage: factory, DiskSize: "5"},
			want: `spec.nodePools[md0].diskSize: Invalid value: "5": is smaller than the Talos disk image (1246Mi), so the import would fail; set diskSize to at least 1246Mi, or omit it for the default 20Gi`,
		},
		"OmittedOSImageIsHTTP": {
			reason: "An omitted osImage imports over HTTP too.",
			cfg:    cfg, shape: v1alpha1.PoolShape{DiskSize: "1Gi"},
			want: `spec.nodePools[md0].diskSize: Invalid value: "1Gi": is smaller than the Talos disk image (1246Mi), so the import would fail; set diskSize to at least 1246Mi, or omit it for the default 20Gi`,
		},
		"HTTPDiskOfOneMilli": {
			reason: "1m is a thousandth of a byte: refused as not whole bytes before any minimum.",
			cfg:    cfg, shape: v1alpha1.PoolShape{OSImage: factory, DiskSize: "1m"},
			want: `spec.nodePools[md0].diskSize: Invalid value: "1m": is not a whole number of bytes (the suffix m is milli: 1m is a thousandth of a byte); write a size such as 20Gi (Mi, Gi for binary megabytes and gigabytes, M, G for decimal)`,
		},
		"CloneDiskOfOneMilli": {
			reason: "Whole bytes hold on the clone path too.",
			cfg:    cfg, shape: v1alpha1.PoolShape{OSImage: builtin, DiskSize: "1m"},
			want: `spec.nodePools[md0].diskSize: Invalid value: "1m": is not a whole number of bytes (the suffix m is milli: 1m is a thousandth of a byte); write a size such as 20Gi (Mi, Gi for binary megabytes and gigabytes, M, G for decimal)`,
		},
		"CloneDiskBelowTheImageIsTheGoldensToJudge": {reason: "On the clone path the golden's size is the floor, a hold once the golden is read.", cfg: cfg, shape: v1alpha1.PoolShape{OSImage: builtin, DiskSize: "5"}},
		"InputDefaultTooSmall": {
			reason: "A pool that takes the Input's default names the Input's field, and offers the pool's own.",
			cfg:    small, shape: v1alpha1.PoolShape{OSImage: factory},
			want: `Input storage.diskSize: Invalid value: "1Gi": is smaller than the Talos disk image (1246Mi), so the import would fail; set the Input's storage.diskSize to at least 1246Mi, or set diskSize on the pool`,
		},
		"NoDefaultToOffer": {
			reason: "A default that is itself too small is not offered as the fix.",
			cfg:    small, shape: v1alpha1.PoolShape{OSImage: factory, DiskSize: "1Mi"},
			want: `spec.nodePools[md0].diskSize: Invalid value: "1Mi": is smaller than the Talos disk image (1246Mi), so the import would fail; set diskSize to at least 1246Mi`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, errs := Resolve(tenantLayers(tc.cfg, tc.shape, v1alpha1.Talos{}))
			if diff := cmp.Diff(tc.want, rules.Message(errs)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
