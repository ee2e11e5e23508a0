package rules

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// CountOrPercentPattern is a count ("1") or a percentage ("50%") of a pool's
// workers, as the kubernetes-nodes chart writes maxUnhealthy
// (templates/nodegroup.yaml:579-593 at cozystack/cozystack@69da032: a bare
// integer or an integer percentage, anything else fails). The XRDs carry the
// same pattern (apis/v1alpha1 CountOrPercent).
const CountOrPercentPattern = `^[0-9]{1,4}%?$`

var countOrPercent = regexp.MustCompile(CountOrPercentPattern)

// CountOrPercent checks a count (0..MaxReplicas) or a percentage (0%..100%)
// and returns it as the IntOrString Cluster API takes: a count as an integer
// (the MachineHealthCheck webhook refuses a quoted plain integer, the chart's
// comment at nodegroup.yaml:575-578), a percentage as a string. The bounds
// are tighter than the chart's (which accepts 5000 and 150%): neither means
// anything for one pool.
func CountOrPercent(path *field.Path, v string) (intstr.IntOrString, field.ErrorList) {
	bad := func(why string) field.ErrorList {
		return field.ErrorList{field.Invalid(path, Quoted(v), why+`; write a whole count such as "1" or a percentage such as "50%"`)}
	}
	if !countOrPercent.MatchString(v) {
		return intstr.IntOrString{}, bad("is neither a whole count nor a whole percentage")
	}
	digits, percent := strings.CutSuffix(v, "%")
	n, err := strconv.Atoi(digits)
	if err != nil {
		return intstr.IntOrString{}, bad("is not a number")
	}
	switch {
	case percent && n > 100:
		return intstr.IntOrString{}, bad("is more than 100%")
	case percent:
		return intstr.FromString(fmt.Sprintf("%d%%", n)), nil
	case n > MaxReplicas:
		return intstr.IntOrString{}, bad(fmt.Sprintf("is more than %d, the most workers a pool runs", MaxReplicas))
	}
	return intstr.FromInt32(int32(n)), nil
}
