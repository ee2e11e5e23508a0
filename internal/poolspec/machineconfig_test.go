package poolspec

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
)

// TestMachineAtEitherPath re-expresses the refusals of the chart's
// tests/node_labels_taints_test.yaml@27f0283 and
// tests/kernel_modules_test.yaml@c1ea547 at both pool paths.
func TestMachineAtEitherPath(t *testing.T) {
	sized := &v1alpha1.Resources{CPU: "8", Memory: "16Gi"}
	mods := func(m ...v1alpha1.KernelModule) *[]v1alpha1.KernelModule { return &m }
	cases := map[string]struct {
		reason string
		shape  v1alpha1.PoolShape
		want   []string
	}{
		"Valid": {"Labels, two kinds of taint, a GPU, explicit modules, overrides.", v1alpha1.PoolShape{
			Resources:     sized,
			Labels:        map[string]string{"workload": "batch", "example.com/tier": "gold"},
			Taints:        []v1alpha1.Taint{{Key: "dedicated", Value: "batch", Effect: "NoSchedule"}, {Key: "example.com/spot", Effect: "PreferNoSchedule"}},
			GPUs:          []v1alpha1.GPU{{Name: "nvidia.com/GH200"}},
			KernelModules: mods(v1alpha1.KernelModule{Name: "nvidia", Parameters: []string{"NVreg_RegistryDwords=PowerMizerEnable=0x1;PerfLevelSrc=0x2222"}}),
			Kubelet:       &v1alpha1.Kubelet{SystemReservedCPU: "100m", EvictionHardMemory: "5%"},
		}, []string{}},
		"BadLabelKey":         {"\"bad key\" is not a label key.", v1alpha1.PoolShape{Labels: map[string]string{"bad key": "x"}}, []string{".labels"}},
		"ShellLabelValue":     {"$(id) is not a label value.", v1alpha1.PoolShape{Labels: map[string]string{"workload": "$(id)"}}, []string{".labels[workload]"}},
		"GPULabel":            {"gpu is managed by the function.", v1alpha1.PoolShape{Labels: map[string]string{"gpu": "off"}}, []string{".labels[gpu]"}},
		"RoleLabel":           {"node-role labels come from roles.", v1alpha1.PoolShape{Labels: map[string]string{"node-role.kubernetes.io/x": ""}}, []string{".labels[node-role.kubernetes.io/x]"}},
		"UnreachableLabel":    {"NodeRestriction refuses example.kubernetes.io from the node and Cluster API does not sync it.", v1alpha1.PoolShape{Labels: map[string]string{"example.kubernetes.io/tier": "a"}}, []string{".labels[example.kubernetes.io/tier]"}},
		"ClusterAPILabel":     {"cluster.x-k8s.io is the Machines' selector.", v1alpha1.PoolShape{Labels: map[string]string{"cluster.x-k8s.io/deployment-name": "a"}}, []string{".labels[cluster.x-k8s.io/deployment-name]"}},
		"SyncedLabel":         {"node.cluster.x-k8s.io labels are Cluster API's to sync.", v1alpha1.PoolShape{Labels: map[string]string{"node.cluster.x-k8s.io/tier": "a"}}, []string{}},
		"BacktickTaintKey":    {"a`b is not a taint key.", v1alpha1.PoolShape{Taints: []v1alpha1.Taint{{Key: "a`b", Effect: "NoSchedule"}}}, []string{".taints[0].key"}},
		"TaintNoEffect":       {"A taint needs an effect.", v1alpha1.PoolShape{Taints: []v1alpha1.Taint{{Key: "a"}}}, []string{".taints[0].effect"}},
		"DuplicateTaint":      {"One taint per key.", v1alpha1.PoolShape{Taints: []v1alpha1.Taint{{Key: "a", Effect: "NoSchedule"}, {Key: "a", Effect: "NoExecute"}}}, []string{".taints[1].key"}},
		"BadGPU":              {"A GPU is a resource name.", v1alpha1.PoolShape{GPUs: []v1alpha1.GPU{{Name: "a b"}}}, []string{".gpus[0].name"}},
		"ShellModule":         {"nvidia$(id) is not a module.", v1alpha1.PoolShape{KernelModules: mods(v1alpha1.KernelModule{Name: "nvidia$(id)"})}, []string{".kernelModules[0].name"}},
		"ShellParameter":      {"$ in a parameter.", v1alpha1.PoolShape{KernelModules: mods(v1alpha1.KernelModule{Name: "nvidia", Parameters: []string{"x=$(id)"}})}, []string{".kernelModules[0].parameters[0]"}},
		"ReservedTooMuch":     {"The reservations leave nothing for pods.", v1alpha1.PoolShape{Resources: &v1alpha1.Resources{CPU: "1", Memory: "1Gi"}, Kubelet: &v1alpha1.Kubelet{SystemReservedMemory: "768Mi"}}, []string{".kubelet"}},
		"InstanceTypePending": {"An instance type pool's size is checked once it is read.", v1alpha1.PoolShape{InstanceType: "u1.small", Kubelet: &v1alpha1.Kubelet{SystemReservedMemory: "64Gi"}}, []string{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			refusedAtEitherPath(t, tc.reason, tc.shape, tc.want)
		})
	}
}

// TestReservations re-expresses the chart's kubelet reservation
// arithmetic and guards (kubernetes-nodes templates/nodegroup.yaml:306-460@69da032).
func TestReservations(t *testing.T) {
	const gi = int64(1) << 30
	type want struct {
		SysMem, KubeMem, SysCPU, KubeCPU, Hard, Soft string
	}
	cases := map[string]struct {
		reason  string
		kubelet *v1alpha1.Kubelet
		node    NodeSize
		want    want
		err     string // a substring of the refusal
	}{
		"FloorsOnASmallNode":       {"5% of 4Gi is 204Mi and of 1 core 50m: the floors.", nil, NodeSize{MemoryBytes: 4 * gi, MilliCPU: 1000}, want{"256Mi", "256Mi", "50m", "50m", "7%", "10%"}, ""},
		"FivePercent":              {"5% of 16Gi is 819Mi, of 8 cores 400m.", nil, NodeSize{MemoryBytes: 16 * gi, MilliCPU: 8000}, want{"819Mi", "819Mi", "400m", "400m", "7%", "10%"}, ""},
		"Ceilings":                 {"5% of 64Gi and 32 cores are clamped to 1Gi and 500m.", nil, NodeSize{MemoryBytes: 64 * gi, MilliCPU: 32000}, want{"1Gi", "1Gi", "500m", "500m", "7%", "10%"}, ""},
		"UnknownSize":              {"Without a size the floors stand.", nil, NodeSize{}, want{"256Mi", "256Mi", "50m", "50m", "7%", "10%"}, ""},
		"Overrides":                {"Each override replaces its computed value.", &v1alpha1.Kubelet{SystemReservedMemory: "1.5Gi", KubeReservedCPU: "0.25", EvictionHardMemory: "200Mi", EvictionSoftMemory: "1Gi"}, NodeSize{MemoryBytes: 16 * gi, MilliCPU: 8000}, want{"1536Mi", "819Mi", "400m", "250m", "200Mi", "1Gi"}, ""},
		"HardNotBelowSoft":         {"The chart: hard must be strictly less than soft.", &v1alpha1.Kubelet{EvictionHardMemory: "10%"}, NodeSize{MemoryBytes: 16 * gi, MilliCPU: 8000}, want{}, "strictly less than evictionSoftMemory"},
		"HardNotBelowSoftAbsolute": {"The same for quantities.", &v1alpha1.Kubelet{EvictionHardMemory: "1Gi", EvictionSoftMemory: "1024Mi"}, NodeSize{MemoryBytes: 16 * gi, MilliCPU: 8000}, want{}, "strictly less than evictionSoftMemory"},
		"MixedUnits":               {"The chart: both percentages or both absolute.", &v1alpha1.Kubelet{EvictionHardMemory: "500Mi"}, NodeSize{MemoryBytes: 16 * gi, MilliCPU: 8000}, want{}, "same kind of unit"},
		"ZeroReservation":          {"The chart: a reservation must be positive.", &v1alpha1.Kubelet{KubeReservedCPU: "0m"}, NodeSize{MemoryBytes: 16 * gi, MilliCPU: 8000}, want{}, "spec.kubelet.kubeReservedCpu"},
		"MemoryExhausted":          {"The chart: system + kube + hard eviction below the node's memory.", &v1alpha1.Kubelet{SystemReservedMemory: "1Gi", KubeReservedMemory: "1Gi"}, NodeSize{MemoryBytes: 2 * gi, MilliCPU: 2000, From: "spec.resources"}, want{}, "reserves too much memory"},
		"CPUExhausted":             {"The chart: system + kube below the node's CPU.", &v1alpha1.Kubelet{SystemReservedCPU: "1", KubeReservedCPU: "1"}, NodeSize{MemoryBytes: 16 * gi, MilliCPU: 2000, From: "spec.resources"}, want{}, "reserves too much CPU"},
		"CPUOverrideWithoutCPU":    {"The chart: CPU overrides need the node's CPU.", &v1alpha1.Kubelet{SystemReservedCPU: "100m"}, NodeSize{MemoryBytes: 16 * gi}, want{}, "without the node's CPU"},
		"PendingChecksFormatsOnly": {"An unread instance type defers the size guards.", &v1alpha1.Kubelet{SystemReservedCPU: "64"}, NodeSize{Pending: true}, want{"256Mi", "256Mi", "64", "50m", "7%", "10%"}, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, errs := Reservations(field.NewPath("spec"), tc.kubelet, tc.node)
			if tc.err != "" {
				if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.err) {
					t.Fatalf("%s\nwant a refusal containing %q, got %v", tc.reason, tc.err, errs)
				}
				return
			}
			if len(errs) > 0 {
				t.Fatalf("%s\nunexpected refusal: %v", tc.reason, errs)
			}
			got := want{r.SystemMemory.String(), r.KubeMemory.String(), r.SystemCPU.String(), r.KubeCPU.String(), r.EvictionHard.Text, r.EvictionSoft.Text}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
