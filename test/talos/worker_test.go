package talos

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/function-sdk-go/resource/composite"
	"github.com/google/go-cmp/cmp"
	"github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/configpatcher"
	"github.com/siderolabs/talos/pkg/machinery/config/encoder"
	"github.com/siderolabs/talos/pkg/machinery/config/generate"
	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
	"github.com/siderolabs/talos/pkg/machinery/config/machine"
	"github.com/siderolabs/talos/pkg/machinery/config/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/compose/composetest"
	fnconfig "github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/defaults"
	"github.com/cozystack/function-worker-image/internal/nodepool"
	"github.com/cozystack/function-worker-image/internal/required"
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

// rendered is what the node pool mode put into its TalosConfigTemplate, and
// the Kubernetes version of its MachineDeployment (CABPT takes the version
// from the Machine).
type rendered struct {
	TalosVersion      string
	StrategicPatches  []string
	KubernetesVersion string
}

// renderPool runs the node pool mode on an HTTP pool (no golden, so nothing is
// required) with the shipped Input defaults and returns its bootstrap output.
func renderPool(t *testing.T, spec map[string]any) rendered {
	t.Helper()
	cfg, err := fnconfig.FromInput(&v1beta1.Input{}, time.Minute)
	if err != nil {
		t.Fatalf("config.FromInput: %v", err)
	}
	xr := composite.New()
	xr.SetAPIVersion("workerimage.cozystack.io/v1alpha1")
	xr.SetKind("XNodePool")
	xr.SetName("demo-md0")
	xr.SetNamespace("tenant-demo")
	s := map[string]any{"clusterName": "demo"}
	for k, v := range spec {
		s[k] = v
	}
	xr.Object["spec"] = s

	out := composetest.Run(nodepool.Mode{}, composetest.Request{Request: compose.Request{Config: cfg, Composite: xr}, Required: required.Resolved{"instancetype": {u1Medium()}}}).Output
	if out.Fatal != nil {
		t.Fatalf("the node pool mode refused the pool: %v", out.Fatal)
	}
	var r rendered
	for _, dc := range out.Resources {
		obj := dc.Resource.Object
		switch dc.Resource.GetKind() {
		case nodepool.KindTalosConfigTemplate:
			sp := dig(t, obj, "spec", "template", "spec")
			if got := sp["generateType"]; got != "worker" {
				t.Fatalf("generateType is %v, want worker", got)
			}
			r.TalosVersion, _ = sp["talosVersion"].(string)
			patches, _ := sp["strategicPatches"].([]any)
			for _, p := range patches {
				r.StrategicPatches = append(r.StrategicPatches, p.(string))
			}
		case nodepool.KindMachineDeployment:
			r.KubernetesVersion, _ = dig(t, obj, "spec", "template", "spec")["version"].(string)
		}
	}
	if r.TalosVersion == "" || r.KubernetesVersion == "" {
		t.Fatalf("the node pool mode composed no TalosConfigTemplate or MachineDeployment: %v", out.Resources)
	}
	return r
}

// u1Medium is KubeVirt's common instance type u1.medium (1 vCPU, 4Gi), the
// pool's default, which its kubelet reservations are computed from.
func u1Medium() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterInstancetype",
		"metadata": map[string]any{"name": defaults.InstanceType},
		"spec":     map[string]any{"cpu": map[string]any{"guest": int64(1)}, "memory": map[string]any{"guest": "4Gi"}},
	}}
}

func dig(t *testing.T, obj map[string]any, path ...string) map[string]any {
	t.Helper()
	for _, p := range path {
		next, ok := obj[p].(map[string]any)
		if !ok {
			t.Fatalf("no object at %s", strings.Join(path, "."))
		}
		obj = next
	}
	return obj
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
	mirrors := map[string]any{
		"docker.io": map[string]any{"endpoints": []any{"https://mirror.internal", "http://10.0.0.5:5000"}},
		"*":         map[string]any{"endpoints": []any{"https://all.internal"}, "skipFallback": true},
	}
	wantMirrors := map[string][]string{
		"docker.io": {"https://mirror.internal", "http://10.0.0.5:5000"},
		"*":         {"https://all.internal"},
	}
	talos := func(version string, withMirrors bool) map[string]any {
		t := map[string]any{"version": version}
		if withMirrors {
			t["registryMirrors"] = mirrors
		}
		return t
	}
	cases := map[string]struct {
		reason string
		spec   map[string]any
		want   seen
	}{
		"Talos109KeepsThePlainInstaller": {
			reason: "Before Talos 1.10 the factory offers only the plain installer, and machine.registries.mirrors is the only mirror form.",
			spec:   map[string]any{"version": "v1.32", "talos": talos("v1.9.6", true)},
			want: seen{
				Installer:         "factory.talos.dev/installer/" + schematic + ":v1.9.6",
				Mirrors:           wantMirrors,
				LegacyMirrorHosts: []string{"*", "docker.io"},
				Documents:         []string{"v1alpha1"},
			},
		},
		"Talos110WithoutMirrors": {
			reason: "Below 1.12: the openstack installer (the factory has platform installers from 1.10), no grubUseUKICmdline, one v1alpha1 document.",
			spec:   map[string]any{"version": "v1.33", "talos": talos("v1.10.7", false)},
			want: seen{
				Installer: "factory.talos.dev/openstack-installer/" + schematic + ":v1.10.7",
				Documents: []string{"v1alpha1"},
			},
		},
		"Talos111WithMirrors": {
			reason: "Below 1.12 the mirrors are machine.registries.mirrors, the only form Talos 1.11 reads.",
			spec:   map[string]any{"version": "v1.34", "talos": talos("v1.11.5", true)},
			want: seen{
				Installer:         "factory.talos.dev/openstack-installer/" + schematic + ":v1.11.5",
				Mirrors:           wantMirrors,
				LegacyMirrorHosts: []string{"*", "docker.io"},
				Documents:         []string{"v1alpha1"},
			},
		},
		"Talos112WithoutMirrors": {
			reason: "From 1.12 the generated config takes the kernel command line from the installer, so it must be the openstack one.",
			spec:   map[string]any{"version": "v1.35", "talos": talos("v1.12.4", false)},
			want: seen{
				Installer:         "factory.talos.dev/openstack-installer/" + schematic + ":v1.12.4",
				GrubUseUKICmdline: true,
				Documents:         []string{"v1alpha1", "HostnameConfig"},
			},
		},
		"Talos112WithMirrors": {
			reason: "From 1.12 the mirrors are RegistryMirrorConfig documents and the deprecated field stays empty.",
			spec:   map[string]any{"version": "v1.35", "talos": talos("v1.12.4", true)},
			want: seen{
				Installer:         "factory.talos.dev/openstack-installer/" + schematic + ":v1.12.4",
				GrubUseUKICmdline: true,
				Mirrors:           wantMirrors,
				Documents:         []string{"v1alpha1", "HostnameConfig", "RegistryMirrorConfig", "RegistryMirrorConfig"},
			},
		},
		"Talos113DefaultsWithoutMirrors": {
			reason: "The shipped defaults: Talos 1.13, the default schematic, the openstack installer.",
			spec:   map[string]any{},
			want: seen{
				Installer:         "factory.talos.dev/openstack-installer/" + schematic + ":" + defaults.TalosVersion,
				GrubUseUKICmdline: true,
				Documents:         []string{"v1alpha1", "HostnameConfig"},
			},
		},
		"Talos113WithMirrors": {
			reason: "Talos 1.13 reads the RegistryMirrorConfig documents like 1.12.",
			spec:   map[string]any{"talos": talos(defaults.TalosVersion, true)},
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
			r := renderPool(t, tc.spec)
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
