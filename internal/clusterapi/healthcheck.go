package clusterapi

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; contract.go converts to v1beta2 when asked.

	"github.com/cozystack/function-worker-image/internal/poolspec"
)

// MachineHealthCheck builds a pool's MachineHealthCheck: every pool has one,
// as every kubernetes-nodes release does (nodegroup.yaml:572-607). It
// selects the pool's Machines by the labels its MachineDeployment gives them
// (selector), and remediates a worker whose Node never becomes Ready within
// the startup timeout or stays Ready=Unknown or Ready=False too long.
func MachineHealthCheck(meta metav1.ObjectMeta, cluster string, selector map[string]string, hc poolspec.HealthCheck) *clusterv1.MachineHealthCheck {
	maxUnhealthy := hc.MaxUnhealthy
	return &clusterv1.MachineHealthCheck{
		TypeMeta:   metav1.TypeMeta{APIVersion: V1Beta1APIVersion, Kind: KindMachineHealthCheck},
		ObjectMeta: meta,
		Spec: clusterv1.MachineHealthCheckSpec{
			ClusterName:        cluster,
			Selector:           metav1.LabelSelector{MatchLabels: selector},
			MaxUnhealthy:       &maxUnhealthy, //nolint:staticcheck // the v1beta1 field of the chart; the v1beta2 conversion makes it remediation.triggerIf.unhealthyLessThanOrEqualTo.
			NodeStartupTimeout: &metav1.Duration{Duration: hc.NodeStartupTimeout},
			UnhealthyConditions: []clusterv1.UnhealthyCondition{
				{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Timeout: metav1.Duration{Duration: hc.ReadyUnknownTimeout}},
				{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Timeout: metav1.Duration{Duration: hc.ReadyFalseTimeout}},
			},
		},
	}
}
