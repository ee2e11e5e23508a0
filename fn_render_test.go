package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/cozystack/function-worker-image/internal/fixture"
)

// engineMetadata is what Crossplane core adds to a composed resource that the
// function did not write: the composite's owner reference and label, the
// composition resource name annotation (RenderComposedResourceMetadata,
// internal/controller/apiextensions/composite/composition_render.go).
var engineMetadata = map[string]bool{
	"metadata.ownerReferences":                                     true,
	"metadata.labels.crossplane.io/composite":                      true,
	"metadata.annotations.crossplane.io/composition-resource-name": true,
	"metadata.generateName":                                        true,
	// A namespaced composite's composed resources are in its namespace.
	"metadata.namespace": true,
}

// TestTheCLIRendersWhatTheFunctionReturns: every shipped render scenario's
// recorded output (example/*/scenarios/*/expected.yaml, written by the
// crossplane CLI through test/render) holds exactly what the function returns
// for the same request, called in process the way Crossplane calls it: the
// same composed resources, field for field, with nothing but the metadata
// Crossplane adds; every result message; and a fatal scenario's message in
// its expected-error.txt. It ties the recorded renders to the function, not
// to a CLI: a CLI or core that rendered a scenario differently would fail
// test/render, and an output recorded by one that did would fail here.
func TestTheCLIRendersWhatTheFunctionReturns(t *testing.T) {
	examples, err := fixture.LoadExamples("example")
	if err != nil {
		t.Fatal(err)
	}
	f := newTestFunction()
	for _, e := range examples {
		dir := filepath.Join("example", strings.Replace(e.Name, "/", "/scenarios/", 1))
		t.Run(e.Name, func(t *testing.T) {
			req, err := e.Request()
			if err != nil {
				t.Fatal(err)
			}
			rendered, err := fixture.ReadObjects(filepath.Join(dir, "expected.yaml"))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			// A mode that ships its XRD is rendered with the schema's
			// defaults applied to the composite, as the API server would
			// (--xrd), and the function copies a tenant cluster's pools
			// as defaulted into its XNodePools: their spec may hold more
			// than the function returned for the composite as written.
			specDefaulted := fileExists(filepath.Join(filepath.Dir(filepath.Dir(dir)), "xrd.yaml"))
			calls, err := fixture.Loop(t.Context(), f.RunFunction, req, e.Objects)
			if err != nil && !errors.Is(err, fixture.ErrNotSettled) {
				t.Fatalf("RunFunction: %v", err)
			}
			rsp := calls[len(calls)-1].Response
			if msg := fatalMessage(rsp); msg != "" {
				b, err := os.ReadFile(filepath.Join(dir, "expected-error.txt"))
				if err != nil {
					t.Fatalf("the function refuses the scenario (%s), but: %v", msg, err)
				}
				if !strings.Contains(string(b), msg) {
					t.Errorf("expected-error.txt does not hold the function's fatal message %q:\n%s", msg, b)
				}
				return
			}
			if len(rendered) == 0 {
				t.Fatalf("the function composes, but %s/expected.yaml is missing or empty", dir)
			}
			composed := map[string]*unstructured.Unstructured{}
			var messages []string
			for _, u := range rendered[1:] {
				if u.GetKind() == "Result" {
					m, _, _ := unstructured.NestedString(u.Object, "message")
					messages = append(messages, m)
					continue
				}
				composed[u.GetAnnotations()[fixture.AnnotationCompositionResourceName]] = u
			}
			var missing []string
			for name, r := range rsp.GetDesired().GetResources() {
				got, ok := composed[name]
				if !ok {
					missing = append(missing, name)
					continue
				}
				delete(composed, name)
				if diff := fieldDiff("", r.GetResource().AsMap(), got.Object, specDefaulted); len(diff) > 0 {
					sort.Strings(diff)
					t.Errorf("composed resource %q as rendered differs from the function's:\n%s", name, strings.Join(diff, "\n"))
				}
			}
			sort.Strings(missing)
			if len(missing) > 0 {
				t.Errorf("the render lacks the composed resources %v the function returns", missing)
			}
			for name := range composed {
				t.Errorf("the render holds composed resource %q the function does not return", name)
			}
			for _, r := range rsp.GetResults() {
				if r.GetSeverity() == fnv1.Severity_SEVERITY_NORMAL && r.GetMessage() == "" {
					continue
				}
				if !containsSuffix(messages, r.GetMessage()) {
					t.Errorf("the render lacks the function's result %q", r.GetMessage())
				}
			}
		})
	}
}

// containsSuffix reports whether one of messages is m, or ends with it: core
// v2.4 reports a step's result as `Pipeline step "<step>": <message>`.
func containsSuffix(messages []string, m string) bool {
	for _, got := range messages {
		if got == m || strings.HasSuffix(got, ": "+m) {
			return true
		}
	}
	return false
}

// fieldDiff lists where rendered differs from want: a field want sets that
// rendered lacks or holds otherwise, and a field rendered adds that is not
// engineMetadata (or, with specDefaulted, under spec). Lists compare whole.
func fieldDiff(path string, want, rendered map[string]any, specDefaulted bool) []string {
	var out []string
	for k, w := range want {
		p := strings.TrimPrefix(path+"."+k, ".")
		r, ok := rendered[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: missing, want %v", p, w))
		case isMap(w) && isMap(r):
			out = append(out, fieldDiff(p, w.(map[string]any), r.(map[string]any), specDefaulted)...)
		case !reflect.DeepEqual(normalised(w), normalised(r)):
			out = append(out, fmt.Sprintf("%s: %v, want %v", p, r, w))
		}
	}
	for k := range rendered {
		p := strings.TrimPrefix(path+"."+k, ".")
		if _, ok := want[k]; ok || engineMetadata[p] || specDefaulted && strings.HasPrefix(p, "spec.") {
			continue
		}
		if m, ok := rendered[k].(map[string]any); ok {
			out = append(out, fieldDiff(p, map[string]any{}, m, specDefaulted)...)
			continue
		}
		out = append(out, fmt.Sprintf("%s: added by the render", p))
	}
	return out
}

func isMap(v any) bool { _, ok := v.(map[string]any); return ok }

// normalised is v with JSON numbers as float64 (structpb's) and YAML's
// int64, so 3 and 3.0 compare equal.
func normalised(v any) any {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case int:
		return float64(x)
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = normalised(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalised(e)
		}
		return out
	}
	return v
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
