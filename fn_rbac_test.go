package main

import (
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Verbs Crossplane needs on what a Composition composes and on what a
// function only requires (package/rbac/clusterrole.yaml explains each).
var (
	composedVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	requiredVerbs = []string{"get", "list", "watch"}
)

// plural is the resource name of a kind, by the Kubernetes convention every
// kind here follows.
func plural(kind string) string {
	k := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(k, "s"):
		return k + "es"
	case strings.HasSuffix(k, "y"):
		return strings.TrimSuffix(k, "y") + "ies"
	}
	return k + "s"
}

func apiGroupOf(apiVersion string) string {
	if g, _, ok := strings.Cut(apiVersion, "/"); ok {
		return g
	}
	return ""
}

// TestCrossplaneClusterRoleIsLeastPrivilege derives the permissions Crossplane
// needs from what the function actually does over every example scenario:
// full verbs on every composed kind, read verbs on every required kind, and
// (because the catalog composes a ClusterRole, and Kubernetes lets a user
// grant only what it holds) every rule of every composed ClusterRole. The
// shipped ClusterRole must grant exactly that: nothing missing, no verb more.
// Kinds of this project's own XRDs are Crossplane's RBAC manager's business.
func TestCrossplaneClusterRoleIsLeastPrivilege(t *testing.T) {
	need := map[string]bool{}
	add := func(g, res string, verbs ...string) {
		if g == "workerimage.cozystack.io" {
			return
		}
		for _, v := range verbs {
			need[g+"/"+res+":"+v] = true
		}
	}
	f := newTestFunction()
	for _, sc := range loadExampleScenarios(t) {
		_, rsp := settleRequest(t, f, sc.firstRequest(), sc.Pool)
		for _, sel := range rsp.GetRequirements().GetResources() {
			add(apiGroupOf(sel.GetApiVersion()), plural(sel.GetKind()), requiredVerbs...)
		}
		for _, d := range rsp.GetDesired().GetResources() {
			obj := d.GetResource()
			add(apiGroupOf(field(obj, "apiVersion")), plural(field(obj, "kind")), composedVerbs...)
			if field(obj, "kind") == "Usage" {
				// Crossplane's usage controller reads the used object, labels
				// it in use (Update) and replays a refused delete; its webhook
				// records the refused delete with a Patch; the using object is
				// only read (v2.2.0 internal/controller/protection/usage/
				// reconciler.go, internal/webhook/protection/usage/handler.go).
				spec := obj.GetFields()["spec"].GetStructValue()
				of, by := spec.GetFields()["of"].GetStructValue(), spec.GetFields()["by"].GetStructValue()
				add(apiGroupOf(field(of, "apiVersion")), plural(field(of, "kind")), "get", "update", "patch", "delete")
				add(apiGroupOf(field(by, "apiVersion")), plural(field(by, "kind")), "get")
			}
			if field(obj, "kind") != "ClusterRole" {
				continue
			}
			for _, r := range obj.GetFields()["rules"].GetListValue().GetValues() {
				rf := r.GetStructValue().GetFields()
				for _, g := range rf["apiGroups"].GetListValue().GetValues() {
					for _, res := range rf["resources"].GetListValue().GetValues() {
						for _, v := range rf["verbs"].GetListValue().GetValues() {
							add(g.GetStringValue(), res.GetStringValue(), v.GetStringValue())
						}
					}
				}
			}
		}
	}

	granted := map[string]bool{}
	docs := yamlDocs(t, "package/rbac/clusterrole.yaml")
	if len(docs) == 0 {
		t.Skip("package/rbac/clusterrole.yaml does not exist yet")
	}
	for _, doc := range docs {
		if field(doc, "kind") != "ClusterRole" {
			continue
		}
		// Crossplane holds this role only through aggregation, under the
		// name the docs and the e2e suite's Crossplane identity use.
		if name, agg := field(doc, "metadata", "name"), field(doc, "metadata", "labels", "rbac.crossplane.io/aggregate-to-crossplane"); name != "crossplane:function-worker-image" || agg != "true" {
			t.Errorf("package/rbac/clusterrole.yaml: ClusterRole %q with aggregate-to-crossplane %q; want crossplane:function-worker-image aggregated (\"true\")", name, agg)
		}
		for _, r := range doc.GetFields()["rules"].GetListValue().GetValues() {
			rf := r.GetStructValue().GetFields()
			if len(rf["resourceNames"].GetListValue().GetValues()) > 0 || len(rf["nonResourceURLs"].GetListValue().GetValues()) > 0 {
				t.Errorf("rule %v: resourceNames and nonResourceURLs are not derived by this test; extend it before using them", rf)
			}
			for _, g := range rf["apiGroups"].GetListValue().GetValues() {
				for _, res := range rf["resources"].GetListValue().GetValues() {
					for _, v := range rf["verbs"].GetListValue().GetValues() {
						granted[g.GetStringValue()+"/"+res.GetStringValue()+":"+v.GetStringValue()] = true
					}
				}
			}
		}
	}
	if diff := cmp.Diff(sortedKeys(need), sortedKeys(granted)); diff != "" {
		t.Errorf("package/rbac/clusterrole.yaml must grant exactly what the function's output needs (-needed, +granted):\n%s", diff)
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
