package rules

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestTopologySpread(t *testing.T) {
	good := corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway}
	with := func(f func(*corev1.TopologySpreadConstraint)) corev1.TopologySpreadConstraint {
		c := good
		f(&c)
		return c
	}
	cases := map[string]struct {
		reason string
		c      corev1.TopologySpreadConstraint
		ok     bool
	}{
		"Hostname": {"Spread over hosts.", good, true},
		"Zone": {"The etcd chart test's zone constraint (packages/extra/etcd/tests/topology-spread_test.yaml @69da032).", with(func(c *corev1.TopologySpreadConstraint) {
			c.MaxSkew, c.TopologyKey, c.WhenUnsatisfiable = 2, "topology.kubernetes.io/zone", corev1.DoNotSchedule
		}), true},
		"ZeroSkew":  {"maxSkew 0 is refused by the API server.", with(func(c *corev1.TopologySpreadConstraint) { c.MaxSkew = 0 }), false},
		"NoKey":     {"A constraint needs a topology key.", with(func(c *corev1.TopologySpreadConstraint) { c.TopologyKey = "" }), false},
		"BadWhen":   {"Only DoNotSchedule and ScheduleAnyway.", with(func(c *corev1.TopologySpreadConstraint) { c.WhenUnsatisfiable = "Sometimes" }), false},
		"EmptyWhen": {"whenUnsatisfiable is required by the Pod API.", with(func(c *corev1.TopologySpreadConstraint) { c.WhenUnsatisfiable = "" }), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := len(TopologySpread(field.NewPath("scheduling", "topologySpreadConstraints").Index(0), tc.c)) == 0; got != tc.ok {
				t.Errorf("%s\nok = %t, want %t", tc.reason, got, tc.ok)
			}
		})
	}
}
