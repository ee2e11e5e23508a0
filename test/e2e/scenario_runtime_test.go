package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// TestDeploymentRuntimeConfigIsAdmitted applies the platform example's
// DeploymentRuntimeConfig and PodDisruptionBudget
// (example/platform/deploymentruntimeconfig.yaml) to the API server with
// Crossplane v2.2.0's CRDs, and reads back what it stored: the schema
// Crossplane installs accepts the template (replicas, anti-affinity, the
// package-runtime container's args, env and resources) without pruning any
// of it. The unit test TestDeploymentRuntimeConfig holds the same file to
// the function's flags.
func TestDeploymentRuntimeConfigIsAdmitted(t *testing.T) {
	const ns = "e2e-runtime"
	inNamespace(t, ns)
	raw, err := os.ReadFile(filepath.Join("..", "..", "example", "platform", "deploymentruntimeconfig.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := harness.DecodeYAML(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetNamespace() != "" {
			o.SetNamespace(ns) // the example's is crossplane-system
		}
		cp.MustApply(t, o)
		gvk := o.GroupVersionKind()
		got := cp.MustGet(t, gvk, o.GetNamespace(), o.GetName())
		if diff := missingFields(o.Object["spec"], got.Object["spec"], "spec"); diff != "" {
			t.Errorf("%s %s: the API server did not keep %s", gvk.Kind, o.GetName(), diff)
		}
	}
}

// missingFields names the first field of want that got lacks or holds
// differently (defaults the API server adds are allowed).
func missingFields(want, got any, path string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path
		}
		for k, v := range w {
			if d := missingFields(v, g[k], path+"."+k); d != "" {
				return d
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path
		}
		for i := range w {
			if d := missingFields(w[i], g[i], path+"[]"); d != "" {
				return d
			}
		}
	default:
		if !equalScalar(want, got) {
			return path
		}
	}
	return ""
}

func equalScalar(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	return a == b
}

// number is a JSON number as decoded by either YAML or JSON readers.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}
