package nodepool

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kubevirtv1 "kubevirt.io/api/core/v1"
	infrav1 "sigs.k8s.io/cluster-api-provider-kubevirt/api/v1alpha1"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/compose/composetest"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/nodepool/render"
	"github.com/cozystack/function-worker-image/internal/poolspec"
)

// renderVM validates a pool shape as the node pool does and renders its
// KubevirtMachineTemplate; a refusal is returned as the message.
func renderVM(t *testing.T, s v1alpha1.PoolShape, in *v1beta1.Input) (*infrav1.KubevirtMachineTemplate, string) {
	t.Helper()
	if in == nil {
		in = &v1beta1.Input{}
	}
	cfg, err := config.FromInput(in, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	spec := v1alpha1.NodePoolSpec{PoolShape: s, ClusterName: "demo"}
	if _, errs := poolspec.NodePool(field.NewPath("spec"), spec, "md0", cfg); len(errs) > 0 {
		return nil, errs.ToAggregate().Error()
	}
	p := pool.Pool{Namespace: "tenant-a", Cluster: "demo", Name: "md0"}
	kmt, err := render.Machine(p, resolveOSImage(spec, cfg), resolveShapeOf(t, spec, cfg), "", render.RenderingRevision, render.DiskSource{})
	if err != nil {
		t.Fatal(err)
	}
	return kmt.KubevirtMachineTemplate, ""
}

func vmi(k *infrav1.KubevirtMachineTemplate) *kubevirtv1.VirtualMachineInstanceTemplateSpec {
	return k.Spec.Template.Spec.VirtualMachineTemplate.Spec.Template
}

func sized(s v1alpha1.PoolShape) v1alpha1.PoolShape {
	s.Resources = &v1alpha1.Resources{CPU: "2", Memory: "4Gi"}
	return s
}

// The chart's own test cases for the virt-launcher CPU pair and the serial
// console (packages/apps/kubernetes-nodes/tests/pod_cpu_limit_test.yaml,
// pod_cpu_request_test.yaml and serial_console_log_test.yaml @69da032),
// re-expressed: what each renders into domain.resources and devices, or the
// refusal. Every case also renders the chart's ephemeral storage beside it.
func TestVMTemplateChartCases(t *testing.T) {
	q := resource.MustParse
	eph := func(l corev1.ResourceList) corev1.ResourceList {
		out := corev1.ResourceList{corev1.ResourceEphemeralStorage: q("2Gi")}
		for k, v := range l {
			out[k] = v
		}
		return out
	}
	ephReq := func(l corev1.ResourceList) corev1.ResourceList {
		out := corev1.ResourceList{corev1.ResourceEphemeralStorage: *resource.NewQuantity(53687091, resource.DecimalSI)}
		for k, v := range l {
			out[k] = v
		}
		return out
	}
	cpu := func(v string) corev1.ResourceList { return corev1.ResourceList{corev1.ResourceCPU: q(v)} }
	on := true
	cases := map[string]struct {
		shape    v1alpha1.PoolShape
		requests corev1.ResourceList
		limits   corev1.ResourceList
		console  *bool
		refused  string
	}{
		"renders the CPU limit the pool asks for onto the worker VM": {
			shape: sized(v1alpha1.PoolShape{PodCPULimit: "3"}), requests: ephReq(nil), limits: eph(cpu("3")),
		},
		"accepts a fractional limit": {
			shape: sized(v1alpha1.PoolShape{PodCPULimit: "1500m"}), requests: ephReq(nil), limits: eph(cpu("1500m")),
		},
		"leaves both to KubeVirt when the pool sets none": {
			shape: sized(v1alpha1.PoolShape{}), requests: ephReq(nil), limits: eph(nil),
		},
		"refuses the limit on a pool still sized by its instancetype": {
			shape: v1alpha1.PoolShape{InstanceType: "u1.medium", PodCPULimit: "3"}, refused: "spec.podCpuLimit: Invalid value: \"3\": cannot be combined with instance type sizing",
		},
		"refuses the limit on a pool sized by the default instancetype": {
			shape: v1alpha1.PoolShape{PodCPULimit: "3"}, refused: "cannot be combined with instance type sizing",
		},
		"renders both sides of the pair when the pool sets both": {
			shape: sized(v1alpha1.PoolShape{PodCPULimit: "3", PodCPURequest: "200m"}), requests: ephReq(cpu("200m")), limits: eph(cpu("3")),
		},
		"accepts a request on its own and renders no limit beside it": {
			shape: sized(v1alpha1.PoolShape{PodCPURequest: "1"}), requests: ephReq(cpu("1")), limits: eph(nil),
		},
		"accepts a fractional pair": {
			shape: sized(v1alpha1.PoolShape{PodCPULimit: "1500m", PodCPURequest: "100m"}), requests: ephReq(cpu("100m")), limits: eph(cpu("1500m")),
		},
		"refuses the request on a pool still sized by its instancetype": {
			shape: v1alpha1.PoolShape{InstanceType: "u1.medium", PodCPURequest: "200m"}, refused: "spec.podCpuRequest: Invalid value: \"200m\": cannot be combined with instance type sizing",
		},
		"refuses a request above its own limit": {
			shape: sized(v1alpha1.PoolShape{PodCPULimit: "1500m", PodCPURequest: "2"}), refused: "spec.podCpuRequest: Invalid value: \"2\": exceeds podCpuLimit \"1500m\"",
		},
		"renders a request of zero rather than treating it as unset": {
			shape: sized(v1alpha1.PoolShape{PodCPURequest: "0"}), requests: ephReq(cpu("0")), limits: eph(nil),
		},
		"refuses a request of zero beside a limit": {
			shape: sized(v1alpha1.PoolShape{PodCPULimit: "3", PodCPURequest: "0"}), refused: "spec.podCpuRequest: Invalid value: \"0\": 0 beside podCpuLimit \"3\" does not reserve nothing",
		},
		"refuses a zero limit with no request beside it": {
			shape: sized(v1alpha1.PoolShape{PodCPULimit: "0"}), refused: "spec.podCpuLimit: Invalid value: \"0\": 0 needs podCpuRequest 0 beside it",
		},
		"accepts a zero request beside a zero limit": {
			shape: sized(v1alpha1.PoolShape{PodCPULimit: "0", PodCPURequest: "0"}), requests: ephReq(cpu("0")), limits: eph(cpu("0")),
		},
		"refuses a negative limit": {
			shape: sized(v1alpha1.PoolShape{PodCPULimit: "-1"}), refused: "spec.podCpuLimit: Invalid value: \"-1\": is not a CPU quantity",
		},
		"omits the serial console by default so the template hash is unchanged": {
			shape: sized(v1alpha1.PoolShape{}), requests: ephReq(nil), limits: eph(nil),
		},
		"omits the serial console when explicitly disabled": {
			shape: sized(v1alpha1.PoolShape{LogSerialConsole: false}), requests: ephReq(nil), limits: eph(nil),
		},
		"asks KubeVirt for the guest console log when enabled": {
			shape: sized(v1alpha1.PoolShape{LogSerialConsole: true}), requests: ephReq(nil), limits: eph(nil), console: &on,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kmt, refused := renderVM(t, tc.shape, nil)
			if tc.refused != "" {
				if !strings.Contains(refused, tc.refused) {
					t.Fatalf("refusal = %q, want it to contain %q", refused, tc.refused)
				}
				return
			}
			if refused != "" {
				t.Fatalf("refused: %s", refused)
			}
			d := vmi(kmt).Spec.Domain
			if diff := cmp.Diff(tc.requests, d.Resources.Requests); diff != "" {
				t.Errorf("requests -want, +got:\n%s", diff)
			}
			if diff := cmp.Diff(tc.limits, d.Resources.Limits); diff != "" {
				t.Errorf("limits -want, +got:\n%s", diff)
			}
			if diff := cmp.Diff(tc.console, d.Devices.LogSerialConsole); diff != "" {
				t.Errorf("logSerialConsole -want, +got:\n%s", diff)
			}
		})
	}
}

// What every pool gets from the chart (nodegroup.yaml:110-111, 151-161,
// 176-177, 209-211 @69da032), what roles and disk settings change, and the
// topology spread the Input hands to every pool (nodegroup.yaml:126-134).
func TestVMTemplateDetails(t *testing.T) {
	chartDisk := kubevirtv1.Disk{
		Name:       pool.SystemVolume,
		DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio, PciAddress: "0000:07:00.0"}},
		BlockSize:  &kubevirtv1.BlockSize{Custom: &kubevirtv1.CustomBlockSize{Logical: 512, Physical: 4096}},
	}
	bridge := []kubevirtv1.Interface{{Name: "default", InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{Bridge: &kubevirtv1.InterfaceBridge{}}}}
	podNet := []kubevirtv1.Network{{Name: "default", NetworkSource: kubevirtv1.NetworkSource{Pod: &kubevirtv1.PodNetwork{}}}}
	spread := corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway}
	own := spread
	own.TopologyKey = "topology.kubernetes.io/zone"
	own.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	withCluster := spread
	withCluster.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"cluster.x-k8s.io/cluster-name": "demo"}}

	type want struct {
		vmLabels, vmiLabels map[string]string
		disk                kubevirtv1.Disk
		spread              []corev1.TopologySpreadConstraint
	}
	cases := map[string]struct {
		reason  string
		shape   v1alpha1.PoolShape
		input   *v1beta1.Input
		want    want
		refused string
	}{
		"ChartDefaults": {
			reason: "A pool that sets nothing gets the chart's disk address, sector sizes, bridge and live-migration annotation.",
			want:   want{disk: chartDisk},
		},
		"Roles": {
			reason: "Each role labels the VM and its virt-launcher Pod (nodegroup.yaml:59-61, 121-123).",
			shape:  v1alpha1.PoolShape{Roles: []string{"ingress-nginx", "edge"}},
			want: want{
				vmLabels:  map[string]string{"node-role.kubernetes.io/ingress-nginx": "", "node-role.kubernetes.io/edge": ""},
				vmiLabels: map[string]string{"node-role.kubernetes.io/ingress-nginx": "", "node-role.kubernetes.io/edge": ""},
				disk:      chartDisk,
			},
		},
		"RoleThatIsNoLabelName": {
			reason:  "node-role.kubernetes.io/<role> must be a label key.",
			shape:   v1alpha1.PoolShape{Roles: []string{"in gress"}},
			refused: `spec.roles[0]: Invalid value: "in gress": does not make the label key node-role.kubernetes.io/<role>`,
		},
		"DuplicateRole": {
			reason:  "A role listed twice is a typo.",
			shape:   v1alpha1.PoolShape{Roles: []string{"edge", "edge"}},
			refused: `spec.roles[1]: Duplicate value: "edge"`,
		},
		"DiskSettings": {
			reason: "disk.pciAddress and disk.blockSize replace the defaults, one side at a time.",
			shape:  v1alpha1.PoolShape{Disk: &v1alpha1.SystemDisk{PCIAddress: "0000:0a:00.0", BlockSize: &v1alpha1.BlockSize{Logical: 4096}}},
			want: want{disk: kubevirtv1.Disk{
				Name:       pool.SystemVolume,
				DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio, PciAddress: "0000:0a:00.0"}},
				BlockSize:  &kubevirtv1.BlockSize{Custom: &kubevirtv1.CustomBlockSize{Logical: 4096, Physical: 4096}},
			}},
		},
		"LogicalAbovePhysical": {
			reason:  "A logical sector cannot span physical sectors.",
			shape:   v1alpha1.PoolShape{Disk: &v1alpha1.SystemDisk{BlockSize: &v1alpha1.BlockSize{Logical: 4096, Physical: 512}}},
			refused: "spec.disk.blockSize.logical: Invalid value: 4096: is larger than physical (512)",
		},
		"EphemeralRequestAboveDefaultLimit": {
			reason:  "A request above the 2Gi default limit is refused.",
			shape:   v1alpha1.PoolShape{EphemeralStorage: &v1alpha1.EphemeralStorage{Request: "3Gi"}},
			refused: `spec.ephemeralStorage.request: Invalid value: "3Gi": exceeds the limit 2Gi`,
		},
		"TopologySpread": {
			reason: "The Input's constraints go on every worker Pod; one without a selector selects the pool's cluster, as the chart's does; one with a selector keeps it.",
			input:  &v1beta1.Input{Scheduling: v1beta1.SchedulingOptions{TopologySpreadConstraints: []corev1.TopologySpreadConstraint{spread, own}}},
			want:   want{disk: chartDisk, spread: []corev1.TopologySpreadConstraint{withCluster, own}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kmt, refused := renderVM(t, tc.shape, tc.input)
			if tc.refused != "" {
				if !strings.Contains(refused, tc.refused) {
					t.Fatalf("%s\nrefusal = %q, want it to contain %q", tc.reason, refused, tc.refused)
				}
				return
			}
			if refused != "" {
				t.Fatalf("%s\nrefused: %s", tc.reason, refused)
			}
			v := vmi(kmt)
			got := want{
				vmLabels:  kmt.Spec.Template.Spec.VirtualMachineTemplate.ObjectMeta.Labels,
				vmiLabels: v.ObjectMeta.Labels,
				disk:      v.Spec.Domain.Devices.Disks[0],
				spread:    v.Spec.TopologySpreadConstraints,
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(bridge, v.Spec.Domain.Devices.Interfaces); diff != "" {
				t.Errorf("interfaces -want, +got:\n%s", diff)
			}
			if diff := cmp.Diff(podNet, v.Spec.Networks); diff != "" {
				t.Errorf("networks -want, +got:\n%s", diff)
			}
			if got := v.ObjectMeta.Annotations[render.AnnAllowPodBridgeLiveMigration]; got != "true" {
				t.Errorf("%s annotation = %q, want \"true\"", render.AnnAllowPodBridgeLiveMigration, got)
			}
		})
	}
}

// The roles reach the Machines (nodegroup.yaml:554-556), which Cluster API
// syncs to the Nodes; the deployment's selector is untouched.
func TestRolesOnTheMachineTemplate(t *testing.T) {
	spec := map[string]any{"roles": []any{"ingress-nginx"}}
	out := composetest.Run(Mode{}, request(t, nodePoolXR(spec), missing, nil)).Output
	if out.Fatal != nil {
		t.Fatal(out.Fatal)
	}
	md := out.Resources[read.ResourceMachineDeployment].Resource.Object
	spec2, _ := md["spec"].(map[string]any)
	tmpl, _ := spec2["template"].(map[string]any)
	meta, _ := tmpl["metadata"].(map[string]any)
	want := map[string]any{
		"cluster.x-k8s.io/cluster-name":         "demo",
		"cluster.x-k8s.io/deployment-name":      "demo-md0",
		"node-role.kubernetes.io/ingress-nginx": "",
	}
	if diff := cmp.Diff(want, meta["labels"]); diff != "" {
		t.Errorf("machine template labels -want, +got:\n%s", diff)
	}
	sel, _ := spec2["selector"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"cluster.x-k8s.io/cluster-name": "demo", "cluster.x-k8s.io/deployment-name": "demo-md0"}, sel["matchLabels"]); diff != "" {
		t.Errorf("selector -want, +got:\n%s", diff)
	}
}

// The Input's Image Factory CA (the chart's talos.imageFactoryCA,
// packages/apps/kubernetes/tests/talos_image_factory_ca_test.yaml @5bb2dd5):
// unset changes nothing; set, the pool composes the ConfigMap and its HTTP
// disk names it by the same name; a clone disk has no HTTP source to name it.
func TestFactoryCA(t *testing.T) {
	const ca = factoryCA
	cases := map[string]struct {
		reason   string
		ca       string
		spec     map[string]any
		world    worldFixture
		certCM   string
		composed bool
		// data is the bundle the ConfigMap must hold; the Input's by
		// default.
		data string
	}{
		"PoolCAWithoutInputCA": {
			reason: "A pool on a mirror of its own names its CA in spec.talos.imageFactoryCA (issue 22): composed as the Input's would be.",
			spec:   map[string]any{"talos": map[string]any{"imageFactoryCA": poolMirrorCA}}, world: missing,
			certCM: "demo-md0-factory-ca", composed: true, data: poolMirrorCA,
		},
		"PoolCAReplacesInputCA": {
			reason: "The pool's CA replaces the platform's: CDI trusts the pool's mirror, not the platform factory.",
			ca:     ca, spec: map[string]any{"talos": map[string]any{"imageFactoryCA": "\n" + poolMirrorCA + "  "}}, world: missing,
			certCM: "demo-md0-factory-ca", composed: true, data: poolMirrorCA,
		},
		"UnsetIsUnchanged": {
			reason: "renders no ConfigMap and leaves certConfigMap off the DataVolume when the field is unset",
			spec:   map[string]any{}, world: missing,
		},
		"HTTPDiskNamesTheConfigMap": {
			reason: "points the DataVolume at the ConfigMap by the same name",
			ca:     ca, spec: map[string]any{}, world: missing, certCM: "demo-md0-factory-ca", composed: true,
		},
		"WhitespaceOnlyIsUnset": {
			reason: "treats a whitespace-only value as unset rather than rendering an empty bundle",
			ca:     "  \n  ", spec: map[string]any{}, world: missing,
		},
		"CloneDiskStillGetsTheConfigMap": {
			reason: "A clone has no HTTP source; the ConfigMap stays for the pool's kept HTTP templates.",
			ca:     ca, spec: map[string]any{"osImage": builtin()}, world: succeeded, composed: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg, err := config.FromInput(&v1beta1.Input{Talos: v1beta1.TalosDefaults{ImageFactoryCA: tc.ca}}, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			r := request(t, nodePoolXR(tc.spec), tc.world, nil)
			r.Config.ImageFactoryCA = cfg.ImageFactoryCA
			out := composetest.Run(Mode{}, r).Output
			if out.Fatal != nil {
				t.Fatal(out.Fatal)
			}
			var gotCM string
			for n, d := range out.Resources {
				if !strings.HasPrefix(string(n), read.PrefixMachineTemplate) {
					continue
				}
				dvs, _ := dig(d.Resource.Object, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates").([]any)
				gotCM, _ = dig(dvs[0].(map[string]any), "spec", "source", "http", "certConfigMap").(string)
			}
			if gotCM != tc.certCM {
				t.Errorf("%s\ncertConfigMap = %q, want %q", tc.reason, gotCM, tc.certCM)
			}
			cm, composed := out.Resources[read.ResourceFactoryCA]
			if composed != tc.composed {
				t.Fatalf("%s\nConfigMap composed = %t, want %t", tc.reason, composed, tc.composed)
			}
			if composed {
				if got := cm.Resource.GetName(); got != "demo-md0-factory-ca" {
					t.Errorf("%s\nConfigMap name = %q", tc.reason, got)
				}
				want := tc.data
				if want == "" {
					want = ca
				}
				data, _ := dig(cm.Resource.Object, "data", "ca.pem").(string)
				if data != want {
					t.Errorf("%s\nca.pem = %q, want the bundle", tc.reason, data)
				}
			}
		})
	}
}

// factoryCA is the example CA of the factory-ca scenario, the Input's.
const factoryCA = "-----BEGIN CERTIFICATE-----\nMIIBrjCCAVOgAwIBAgIUZqCM8QefhjLyBAwlKZ0TsKRujfQwCgYIKoZIzj0EAwIw\nKzEpMCcGA1UEAwwgZnVuY3Rpb24td29ya2VyLWltYWdlLWV4YW1wbGUtY2EwIBcN\nMjYxMjAxMTIyMjA3WhgPMjEyNjExMDcxMjIyMDdaMCsxKTAnBgNVBAMMIGZ1bmN0\naW9uLXdvcmtlci1pbWFnZS1leGFtcGxlLWNhMFkwEwYHKoZIzj0CAQYIKoZIzj0D\nAQcDQgAE09z++2awfopqpfXcyuDFmIEj3+m8/R5vERBpQylqdAzohiubJkv131RT\nrfS/LZOUs18XuvLJ21k7NXkSi9VrGqNTMFEwHQYDVR0OBBYEFEN/+3pzleRb/kK+\nzyyQfm6z30QaMB8GA1UdIwQYMBaAFEN/+3pzleRb/kK+zyyQfm6z30QaMA8GA1Ud\nEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSQAwRgIhAInkcP3Nzj3/X1H//tp5qYqr\n+Iz/7gI0hNv8HAdzkb6kAiEA7Iuc8Aco2P3bR3aPyI8Ne3V/6r4Nu541LWJZgpH2\nbh4=\n-----END CERTIFICATE-----\n"

// poolMirrorCA is a second CA, a pool's own mirror's (openssl req -x509
// -newkey ec, CN function-worker-image-pool-mirror-ca, valid to 2126).
const poolMirrorCA = "-----BEGIN CERTIFICATE-----\nMIIBtTCCAVugAwIBAgIURhQZnnFSt/lrNkGhgM0tRJlozLcwCgYIKoZIzj0EAwIw\nLzEtMCsGA1UEAwwkZnVuY3Rpb24td29ya2VyLWltYWdlLXBvb2wtbWlycm9yLWNh\nMCAXDTI2MTIwMjE0MjExMloYDzIxMjYxMTA4MTQyMTEyWjAvMS0wKwYDVQQDDCRm\ndW5jdGlvbi13b3JrZXItaW1hZ2UtcG9vbC1taXJyb3ItY2EwWTATBgcqhkjOPQIB\nBggqhkjOPQMBBwNCAATeQZgr7ZifPBywWFl9IVWTV6O+qy/sZWEWAqx9Ydpnaawy\nLls75/g30NyMNVfRtgwRrebtRBWv7h7CYzQLpV+uo1MwUTAdBgNVHQ4EFgQUiD1e\nED6CD3xHPljbLte2+n0ysuQwHwYDVR0jBBgwFoAUiD1eED6CD3xHPljbLte2+n0y\nsuQwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiAbu4ZKuPfE0BdW\nqF/E5GZrMhcqr3Si8yHoil6aNwbYEAIhAOzt5nhWBqPObefop+l8DSeOkj9b2M7Q\nj/i0YvXSY/9q\n-----END CERTIFICATE-----\n"

// TestPoolFactoryCARotationRollsNothing: rotating a pool's CA changes what
// it asks for, not its templates (they name the ConfigMap, not its
// content): the deployment stays on its templates, the ConfigMap gets the
// new bundle.
func TestPoolFactoryCARotationRollsNothing(t *testing.T) {
	spec := func(ca string) map[string]any {
		return map[string]any{"osImage": map[string]any{"factory": map[string]any{}}, "talos": map[string]any{"imageFactoryCA": ca}}
	}
	obs := composeOnce(t, spec(factoryCA), missing, mdReady(2))
	kmt, _ := dig(obs[read.ResourceMachineDeployment].Resource.Object, "spec", "template", "spec", "infrastructureRef", "name").(string)
	out := composetest.Run(Mode{}, request(t, nodePoolXR(spec(poolMirrorCA)), missing, obs)).Output
	if out.Fatal != nil {
		t.Fatal(out.Fatal)
	}
	if got, _ := deployedOn(t, out); got != kmt {
		t.Errorf("a CA rotation moved the deployment from %s to %s, which rolls the pool", kmt, got)
	}
	cm, ok := out.Resources[read.ResourceFactoryCA]
	if !ok {
		t.Fatal("the pool's CA ConfigMap is not composed")
	}
	if data, _ := dig(cm.Resource.Object, "data", "ca.pem").(string); data != poolMirrorCA {
		t.Errorf("ca.pem = %q, want the rotated bundle", data)
	}
}

func dig(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

// TestApplicationLabels: with the Input's scheduling.applicationLabels, the
// worker's virt-launcher Pod carries cozystack's lineage labels as the
// kubernetes-nodes chart sets them (templates/nodegroup.yaml:117-124
// @69da032), with this pool's cluster and MachineDeployment; without it,
// none. It enters what every pool asks for, so switching it rolls each
// pool once instead of leaving new and old workers labelled differently.
func TestApplicationLabels(t *testing.T) {
	vmiLabels := func(out compose.Output) map[string]any {
		for n, d := range out.Resources {
			if strings.HasPrefix(string(n), read.PrefixMachineTemplate) {
				l, _ := dig(d.Resource.Object, "spec", "template", "spec", "virtualMachineTemplate", "spec", "template", "metadata", "labels").(map[string]any)
				return l
			}
		}
		t.Fatal("no KubevirtMachineTemplate composed")
		return nil
	}
	spec := map[string]any{"osImage": builtin()}
	off := composetest.Run(Mode{}, request(t, nodePoolXR(spec), succeeded, nil)).Output
	r := request(t, nodePoolXR(spec), succeeded, nil)
	cfg, err := config.FromInput(&v1beta1.Input{Scheduling: v1beta1.SchedulingOptions{ApplicationLabels: true}}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	r.Config = cfg
	on := composetest.Run(Mode{}, r).Output
	for _, out := range []compose.Output{off, on} {
		if out.Fatal != nil {
			t.Fatal(out.Fatal)
		}
	}
	for _, k := range []string{"apps.cozystack.io/application.group", "apps.cozystack.io/application.kind", "apps.cozystack.io/application.name"} {
		if _, ok := vmiLabels(off)[k]; ok {
			t.Errorf("label %s set without scheduling.applicationLabels", k)
		}
	}
	want := map[string]any{
		"apps.cozystack.io/application.group": "apps.cozystack.io",
		"apps.cozystack.io/application.kind":  "Kubernetes",
		"apps.cozystack.io/application.name":  fxCluster,
		"cluster.x-k8s.io/deployment-name":    fxCluster + "-" + fxPool,
	}
	got := vmiLabels(on)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("virt-launcher Pod label %s = %v, want %v (labels %v)", k, got[k], v, got)
		}
	}
	if a, b := deployedOnName(t, off), deployedOnName(t, on); a == b {
		t.Errorf("switching applicationLabels keeps the template %s: new workers would be labelled, running ones not", a)
	}
}

// deployedOnName is the KubevirtMachineTemplate out's deployment runs on.
func deployedOnName(t *testing.T, out compose.Output) string {
	t.Helper()
	kmt, _ := deployedOn(t, out)
	return kmt
}
