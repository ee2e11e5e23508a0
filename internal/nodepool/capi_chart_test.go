package nodepool

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/compose/composetest"
)

// TestChartAutoscalingAndHealthCheck re-expresses the kubernetes-nodes
// chart's own tests of the MachineDeployment's autoscaler annotations, the
// MachineHealthCheck and their guards (packages/apps/kubernetes-nodes/tests/
// nodegroup_test.yaml "carries both cluster-autoscaler node-group size
// annotations and omits replicas", max_node_provision_time_test.yaml,
// mhc_rendering_test.yaml, mhc_timeouts_test.yaml at
// cozystack/cozystack@69da032). The chart autoscales every pool; here a pool
// is autoscaled when it sets minReplicas/maxReplicas, so each autoscaling
// case sets maxReplicas. Each case names a field path and the value it must
// have ("<absent>" for none), or the error the render must fail with.
func TestChartAutoscalingAndHealthCheck(t *testing.T) {
	const absent = "<absent>"
	const md, mhc = "machinedeployment", "machinehealthcheck"
	autoscaled := func(extra map[string]any) map[string]any {
		s := map[string]any{"minReplicas": int64(0), "maxReplicas": int64(3)}
		for k, v := range extra {
			s[k] = v
		}
		return s
	}
	hc := func(k, v string) map[string]any { return map[string]any{"healthCheck": map[string]any{k: v}} }
	type want struct {
		resource string
		path     []string
		value    any
	}
	ann := func(k string) []string { return []string{"metadata", "annotations", k} }
	cases := map[string]struct {
		spec    map[string]any
		want    []want
		wantErr string
	}{
		"nodegroup: carries both size annotations and omits replicas": {
			spec: autoscaled(nil),
			want: []want{
				{md, ann(clusterapi.AnnAutoscalerMinSize), "0"},
				{md, ann(clusterapi.AnnAutoscalerMaxSize), "3"},
				{md, []string{"spec", "replicas"}, absent},
			},
		},
		"nodegroup: maxSurge follows maxReplicas, maxUnavailable is 1": {
			spec: autoscaled(nil),
			want: []want{
				{md, []string{"spec", "strategy", "rollingUpdate", "maxSurge"}, int64(3)},
				{md, []string{"spec", "strategy", "rollingUpdate", "maxUnavailable"}, int64(1)},
				{md, []string{"spec", "strategy", "type"}, "RollingUpdate"},
			},
		},
		"max_node_provision_time: annotates the chart-default provision time": {
			spec: autoscaled(nil),
			want: []want{{md, ann(clusterapi.AnnMaxNodeProvisionTime), "30m"}},
		},
		"max_node_provision_time: passes a configured provision time through verbatim": {
			spec: autoscaled(map[string]any{"maxNodeProvisionTime": "45m"}),
			want: []want{{md, ann(clusterapi.AnnMaxNodeProvisionTime), "45m"}},
		},
		"max_node_provision_time: accepts a compound Go duration": {
			spec: autoscaled(map[string]any{"maxNodeProvisionTime": "1h30m"}),
			want: []want{{md, ann(clusterapi.AnnMaxNodeProvisionTime), "1h30m"}},
		},
		"max_node_provision_time: accepts the canonical Go rendering": {
			spec: autoscaled(map[string]any{"maxNodeProvisionTime": "1h0m0s"}),
			want: []want{{md, ann(clusterapi.AnnMaxNodeProvisionTime), "1h0m0s"}},
		},
		"max_node_provision_time: accepts a zero tail segment": {
			spec: autoscaled(map[string]any{"maxNodeProvisionTime": "20m0s"}),
			want: []want{{md, ann(clusterapi.AnnMaxNodeProvisionTime), "20m0s"}},
		},
		"max_node_provision_time: rejects no unit": {
			spec: autoscaled(map[string]any{"maxNodeProvisionTime": "30"}), wantErr: `spec.maxNodeProvisionTime: Invalid value: "30": is not a whole number of s, m or h`,
		},
		"max_node_provision_time: rejects an unknown unit": {
			spec: autoscaled(map[string]any{"maxNodeProvisionTime": "30min"}), wantErr: `spec.maxNodeProvisionTime: Invalid value: "30min"`,
		},
		"max_node_provision_time: rejects a negative provision time": {
			spec: autoscaled(map[string]any{"maxNodeProvisionTime": "-30m"}), wantErr: `spec.maxNodeProvisionTime: Invalid value: "-30m"`,
		},
		"max_node_provision_time: rejects zero": {
			spec: autoscaled(map[string]any{"maxNodeProvisionTime": "0s"}), wantErr: `spec.maxNodeProvisionTime: Invalid value: "0s"`,
		},
		"max_node_provision_time: rejects a duration too large for the parser": {
			spec: autoscaled(map[string]any{"maxNodeProvisionTime": "9999999h"}), wantErr: `spec.maxNodeProvisionTime: Invalid value: "9999999h"`,
		},
		"max_node_provision_time: rejects a fraction rounding to zero": {
			spec: autoscaled(map[string]any{"maxNodeProvisionTime": "0.1ns"}), wantErr: `spec.maxNodeProvisionTime: Invalid value: "0.1ns"`,
		},
		"mhc_rendering: renders a percentage maxUnhealthy as a string": {
			spec: hc("maxUnhealthy", "50%"),
			want: []want{{mhc, []string{"spec", "maxUnhealthy"}, "50%"}},
		},
		"mhc_rendering: renders a bare-integer maxUnhealthy as an int": {
			spec: hc("maxUnhealthy", "0"),
			want: []want{{mhc, []string{"spec", "maxUnhealthy"}, int64(0)}},
		},
		"mhc_rendering: renders nodeStartupTimeout": {
			spec: hc("nodeStartupTimeout", "20m"),
			want: []want{{mhc, []string{"spec", "nodeStartupTimeout"}, "20m0s"}},
		},
		"mhc_rendering: rejects a non-integer percentage": {
			spec: hc("maxUnhealthy", "50.5%"), wantErr: `spec.healthCheck.maxUnhealthy: Invalid value: "50.5%"`,
		},
		"mhc_rendering: rejects a decimal": {
			spec: hc("maxUnhealthy", "1.5"), wantErr: `spec.healthCheck.maxUnhealthy: Invalid value: "1.5"`,
		},
		"mhc_timeouts: renders the chart defaults": {
			spec: map[string]any{},
			want: []want{
				{mhc, []string{"spec", "maxUnhealthy"}, "50%"},
				{mhc, []string{"spec", "nodeStartupTimeout"}, "20m0s"},
				{mhc, []string{"spec", "unhealthyConditions"}, []any{
					map[string]any{"type": "Ready", "status": "Unknown", "timeout": "5m0s"},
					map[string]any{"type": "Ready", "status": "False", "timeout": "10m0s"},
				}},
			},
		},
		"mhc_timeouts: passes configured condition timeouts through": {
			spec: map[string]any{"healthCheck": map[string]any{"readyUnknownTimeout": "90s", "readyFalseTimeout": "25m"}},
			want: []want{{mhc, []string{"spec", "unhealthyConditions"}, []any{
				map[string]any{"type": "Ready", "status": "Unknown", "timeout": "1m30s"},
				map[string]any{"type": "Ready", "status": "False", "timeout": "25m0s"},
			}}},
		},
		"mhc_timeouts: accepts the canonical rendering of a timeout": {
			spec: map[string]any{"healthCheck": map[string]any{"readyUnknownTimeout": "20m0s", "readyFalseTimeout": "1h0m0s"}},
			want: []want{{mhc, []string{"spec", "unhealthyConditions"}, []any{
				map[string]any{"type": "Ready", "status": "Unknown", "timeout": "20m0s"},
				map[string]any{"type": "Ready", "status": "False", "timeout": "1h0m0s"},
			}}},
		},
		"mhc_timeouts: rejects a timeout without unit": {
			spec: hc("readyUnknownTimeout", "90"), wantErr: `spec.healthCheck.readyUnknownTimeout: Invalid value: "90"`,
		},
		"mhc_timeouts: rejects a zero timeout": {
			spec: hc("readyFalseTimeout", "0s"), wantErr: `spec.healthCheck.readyFalseTimeout: Invalid value: "0s"`,
		},
		"mhc_timeouts: rejects a negative timeout": {
			spec: hc("readyUnknownTimeout", "-5m"), wantErr: `spec.healthCheck.readyUnknownTimeout: Invalid value: "-5m"`,
		},
		// Beyond the chart: the function's own rules.
		"fixed pool keeps replicas, surges by its count, has no autoscaler annotations": {
			spec: map[string]any{"replicas": int64(4)},
			want: []want{
				{md, []string{"spec", "replicas"}, int64(4)},
				{md, []string{"spec", "strategy", "rollingUpdate", "maxSurge"}, int64(4)},
				{md, ann(clusterapi.AnnAutoscalerMaxSize), absent},
			},
		},
		"pool scaled to zero still surges by one": {
			spec: map[string]any{"replicas": int64(0)},
			want: []want{{md, []string{"spec", "strategy", "rollingUpdate", "maxSurge"}, int64(1)}},
		},
		"rollout overrides": {
			spec: map[string]any{"rollout": map[string]any{"maxSurge": "25%", "maxUnavailable": "0"}},
			want: []want{
				{md, []string{"spec", "strategy", "rollingUpdate", "maxSurge"}, "25%"},
				{md, []string{"spec", "strategy", "rollingUpdate", "maxUnavailable"}, int64(0)},
			},
		},
		"a rollout that can neither add nor remove a worker is refused": {
			spec:    map[string]any{"rollout": map[string]any{"maxSurge": "0", "maxUnavailable": "0%"}},
			wantErr: "spec.rollout: Invalid value: sets both maxSurge and maxUnavailable to zero",
		},
		// nodegroup.yaml:498-514@69da032: allocatable is the size less
		// system and kube reserved and, for memory, the hard eviction
		// threshold. 2 cores and 4Gi: 5% of 4Gi is under the 256Mi floor,
		// so 2x256Mi plus 7% of 4Gi (286.72Mi) leaves 3297.28Mi, floored;
		// 5% of 2000m is 100m, twice, leaving 1800m.
		"scale from zero: allocatable capacity of a resources-sized worker": {
			spec: autoscaled(map[string]any{"resources": map[string]any{"cpu": "2", "memory": "4Gi"}}),
			want: []want{
				{md, ann(clusterapi.AnnCapacityCPU), "1800m"},
				{md, ann(clusterapi.AnnCapacityMemory), "3297Mi"},
				{md, ann(clusterapi.AnnCapacityGPUCount), absent},
				{md, ann(clusterapi.AnnCapacityLabels), absent},
			},
		},
		"scale from zero: capacity of an instance-type pool from its instance type": {
			spec: autoscaled(map[string]any{"instanceType": "u1.medium"}),
			want: []want{{md, ann(clusterapi.AnnCapacityMemory), "3297Mi"}, {md, ann(clusterapi.AnnCapacityCPU), "900m"}},
		},
		"scale from zero: GPUs, node labels and taints for pods that select them": {
			spec: autoscaled(map[string]any{"resources": map[string]any{"cpu": "4", "memory": "16Gi"},
				"gpus":   []any{map[string]any{"name": "nvidia.com/AD102GL_L40S"}},
				"labels": map[string]any{"tier": "gpu"},
				"taints": []any{map[string]any{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}, map[string]any{"key": "spot", "effect": "PreferNoSchedule"}}}),
			want: []want{
				{md, ann(clusterapi.AnnCapacityGPUCount), "1"},
				{md, ann(clusterapi.AnnCapacityGPUType), "nvidia.com/gpu"},
				{md, ann(clusterapi.AnnCapacityLabels), "gpu=on,tier=gpu"},
				{md, ann(clusterapi.AnnCapacityTaints), "dedicated=gpu:NoSchedule,spot=:PreferNoSchedule"},
			},
		},
		"minReplicas defaults to zero": {
			spec: map[string]any{"maxReplicas": int64(5)},
			want: []want{{md, ann(clusterapi.AnnAutoscalerMinSize), "0"}, {md, ann(clusterapi.AnnAutoscalerMaxSize), "5"}},
		},
		"replicas with bounds is refused": {
			spec:    autoscaled(map[string]any{"replicas": int64(2)}),
			wantErr: "spec.replicas: Invalid value: 2: cannot be set together with minReplicas/maxReplicas",
		},
		"minReplicas without maxReplicas is refused": {
			spec: map[string]any{"minReplicas": int64(1)}, wantErr: "spec.maxReplicas: Required value",
		},
		"minReplicas above maxReplicas is refused": {
			spec: map[string]any{"minReplicas": int64(4), "maxReplicas": int64(3)}, wantErr: "spec.minReplicas: Invalid value: 4: is above maxReplicas 3",
		},
		"maxReplicas wrapping int32 is refused as written": {
			spec: map[string]any{"maxReplicas": int64(4294967297)}, wantErr: "spec.maxReplicas: Invalid value: 4294967297",
		},
		"maxNodeProvisionTime on a fixed pool is refused": {
			spec: map[string]any{"maxNodeProvisionTime": "30m"}, wantErr: `spec.maxNodeProvisionTime: Invalid value: "30m": applies to an autoscaled pool only`,
		},
		"nodeStartupTimeout below the webhook's 30s is refused": {
			spec: hc("nodeStartupTimeout", "10s"), wantErr: `spec.healthCheck.nodeStartupTimeout: Invalid value: "10s": is shorter than 30s`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out := composetest.Run(Mode{}, request(t, nodePoolXR(tc.spec), worldFixture{}, nil)).Output
			if tc.wantErr != "" {
				if out.Fatal == nil || !strings.Contains(out.Fatal.Error(), tc.wantErr) {
					t.Fatalf("want a fatal containing %q, got %v", tc.wantErr, out.Fatal)
				}
				return
			}
			if out.Fatal != nil {
				t.Fatal(out.Fatal)
			}
			for _, w := range tc.want {
				d := out.Resources[resource.Name(w.resource)]
				if d == nil {
					t.Fatalf("%s is not composed", w.resource)
				}
				got, found, _ := unstructured.NestedFieldNoCopy(d.Resource.Object, w.path...)
				if !found {
					got = absent
				}
				if diff := cmp.Diff(w.value, got); diff != "" {
					t.Errorf("%s %s: -want, +got:\n%s", w.resource, strings.Join(w.path, "."), diff)
				}
			}
		})
	}
}
