package clusterapi

import (
	"cmp"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; contract.go converts to v1beta2 when asked.

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/defaults"
	"github.com/cozystack/function-worker-image/internal/rules"
)

// HealthCheck is a pool's resolved MachineHealthCheck.
type HealthCheck struct {
	MaxUnhealthy                                               intstr.IntOrString
	NodeStartupTimeout, ReadyUnknownTimeout, ReadyFalseTimeout time.Duration
}

// ResolveHealthCheck applies the chart's defaults (values.yaml:70-80 at
// cozystack/cozystack@69da032) to the validated (poolspec.CAPI) fields.
func ResolveHealthCheck(hc *v1alpha1.HealthCheck) HealthCheck {
	if hc == nil {
		hc = &v1alpha1.HealthCheck{}
	}
	d := func(v string) time.Duration {
		got, _ := rules.PositiveDuration(nil, v, 0)
		return got
	}
	out := HealthCheck{
		NodeStartupTimeout:  d(cmp.Or(hc.NodeStartupTimeout, defaults.NodeStartupTimeout)),
		ReadyUnknownTimeout: d(cmp.Or(hc.ReadyUnknownTimeout, defaults.ReadyUnknownTimeout)),
		ReadyFalseTimeout:   d(cmp.Or(hc.ReadyFalseTimeout, defaults.ReadyFalseTimeout)),
	}
	out.MaxUnhealthy, _ = rules.CountOrPercent(nil, cmp.Or(hc.MaxUnhealthy, defaults.MaxUnhealthy))
	return out
}

// MachineHealthCheck builds a pool's MachineHealthCheck: every pool has one,
// as every kubernetes-nodes release does (nodegroup.yaml:572-607). It
// selects the pool's Machines by the labels its MachineDeployment gives them
// (selector), and remediates a worker whose Node never becomes Ready within
// the startup timeout or stays Ready=Unknown or Ready=False too long.
func MachineHealthCheck(meta metav1.ObjectMeta, cluster string, selector map[string]string, hc HealthCheck) *clusterv1.MachineHealthCheck {
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
