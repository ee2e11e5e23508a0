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

// TestNodeLabelReach: what puts a label on the Node follows Cluster API's
// sync domains (util/labels GetManagedLabels, v1.11.4) and what the
// NodeRestriction admission plugin lets a node set on itself.
func TestNodeLabelReach(t *testing.T) {
	synced := []*regexp.Regexp{regexp.MustCompile(`^example\.com/placement$`)}
	cases := map[string]struct {
		reason string
		key    string
		want   LabelReach
	}{
		"Plain":                  {"A key without a prefix is the node's to set.", "workload", ReachNode},
		"UserDomain":             {"A user domain is the node's to set.", "example.com/tier", ReachNode},
		"Topology":               {"topology.kubernetes.io/zone is on the kubelet's allowed list.", "topology.kubernetes.io/zone", ReachNode},
		"NodeKubernetesIO":       {"node.kubernetes.io is a kubelet namespace.", "node.kubernetes.io/pool", ReachNode},
		"KubeletNamespace":       {"[*.]kubelet.kubernetes.io is a kubelet namespace.", "x.kubelet.kubernetes.io/a", ReachNode},
		"ClusterAPIDomain":       {"Cluster API syncs node.cluster.x-k8s.io.", "node.cluster.x-k8s.io/tier", ReachMachine},
		"ClusterAPISubdomain":    {"and its subdomains.", "team.node.cluster.x-k8s.io/tier", ReachMachine},
		"NodeRestriction":        {"node-restriction.kubernetes.io is Cluster API's to set, never the node's.", "node-restriction.kubernetes.io/tenant", ReachMachine},
		"NodeRestrictionSub":     {"and its subdomains.", "a.node-restriction.kubernetes.io/tenant", ReachMachine},
		"SyncedPattern":          {"A key matching the manager's --additional-sync-machine-labels is synced.", "example.com/placement", ReachMachine},
		"KubernetesIOUnknown":    {"An unknown kubernetes.io label: NodeRestriction refuses it and Cluster API does not sync it.", "example.kubernetes.io/tier", ReachNone},
		"K8sIOUnknown":           {"Likewise k8s.io.", "k8s.io/tier", ReachNone},
		"XK8sIOIsNotK8sIO":       {"x-k8s.io is not a k8s.io subdomain.", "infra.x-k8s.io/tier", ReachNode},
		"KubernetesIOLookalike":  {"notkubernetes.io is not kubernetes.io.", "notkubernetes.io/tier", ReachNode},
		"NodeRoleIsClusterAPI's": {"node-role is synced (the function sets it from roles).", "node-role.kubernetes.io/ingress", ReachMachine},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := NodeLabelReach(tc.key, synced); got != tc.want {
				t.Errorf("%s\nNodeLabelReach(%q) = %d, want %d", tc.reason, tc.key, got, tc.want)
			}
		})
	}
}

// TestReachableLabel: a label no one can put on the Node, and one in
// Cluster API's own namespace, are refused at the label's path.
func TestReachableLabel(t *testing.T) {
	path := field.NewPath("spec", "labels").Key("k")
	cases := map[string]struct {
		key  string
		want string
	}{
		"Reachable":     {key: "example.com/tier"},
		"Synced":        {key: "node.cluster.x-k8s.io/tier"},
		"Unreachable":   {key: "example.kubernetes.io/tier", want: `spec.labels[k]: Forbidden: label "example.kubernetes.io/tier" would never reach the Node`},
		"ClusterAPIOwn": {key: "cluster.x-k8s.io/deployment-name", want: `spec.labels[k]: Forbidden: label "cluster.x-k8s.io/deployment-name" is in Cluster API's own namespace`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			errs := ReachableLabel(path, tc.key, NodeLabelReach(tc.key, nil))
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Errorf("ReachableLabel(%q) = %v, want none", tc.key, errs)
			case tc.want != "" && (len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), tc.want)):
				t.Errorf("ReachableLabel(%q) = %v, want one starting %q", tc.key, errs, tc.want)
			}
		})
	}
}
