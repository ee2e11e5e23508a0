package schema

import (
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
)

// validators returns a Validator per kind: the composites of dir, and their
// claims when the XRDs offer any.
func validators(t *testing.T, dir string) map[string]*Validator {
	t.Helper()
	out := map[string]*Validator{}
	for _, x := range mustXRDs(t, dir) {
		v, err := NewValidator(CompositeCRD(x), v1alpha1.Version)
		if err != nil {
			t.Fatalf("%s: %v", x.File, err)
		}
		out[x.Spec.Names.Kind] = v
		if x.Spec.ClaimNames == nil {
			continue
		}
		crd, err := ClaimCRD(x)
		if err != nil {
			t.Fatalf("%s: %v", x.File, err)
		}
		if out[x.Spec.ClaimNames.Kind], err = NewValidator(crd, v1alpha1.Version); err != nil {
			t.Fatalf("%s: %v", x.File, err)
		}
	}
	return out
}

func fromYAML(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad test YAML: %v\n%s", err, s)
	}
	m, err := normalize(m)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestExamplesAreAdmitted validates every composite and claim under example/
// against the schema its kind gets from the shipped XRDs, as the API server
// would on create. Rendered composites (a scenario's expected.yaml) carry only
// status; they are checked with the scenario's spec, which shows that the
// function writes no status field the XRD would prune. XRs of scenarios that
// must fail (expected-error.txt) are left out: they may be invalid on purpose;
// so are observed.yaml and required.yaml, abbreviated fixtures of the cluster's
// state rather than objects anyone creates.
func TestExamplesAreAdmitted(t *testing.T) {
	modern := validators(t, configurationDir)
	legacy := validators(t, legacyDir)
	files, err := YAMLFiles(root, "example", true)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		dir := path.Dir(f)
		if base := path.Base(f); base == "observed.yaml" || base == "required.yaml" {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, dir, "expected-error.txt")); err == nil && path.Base(f) == "xr.yaml" {
			continue
		}
		objs, err := ReadObjects(root, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			group, kind, _ := strings.Cut(o.GroupKind(), "/")
			if group != v1alpha1.Group {
				continue
			}
			v := modern[kind]
			if strings.HasPrefix(f, "example/claims/") {
				v = legacy[kind]
			}
			if v == nil {
				t.Errorf("%s: no shipped XRD defines kind %s", o, kind)
				continue
			}
			obj := o.Object
			// crossplane render writes the composite with its status and
			// only the spec Crossplane itself keeps (spec.crossplane's
			// resourceRefs): the scenario's xr.yaml holds the rest.
			if spec, _ := obj["spec"].(map[string]any); len(spec) == 1 && spec["crossplane"] != nil && path.Base(f) == "expected.yaml" {
				obj = maps.Clone(obj)
				delete(obj, "spec")
			}
			if _, hasSpec := obj["spec"]; !hasSpec && path.Base(f) == "expected.yaml" {
				spec, err := scenarioSpec(dir, kind)
				if err != nil {
					t.Errorf("%s: %v", o, err)
					continue
				}
				obj = withSpec(obj, spec)
			}
			checked++
			if _, errs := v.Admit(obj); len(errs) > 0 {
				t.Errorf("%s is rejected by the %s schema:\n%v", o, kind, errs.ToAggregate())
			}
		}
	}
	if checked == 0 {
		t.Fatal("found no composite or claim under example/")
	}
	t.Logf("admitted %d composites and claims", checked)
}

// scenarioSpec is the spec of the scenario's xr.yaml, or of its mode
// directory's xr.yaml.
func scenarioSpec(dir, kind string) (any, error) {
	for _, f := range []string{dir + "/xr.yaml", path.Dir(path.Dir(dir)) + "/xr.yaml"} {
		objs, err := ReadObjects(root, f)
		if err != nil {
			continue
		}
		for _, o := range objs {
			if o.Object["kind"] == kind && o.Object["spec"] != nil {
				return o.Object["spec"], nil
			}
		}
	}
	return nil, fmt.Errorf("no %s with a spec beside the rendered output", kind)
}

func withSpec(obj map[string]any, spec any) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		out[k] = v
	}
	out["spec"] = spec
	return out
}

// TestPlatformExampleUsesThePackagedComposition checks that the platform
// example renders with the Composition users install, not a copy.
func TestPlatformExampleUsesThePackagedComposition(t *testing.T) {
	got, err := os.ReadFile(filepath.Join(root, "example/platform/composition.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(root, configurationDir, "composition-xtenantcluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("example/platform/composition.yaml is not the packaged Composition\n-want, +got:\n%s", diff)
	}
}
