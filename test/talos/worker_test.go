package talos

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/configpatcher"
	"github.com/siderolabs/talos/pkg/machinery/config/encoder"
	"github.com/siderolabs/talos/pkg/machinery/config/generate"
	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
	"github.com/siderolabs/talos/pkg/machinery/config/machine"
	"github.com/siderolabs/talos/pkg/machinery/config/validation"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/input/v1beta1"
	fnconfig "github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/defaults"
	"github.com/cozystack/function-worker-image/internal/matrix"
	"github.com/cozystack/function-worker-image/internal/poolspec"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
	"github.com/cozystack/function-worker-image/internal/talosimage"
)

// runtimeMode is a Talos runtime mode as machined defines it
// (siderolabs/talos internal/app/machined/pkg/runtime/mode.go, not importable:
// it is internal to the root module).
type runtimeMode struct {
	name            string
	requiresInstall bool
	inContainer     bool
}

func (m runtimeMode) String() string        { return m.name }
func (m runtimeMode) RequiresInstall() bool { return m.requiresInstall }
func (m runtimeMode) InContainer() bool     { return m.inContainer }

// cloudMode is the mode a worker booted from the openstack disk runs in
// (platform/openstack/openstack.go: Mode() is runtime.ModeCloud), and the one
// the config is validated in. Container mode is Talos in Docker and demands
// host DNS settings no VM has. Metal mode additionally demands an install
// disk, which neither CABPT's generated worker config nor this function sets:
// a worker booted from a disk image is already installed, so that check says
// nothing about what the function renders (a metal-platform pool would need
// install.disk from somewhere else).
var cloudMode = runtimeMode{name: "cloud"}

// rendered is a worker's TalosConfig spec as the node pool composes it for
// generateType: worker, and the Kubernetes release of its MachineDeployment
// (CABPT takes the version from the Machine).
type rendered struct {
	TalosVersion      string
	StrategicPatches  []string
	KubernetesVersion string
}

// worker is what the node pool resolves a pool to before it renders the
// pool's Talos config: the Talos version and Kubernetes minor, the registry
// mirrors and the node config (labels, taints, modules, reservations).
type worker struct {
	Talos, Kubernetes string
	Mirrors           map[string]v1alpha1.RegistryMirror
	Node              talosconfig.Node
}

// defaultWorker is a pool of the shipped defaults on the default instance
// type, u1.medium (1 vCPU, 4Gi).
func defaultWorker(t *testing.T) worker {
	t.Helper()
	return worker{Talos: defaults.TalosVersion, Kubernetes: defaults.KubernetesVersion, Node: node1CPU4Gi(t, v1alpha1.PoolShape{})}
}

// node1CPU4Gi is the node config of shape on u1.medium.
func node1CPU4Gi(t *testing.T, shape v1alpha1.PoolShape) talosconfig.Node {
	t.Helper()
	return nodeOf(t, shape, poolspec.NodeSize{MilliCPU: 1000, MemoryBytes: 4 << 30})
}

// nodeOf is the node config of shape on a node of size.
func nodeOf(t *testing.T, shape v1alpha1.PoolShape, size poolspec.NodeSize) talosconfig.Node {
	t.Helper()
	reserved, errs := poolspec.Reservations(nil, shape.Kubelet, size)
	if len(errs) > 0 {
		t.Fatalf("poolspec.Reservations: %v", errs)
	}
	return talosconfig.ResolveNode(shape, poolspec.SplitLabels(shape.Labels, nil), reserved)
}

// inputConfig is the function's configuration from an empty Input: the
// shipped defaults.
func inputConfig(t *testing.T) fnconfig.Config {
	t.Helper()
	cfg, err := fnconfig.FromInput(&v1beta1.Input{}, time.Minute)
	if err != nil {
		t.Fatalf("config.FromInput: %v", err)
	}
	return cfg
}

// installer is the pool's installer image: the default Image Factory's
// installer for the default platform, as a pool without overrides gets it.
func installer(t *testing.T, talos string) string {
	t.Helper()
	repo, err := talosimage.DefaultInstallerRepository(defaults.ImageFactoryURL, defaults.ImagePlatform, talos)
	if err != nil {
		t.Fatalf("talosimage.DefaultInstallerRepository: %v", err)
	}
	return talosimage.InstallerImage(repo, defaults.TalosSchematicID, talos)
}

// renderWorker renders w's Talos config with talosconfig, as the node pool
// does for a Generate pool.
func renderWorker(t *testing.T, w worker) rendered {
	t.Helper()
	patches, err := talosconfig.StrategicPatches(installer(t, w.Talos), w.Talos, w.Mirrors, w.Node)
	if err != nil {
		t.Fatalf("talosconfig.StrategicPatches: %v", err)
	}
	return rendered{TalosVersion: w.Talos, StrategicPatches: patches, KubernetesVersion: matrix.Release(inputConfig(t), w.Kubernetes)}
}

// workerConfig does what CABPT does for generateType: worker
// (cluster-api-bootstrap-provider-talos v0.6.12 controllers/
// talosconfig_controller.go, genConfigs and reconcileGenerate): the version
// contract from talosVersion, a secrets bundle, generate.NewInput and
// Config(worker); then each strategic patch through configpatcher.LoadPatch,
// all applied in order with configpatcher.Apply.
func workerConfig(r rendered) (config.Provider, error) {
	contract, err := config.ParseContractFromVersion(r.TalosVersion)
	if err != nil {
		return nil, fmt.Errorf("talosVersion %q: %w", r.TalosVersion, err)
	}
	bundle, err := secrets.NewBundle(secrets.NewFixedClock(time.Now()), contract)
	if err != nil {
		return nil, fmt.Errorf("secrets bundle: %w", err)
	}
	in, err := generate.NewInput("demo", "https://10.0.0.1:6443", strings.TrimPrefix(r.KubernetesVersion, "v"),
		generate.WithDNSDomain("cluster.local"),
		generate.WithVersionContract(contract),
		generate.WithSecretsBundle(bundle),
	)
	if err != nil {
		return nil, fmt.Errorf("generate input: %w", err)
	}
	generated, err := in.Config(machine.TypeWorker)
	if err != nil {
		return nil, fmt.Errorf("generate worker config: %w", err)
	}
	data, err := generated.EncodeString(encoder.WithComments(encoder.CommentsDisabled))
	if err != nil {
		return nil, fmt.Errorf("encode generated config: %w", err)
	}
	patches := make([]configpatcher.Patch, 0, len(r.StrategicPatches))
	for i, p := range r.StrategicPatches {
		patch, err := configpatcher.LoadPatch([]byte(p))
		if err != nil {
			return nil, fmt.Errorf("strategicPatches[%d]: failure loading StrategicPatch: %w", i, err)
		}
		patches = append(patches, patch)
	}
	out, err := configpatcher.Apply(configpatcher.WithBytes([]byte(data)), patches)
	if err != nil {
		return nil, fmt.Errorf("failure applying StrategicPatches: %w", err)
	}
	return out.Config()
}

// seen is what Talos reads from the patched config, as plain data.
type seen struct {
	Installer string
	// GrubUseUKICmdline is why the installer flavour matters from 1.12.
	GrubUseUKICmdline bool
	// Mirrors are the effective registry mirrors, host to endpoints, from
	// whichever form carried them.
	Mirrors map[string][]string
	// LegacyMirrorHosts are the hosts in machine.registries.mirrors.
	LegacyMirrorHosts []string
	// Documents are the kinds of the config's documents, in order (from 1.12
	// Talos' generator adds a HostnameConfig of its own).
	Documents []string
}

func read(cfg config.Provider) seen {
	s := seen{
		Installer:         cfg.Machine().Install().Image(),
		GrubUseUKICmdline: cfg.Machine().Install().GrubUseUKICmdline(),
	}
	for host, m := range cfg.RegistryMirrorConfigs() {
		if s.Mirrors == nil {
			s.Mirrors = map[string][]string{}
		}
		for _, ep := range m.Endpoints() {
			s.Mirrors[host] = append(s.Mirrors[host], ep.Endpoint())
		}
	}
	//nolint:staticcheck // reading the deprecated field is the point: it must stay empty from 1.12.
	for host := range cfg.RawV1Alpha1().MachineConfig.MachineRegistries.RegistryMirrors {
		s.LegacyMirrorHosts = append(s.LegacyMirrorHosts, host)
	}
	slices.Sort(s.LegacyMirrorHosts)
	for _, d := range cfg.Documents() {
		s.Documents = append(s.Documents, d.Kind())
	}
	return s
}

func TestRenderedPatchesMakeAValidWorkerConfig(t *testing.T) {
	schematic := defaults.TalosSchematicID
	mirrors := map[string]v1alpha1.RegistryMirror{
		"docker.io": {Endpoints: []string{"https://mirror.internal", "http://10.0.0.5:5000"}},
		"*":         {Endpoints: []string{"https://all.internal"}, SkipFallback: true},
	}
	wantMirrors := map[string][]string{
		"docker.io": {"https://mirror.internal", "http://10.0.0.5:5000"},
		"*":         {"https://all.internal"},
	}
	pool := func(talos, kubernetes string, withMirrors bool) worker {
		w := defaultWorker(t)
		w.Talos, w.Kubernetes = talos, kubernetes
		if withMirrors {
			w.Mirrors = mirrors
		}
		return w
	}
	cases := map[string]struct {
		reason string
		pool   worker
		want   seen
	}{
		"Talos109KeepsThePlainInstaller": {
			reason: "Before Talos 1.10 the factory offers only the plain installer, and machine.registries.mirrors is the only mirror form.",
			pool:   pool("v1.9.6", "v1.32", true),
			want: seen{
				Installer:         "factory.talos.dev/installer/" + schematic + ":v1.9.6",
				Mirrors:           wantMirrors,
				LegacyMirrorHosts: []string{"*", "docker.io"},
				Documents:         []string{"v1alpha1"},
			},
		},
		"Talos110WithoutMirrors": {
			reason: "Below 1.12: the openstack installer (the factory has platform installers from 1.10), no grubUseUKICmdline, one v1alpha1 document.",
			pool:   pool("v1.10.7", "v1.33", false),
			want: seen{
				Installer: "factory.talos.dev/openstack-installer/" + schematic + ":v1.10.7",
				Documents: []string{"v1alpha1"},
			},
		},
		"Talos111WithMirrors": {
			reason: "Below 1.12 the mirrors are machine.registries.mirrors, the only form Talos 1.11 reads.",
			pool:   pool("v1.11.5", "v1.34", true),
			want: seen{
				Installer:         "factory.talos.dev/openstack-installer/" + schematic + ":v1.11.5",
				Mirrors:           wantMirrors,
				LegacyMirrorHosts: []string{"*", "docker.io"},
				Documents:         []string{"v1alpha1"},
			},
		},
		"Talos112WithoutMirrors": {
			reason: "From 1.12 the generated config takes the kernel command line from the installer, so it must be the openstack one.",
			pool:   pool("v1.12.4", "v1.35", false),
			want: seen{
				Installer:         "factory.talos.dev/openstack-installer/" + schematic + ":v1.12.4",
				GrubUseUKICmdline: true,
				Documents:         []string{"v1alpha1", "HostnameConfig"},
			},
		},
		"Talos112WithMirrors": {
			reason: "From 1.12 the mirrors are RegistryMirrorConfig documents and the deprecated field stays empty.",
			pool:   pool("v1.12.4", "v1.35", true),
			want: seen{
				Installer:         "factory.talos.dev/openstack-installer/" + schematic + ":v1.12.4",
				GrubUseUKICmdline: true,
				Mirrors:           wantMirrors,
				Documents:         []string{"v1alpha1", "HostnameConfig", "RegistryMirrorConfig", "RegistryMirrorConfig"},
			},
		},
		"Talos113DefaultsWithoutMirrors": {
			reason: "The shipped defaults: Talos 1.13, the default schematic, the openstack installer.",
			pool:   defaultWorker(t),
			want: seen{
				Installer:         "factory.talos.dev/openstack-installer/" + schematic + ":" + defaults.TalosVersion,
				GrubUseUKICmdline: true,
				Documents:         []string{"v1alpha1", "HostnameConfig"},
			},
		},
		"Talos113WithMirrors": {
			reason: "Talos 1.13 reads the RegistryMirrorConfig documents like 1.12.",
			pool:   pool(defaults.TalosVersion, defaults.KubernetesVersion, true),
			want: seen{
				Installer:         "factory.talos.dev/openstack-installer/" + schematic + ":" + defaults.TalosVersion,
				GrubUseUKICmdline: true,
				Mirrors:           wantMirrors,
				Documents:         []string{"v1alpha1", "HostnameConfig", "RegistryMirrorConfig", "RegistryMirrorConfig"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := renderWorker(t, tc.pool)
			cfg, err := workerConfig(r)
			if err != nil {
				t.Fatalf("%s\nTalos could not build the worker config from the rendered template: %v\nstrategicPatches:\n%s", tc.reason, err, strings.Join(r.StrategicPatches, "---\n"))
			}
			if warnings, err := cfg.Validate(cloudMode, validation.WithStrict()); err != nil || len(warnings) > 0 {
				t.Errorf("%s\nstrict validation in %s mode failed: %v (warnings %q)", tc.reason, cloudMode, err, warnings)
			}
			if diff := cmp.Diff(tc.want, read(cfg)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
