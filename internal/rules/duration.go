package rules

import (
	"fmt"
	"regexp"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PositiveDurationPattern is the kubernetes-nodes chart's positiveDuration
// guard (packages/apps/kubernetes-nodes/templates/_helpers.tpl:174-180 at
// cozystack/cozystack@69da032): a whole number of s, m or h, up to three
// segments, the first positive. It is narrower than time.ParseDuration on
// purpose: the cluster-autoscaler silently falls back to its default on an
// annotation it cannot parse, and Cluster API's webhook does not check
// unhealthyConditions timeouts, so a zero, negative, fractional or
// overflowing value must never reach them. Every string it admits parses to a
// positive duration, and the canonical form of one (20m0s, 1h0m0s) passes.
// The XRDs carry the same pattern (apis/v1alpha1 PositiveDuration).
const PositiveDurationPattern = `^[1-9][0-9]{0,4}[smh]([0-9]{1,5}[smh]){0,2}$`

var positiveDuration = regexp.MustCompile(PositiveDurationPattern)

// PositiveDuration checks a duration in the chart's narrow shape and returns
// it parsed. at least, when positive, is the smallest accepted value (the
// MachineHealthCheck webhook's 30s floor for nodeStartupTimeout).
func PositiveDuration(path *field.Path, v string, atLeast time.Duration) (time.Duration, field.ErrorList) {
	if !positiveDuration.MatchString(v) {
		return 0, field.ErrorList{field.Invalid(path, Quoted(v), "is not a whole number of s, m or h (e.g. 30m, 1h30m); fractions, zero, negative values and other units are refused because the consumers of this value ignore or misread them")}
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		// The pattern admits only what time.ParseDuration reads; this is a
		// bug, not bad input.
		return 0, field.ErrorList{field.InternalError(path, fmt.Errorf("cannot parse %q: %w", v, err))}
	}
	if d < atLeast {
		return 0, field.ErrorList{field.Invalid(path, Quoted(v), fmt.Sprintf("is shorter than %s, the least Cluster API accepts here; set %s or more", atLeast, atLeast))}
	}
	return d, nil
}
