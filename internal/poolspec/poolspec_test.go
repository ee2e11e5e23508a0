package poolspec

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/rules"
)

func fields(errs field.ErrorList) []string {
	out := []string{}
	for _, e := range errs {
		out = append(out, e.Field)
	}
	return out
}

// refusedAtEitherPath checks that Resolve refuses shape at the fields want
// (relative to the root), at an XNodePool's spec and at a tenant cluster's
// pool alike.
func refusedAtEitherPath(t *testing.T, reason string, shape v1alpha1.PoolShape, want []string) {
	t.Helper()
	for _, root := range []*field.Path{field.NewPath("spec"), field.NewPath("spec", "nodePools").Key("gpu")} {
		at := make([]string, 0, len(want))
		for _, f := range want {
			at = append(at, root.String()+f)
		}
		_, errs := Resolve(Layers{Root: root, Shape: shape})
		if diff := cmp.Diff(at, fields(errs)); diff != "" {
			t.Errorf("%s\nat %s, fields -want, +got:\n%s", reason, root, diff)
		}
	}
}

func TestShapeAtEitherPath(t *testing.T) {
	two := int32(2)
	cases := map[string]struct {
		reason string
		shape  v1alpha1.PoolShape
		want   []string // fields named, relative to the root
	}{
		"Valid":               {"A pool with every field set.", v1alpha1.PoolShape{Replicas: &two, Resources: &v1alpha1.Resources{CPU: "2", Memory: "4Gi"}, DiskSize: "20Gi", StorageClass: "replicated", OSImage: &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{Version: "v1.13.6"}}}, []string{}},
		"BothSizes":           {"KubeVirt takes the size from one of them.", v1alpha1.PoolShape{InstanceType: "u1.medium", Resources: &v1alpha1.Resources{CPU: "2"}}, []string{".resources"}},
		"MemoryMissing":       {"A VM without an instance type needs memory.", v1alpha1.PoolShape{Resources: &v1alpha1.Resources{CPU: "2"}}, []string{".resources.memory"}},
		"BadInstanceType":     {"An instance type is an object name.", v1alpha1.PoolShape{InstanceType: "U1 Medium"}, []string{".instanceType"}},
		"BadCores":            {"Half a core.", v1alpha1.PoolShape{Resources: &v1alpha1.Resources{CPU: "1.5", Memory: "4Gi"}}, []string{".resources.cpu"}},
		"BadDisk":             {"A negative disk.", v1alpha1.PoolShape{DiskSize: "-1Gi"}, []string{".diskSize"}},
		"BadClass":            {"A class is a subdomain.", v1alpha1.PoolShape{StorageClass: "UPPER"}, []string{".storageClass"}},
		"BothSources":         {"builtin and factory together are ambiguous.", v1alpha1.PoolShape{OSImage: &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{}, Factory: &v1alpha1.FactoryImage{}}}, []string{".osImage"}},
		"BadBuiltinVersion":   {"A leading zero.", v1alpha1.PoolShape{OSImage: &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{Version: "v1.013.6"}}}, []string{".osImage.builtin.version"}},
		"BadFactoryURL":       {"A URL outside the grammar.", v1alpha1.PoolShape{OSImage: &v1alpha1.OSImage{Factory: &v1alpha1.FactoryImage{ImageFactoryURL: "https://u@f.example"}}}, []string{".osImage.factory.imageFactoryURL"}},
		"BadFactorySchematic": {"Uppercase.", v1alpha1.PoolShape{OSImage: &v1alpha1.OSImage{Factory: &v1alpha1.FactoryImage{SchematicID: "ABC"}}}, []string{".osImage.factory.schematicID"}},
		"EveryProblemAtOnce":  {"One pass names every problem.", v1alpha1.PoolShape{DiskSize: "x", StorageClass: "Y"}, []string{".diskSize", ".storageClass"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			refusedAtEitherPath(t, tc.reason, tc.shape, tc.want)
		})
	}
}

// A mirror's multi-segment schematic path reaches the HTTP import and the
// installer; a golden cannot be named by it, so a clone that inherits it is
// refused at the field it came from.
func TestSchematicPath(t *testing.T) {
	root := field.NewPath("spec")
	talos := v1alpha1.Talos{SchematicID: "gpu/nvidia-open"}
	cases := map[string]struct {
		reason string
		shape  v1alpha1.PoolShape
		talos  v1alpha1.Talos
		want   []string
		url    string
	}{
		"FactoryImportsAPath": {"The chart accepts gpu/nvidia-open for the HTTP import.",
			v1alpha1.PoolShape{OSImage: &v1alpha1.OSImage{Factory: &v1alpha1.FactoryImage{SchematicID: "gpu/nvidia-open", Version: "v1.13.6", ImageFactoryURL: "https://mirror.internal"}}}, v1alpha1.Talos{},
			[]string{}, "https://mirror.internal/image/gpu/nvidia-open/v1.13.6/openstack-amd64.raw.xz"},
		"FactoryInheritsAPath": {"factory: {} takes talos.schematicID as it is.",
			v1alpha1.PoolShape{OSImage: &v1alpha1.OSImage{Factory: &v1alpha1.FactoryImage{Version: "v1.13.6", ImageFactoryURL: "https://mirror.internal"}}}, talos,
			[]string{}, "https://mirror.internal/image/gpu/nvidia-open/v1.13.6/openstack-amd64.raw.xz"},
		"BuiltinInheritingAPathIsRefused": {"A golden is talos-worker-<schematicID>-<version>; the error names talos.schematicID, where the path was written.",
			v1alpha1.PoolShape{OSImage: &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{Version: "v1.13.6"}}}, talos,
			[]string{"spec.talos.schematicID"}, ""},
		"BuiltinNamingAPathIsRefused": {"osImage.builtin.schematicID names a golden.",
			v1alpha1.PoolShape{OSImage: &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{SchematicID: "gpu/nvidia-open"}}}, v1alpha1.Talos{},
			[]string{"spec.osImage.builtin.schematicID"}, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, errs := Resolve(Layers{Root: root, Shape: tc.shape, Talos: tc.talos, TalosPath: root.Child("talos"), Config: config.Config{Platform: "openstack", Arch: "amd64", SchematicID: "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"}})
			if diff := cmp.Diff(tc.want, fields(errs)); diff != "" {
				t.Errorf("%s\nfields -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.url, p.Image.URL); diff != "" {
				t.Errorf("%s\ndisk URL -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestAsWritten(t *testing.T) {
	root := field.NewPath("spec", "nodePools").Key("gpu")
	cases := map[string]struct {
		reason   string
		raw      map[string]any
		want     []string
		wantSkip []string
	}{
		"Valid":           {"Nothing to report.", map[string]any{"replicas": float64(3), "osImage": map[string]any{"builtin": nil}}, []string{}, nil},
		"WrappingInt32":   {"2^32+1 is refused before int32 wraps it.", map[string]any{"replicas": float64(4294967297)}, []string{"spec.nodePools[gpu].replicas"}, []string{"spec.nodePools[gpu].replicas"}},
		"UnknownMember":   {"A typo would select the HTTP path.", map[string]any{"osImage": map[string]any{"buitin": map[string]any{}}}, []string{"spec.nodePools[gpu].osImage.buitin"}, []string{"spec.nodePools[gpu].osImage.buitin"}},
		"UnknownInMember": {"builtin takes no imageFactoryURL.", map[string]any{"osImage": map[string]any{"builtin": map[string]any{"imageFactoryURL": "x"}}}, []string{"spec.nodePools[gpu].osImage.builtin.imageFactoryURL"}, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			errs, skip := AsWritten(root, tc.raw)
			if diff := cmp.Diff(tc.want, fields(errs)); diff != "" {
				t.Errorf("%s\nfields -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantSkip, skip); diff != "" {
				t.Errorf("%s\nskip -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestTalos(t *testing.T) {
	root := field.NewPath("spec", "talos")
	cases := map[string]struct {
		reason string
		talos  v1alpha1.Talos
		want   []string
	}{
		"Valid": {"Every field.", v1alpha1.Talos{Version: "v1.13.6", SchematicID: "abc", ImageFactoryURL: "https://factory.talos.dev", InstallerRepository: "factory.talos.dev/openstack-installer",
			RegistryMirrors: map[string]v1alpha1.RegistryMirror{"docker.io": {Endpoints: []string{"https://mirror.example:5000"}}}}, []string{}},
		"MirrorEndpointWithNewline": {"A newline never reaches the machine config.", v1alpha1.Talos{RegistryMirrors: map[string]v1alpha1.RegistryMirror{"docker.io": {Endpoints: []string{"https://m.example\n  evil: true"}}}}, []string{"spec.talos.registryMirrors[docker.io].endpoints[0]"}},
		"MirrorWithoutEndpoints":    {"A mirror needs an endpoint.", v1alpha1.Talos{RegistryMirrors: map[string]v1alpha1.RegistryMirror{"docker.io": {}}}, []string{"spec.talos.registryMirrors[docker.io].endpoints"}},
		"MirrorHostWithScheme":      {"A key is a host.", v1alpha1.Talos{RegistryMirrors: map[string]v1alpha1.RegistryMirror{"https://docker.io": {Endpoints: []string{"https://m.example"}}}}, []string{"spec.talos.registryMirrors[https://docker.io]"}},
		"InstallerWithScheme":       {"A repository is no URL.", v1alpha1.Talos{InstallerRepository: "https://f/installer"}, []string{"spec.talos.installerRepository"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, fields(Talos(root, tc.talos))); diff != "" {
				t.Errorf("%s\nfields -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestDeploymentName(t *testing.T) {
	clusterPath, poolPath := field.NewPath("spec", "clusterName"), field.NewPath("spec", "poolName")
	cases := map[string]struct {
		reason        string
		cluster, pool string
		want          string
	}{
		"Fits":        {reason: "demo-md0 is a label.", cluster: "demo", pool: "md0"},
		"ExactlyFits": {reason: "63 characters are a label.", cluster: strings.Repeat("c", 31), pool: strings.Repeat("p", 31)},
		"ClusterWithDot": {
			reason:  "A dotted cluster name is refused at the cluster's field, whatever the pool.",
			cluster: "a.b", pool: "md0",
			want: `spec.clusterName: Invalid value: "a.b": cannot be part of the MachineDeployment name <cluster>-<pool> (also a label value), which is a DNS-1123 label (must not contain dots); use lowercase letters, digits and '-', starting and ending with a letter or digit`,
		},
		"PoolUppercase": {
			reason:  "An uppercase pool name is refused at the pool's field.",
			cluster: "demo", pool: "MD0",
			want: `spec.poolName: Invalid value: "MD0": cannot be part of the MachineDeployment name <cluster>-<pool> (also a label value), which is a DNS-1123 label (a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')); use lowercase letters, digits and '-', starting and ending with a letter or digit`,
		},
		"PoolTooLong": {
			reason:  "A long pool name beside a short cluster is the pool's to shorten.",
			cluster: "demo", pool: strings.Repeat("p", 60),
			want: `spec.poolName: Invalid value: "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp": is 60 characters and, with spec.clusterName "demo" (4 characters), makes the MachineDeployment name <cluster>-<pool> (also a label value) 65 characters long, more than the 63 a DNS-1123 label holds; shorten spec.poolName to at most 58 characters, or spec.clusterName to at most 2`,
		},
		"ClusterTooLong": {
			reason:  "A long cluster name beside a short pool is refused at the cluster's field, not as the pool's to shorten.",
			cluster: strings.Repeat("c", 60), pool: "workers",
			want: `spec.clusterName: Invalid value: "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc": is 60 characters and, with spec.poolName "workers" (7 characters), makes the MachineDeployment name <cluster>-<pool> (also a label value) 68 characters long, more than the 63 a DNS-1123 label holds; shorten spec.clusterName to at most 55 characters, or spec.poolName to at most 2`,
		},
		"ClusterLeavesNoRoom": {
			reason:  "A cluster name of 63 leaves the pool no room: only the cluster's field is offered.",
			cluster: strings.Repeat("c", 63), pool: "md0",
			want: `spec.clusterName: Invalid value: "ccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc": is 63 characters and, with spec.poolName "md0" (3 characters), makes the MachineDeployment name <cluster>-<pool> (also a label value) 67 characters long, more than the 63 a DNS-1123 label holds; shorten spec.clusterName to at most 59 characters`,
		},
		"BothTooLong": {
			reason:  "When either alone fills the name, both are to be shortened.",
			cluster: strings.Repeat("c", 62), pool: strings.Repeat("p", 62),
			want: `spec.poolName: Invalid value: "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp": is 62 characters and, with spec.clusterName "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc" (62 characters), makes the MachineDeployment name <cluster>-<pool> (also a label value) 125 characters long, more than the 63 a DNS-1123 label holds; shorten both, to at most 62 characters together`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := rules.Message(DeploymentName(clusterPath, tc.cluster, poolPath, tc.pool))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestGoldenNamespace(t *testing.T) {
	path := field.NewPath("spec", "goldenNamespace")
	platform := config.Config{GoldenNamespace: "images", ExtraGoldenNamespaces: []string{"images-next"}}
	cases := map[string]struct {
		reason string
		ns     string
		want   string // "" when accepted
	}{
		"InputsNamespace":      {"The Input's goldenNamespace is where the platform's goldens live.", "images", ""},
		"SchemaDefault":        {"cozy-public is what the schema defaults every composite to.", "cozy-public", ""},
		"ListedNamespace":      {"A second catalog's namespace the Input lists, while pools move onto it.", "images-next", ""},
		"AnotherTenant":        {"A tenant's namespace would make the pool read and protect (Usages) its golden-named objects.", "tenant-a", `spec.goldenNamespace: Invalid value: "tenant-a": is not a namespace the platform keeps golden images in (cozy-public, images, images-next); omit it for images, or ask the platform to add it to the function Input's goldenNamespaces`},
		"NotANamespaceName":    {"Syntax first: a path is no namespace.", "../tenant-a", `spec.goldenNamespace: Invalid value: "../tenant-a"`},
		"UppercaseOfAnAllowed": {"A name that lowercases to an allowed one is another name.", "Images", `spec.goldenNamespace: Invalid value: "Images"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := GoldenNamespace(path, tc.ns, platform).ToAggregate()
			switch {
			case tc.want == "" && got != nil:
				t.Errorf("%s\nwant accepted, got: %v", tc.reason, got)
			case tc.want != "" && (got == nil || !strings.HasPrefix(got.Error(), tc.want)):
				t.Errorf("%s\nwant an error starting %q, got: %v", tc.reason, tc.want, got)
			}
		})
	}
}
