package rules

import (
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestNodeLabels(t *testing.T) {
	path := field.NewPath("spec", "labels")
	cases := map[string]struct {
		reason string
		errs   field.ErrorList
		ok     bool
	}{
		// The chart's own cases (kubernetes-nodes tests/node_labels_taints_test.yaml@27f0283).
		"PrefixedKey":         {"example.com/tier is a label key.", LabelKey(path, "example.com/tier", "label"), true},
		"PlainKey":            {"workload is a label key.", LabelKey(path, "workload", "label"), true},
		"KeyWithSpace":        {"The chart refuses \"bad key\".", LabelKey(path, "bad key", "label"), false},
		"TaintKeyBacktick":    {"The chart refuses a backtick in a taint key.", LabelKey(path, "a`b", "taint"), false},
		"KeyNameTooLong":      {"The name part is at most 63 characters.", LabelKey(path, "example.com/"+string(make([]byte, 64)), "label"), false},
		"ValueShell":          {"The chart refuses $(id) as a value.", LabelValue(path, "$(id)", "label"), false},
		"Value":               {"batch is a value.", LabelValue(path, "batch", "label"), true},
		"EmptyValue":          {"An empty value is a value.", LabelValue(path, "", "label"), true},
		"ValueTrailingDash":   {"A value ends alphanumeric.", LabelValue(path, "batch-", "label"), false},
		"OwnedGPU":            {"The chart refuses gpu: it comes from gpus.", OwnedLabel(path, "gpu"), false},
		"OwnedRole":           {"node-role labels come from roles.", OwnedLabel(path, "node-role.kubernetes.io/ingress-nginx"), false},
		"NotOwned":            {"workload is the user's.", OwnedLabel(path, "workload"), true},
		"PrefixedGPUNotOwned": {"example.com/gpu is not the function's label.", OwnedLabel(path, "example.com/gpu"), true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := len(tc.errs) == 0; got != tc.ok {
				t.Errorf("%s\nok = %t, want %t (%v)", tc.reason, got, tc.ok, tc.errs)
			}
		})
	}
}

// TestLabelPatternsAgreeWithTheValidators: the XRD refuses what the
// function refuses, on the chart's cases and the edges of the grammar.
func TestLabelPatternsAgreeWithTheValidators(t *testing.T) {
	key, value := regexp.MustCompile(LabelKeyPattern), regexp.MustCompile(LabelValuePattern)
	long := strings.Repeat("a", 63)
	for _, k := range []string{"workload", "example.com/tier", "bad key", "a`b", "gpu", "nvidia.com/GB202_RTX_PRO_6000", "a/b/c", "/a", "a/", "-a", "a.", "A.com/x", long, long + "a", "x/" + long, "_a", "a_b.c-d"} {
		if got, want := key.MatchString(k), len(LabelKey(nil, k, "label")) == 0; got != want {
			t.Errorf("key %q: pattern %t, validator %t", k, got, want)
		}
	}
	for _, v := range []string{"", "batch", "$(id)", "a-", "-a", "a.b_c-d", long, long + "a", "on"} {
		if got, want := value.MatchString(v) && len(v) <= 63, len(LabelValue(nil, v, "label")) == 0; got != want { // maxLength 63 in the XRD
			t.Errorf("value %q: pattern %t, validator %t", v, got, want)
		}
	}
}
