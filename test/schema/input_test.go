package schema

import (
	"testing"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// TestCompositionInputsMatchTheInputCRD checks the generated Input CRD with
// the API server's CRD validation, and every step input of the packaged
// Compositions (modern and legacy) against it. Crossplane never installs the
// Input CRD nor validates inputs, so this is the only place a typo in an
// Input would be caught before the function refuses it.
func TestCompositionInputsMatchTheInputCRD(t *testing.T) {
	objs, err := ReadObjects(root, "package/input/workerimage.fn.crossplane.io_inputs.yaml")
	if err != nil || len(objs) != 1 {
		t.Fatalf("want one Input CRD, got %d (%v)", len(objs), err)
	}
	raw, _ := yaml.Marshal(objs[0].Object)
	crd := &extv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(raw, crd); err != nil {
		t.Fatal(err)
	}
	if errs := ValidateCRD(crd); len(errs) > 0 {
		t.Fatalf("the Input CRD is invalid: %v", errs.ToAggregate())
	}
	v, err := NewValidator(crd, "v1beta1")
	if err != nil {
		t.Fatal(err)
	}
	modes := map[string]string{"XWorkerImageCatalog": "Catalog", "XTenantCluster": "TenantCluster", "XNodePool": "NodePool"}
	steps := 0
	for _, dir := range []string{configurationDir, legacyDir} {
		files, err := YAMLFiles(root, dir, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			objs, err := ReadObjects(root, f)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				if o.Object["kind"] != "Composition" {
					continue
				}
				kind, _ := nested(o.Object, "spec", "compositeTypeRef", "kind").(string)
				pipeline, _ := nested(o.Object, "spec", "pipeline").([]any)
				for _, s := range pipeline {
					in, _ := nested(s.(map[string]any), "input").(map[string]any)
					steps++
					if _, errs := v.Admit(withMetadata(in)); len(errs) > 0 {
						t.Errorf("%s: the step input does not match the Input CRD: %v", o, errs.ToAggregate())
					}
					if in["mode"] != modes[kind] {
						t.Errorf("%s: the step input's mode is %v, want %s for %s", o, in["mode"], modes[kind], kind)
					}
				}
			}
		}
	}
	if steps == 0 {
		t.Fatal("found no Composition steps")
	}
}

// withMetadata gives an inline input the metadata a stored object has.
func withMetadata(in map[string]any) map[string]any {
	out := map[string]any{"metadata": map[string]any{"name": "input"}}
	for k, v := range in {
		out[k] = v
	}
	return out
}

// TestInputClusterAPIVersion checks the Input's Cluster API contract: the two
// versions the function writes are admitted, v1beta1 is the default, and
// anything else is refused by the enum.
func TestInputClusterAPIVersion(t *testing.T) {
	objs, err := ReadObjects(root, "package/input/workerimage.fn.crossplane.io_inputs.yaml")
	if err != nil || len(objs) != 1 {
		t.Fatalf("want one Input CRD, got %d (%v)", len(objs), err)
	}
	raw, _ := yaml.Marshal(objs[0].Object)
	crd := &extv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(raw, crd); err != nil {
		t.Fatal(err)
	}
	v, err := NewValidator(crd, "v1beta1")
	if err != nil {
		t.Fatal(err)
	}
	input := func(capi map[string]any) map[string]any {
		in := map[string]any{"apiVersion": "workerimage.fn.crossplane.io/v1beta1", "kind": "Input", "mode": "NodePool"}
		if capi != nil {
			in["clusterAPI"] = capi
		}
		return withMetadata(in)
	}
	cases := map[string]struct {
		reason string
		in     map[string]any
		want   any // the stored clusterAPI.version; nil when refused
	}{
		"V1beta1":        {"The contract CAPK v0.11 speaks.", input(map[string]any{"version": "v1beta1"}), "v1beta1"},
		"V1beta2":        {"Cluster API v1.11 and later.", input(map[string]any{"version": "v1beta2"}), "v1beta2"},
		"DefaultIsBeta1": {"An empty clusterAPI block defaults to v1beta1.", input(map[string]any{}), "v1beta1"},
		"UnknownRefused": {"v1 is no Cluster API version the function writes.", input(map[string]any{"version": "v1"}), nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, errs := v.Admit(tc.in)
			if tc.want == nil {
				if len(errs) == 0 {
					t.Fatalf("%s: admitted", tc.reason)
				}
				return
			}
			if len(errs) > 0 {
				t.Fatalf("%s: refused: %v", tc.reason, errs.ToAggregate())
			}
			if v := nested(got, "clusterAPI", "version"); v != tc.want {
				t.Errorf("%s: clusterAPI.version %v, want %v", tc.reason, v, tc.want)
			}
		})
	}
}
