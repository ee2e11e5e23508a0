package rules

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestXRDsCarryTheRules holds the shipped XRDs (generated from
// apis/v1alpha1) to the rules the code runs: every field a rule checks
// carries that rule's pattern and bound, so the API server and the function
// refuse the same values. controller-gen markers are comments, which cannot
// name a Go constant, so this is what keeps the two in step.
func TestXRDsCarryTheRules(t *testing.T) {
	want := map[string]string{
		"imageFactoryURL":                 URLPattern,
		"endpoints[]":                     URLPattern,
		"installerRepository":             InstallerRepositoryPattern,
		"images[].schematicID":            SchematicIDPattern,
		"builtin.schematicID":             SchematicIDPattern,
		"factory.schematicID":             SchematicPathPattern,
		"talos.schematicID":               SchematicPathPattern,
		"talos.version":                   TalosVersionPattern,
		"builtin.version":                 TalosVersionPattern,
		"factory.version":                 TalosVersionPattern,
		"images[].version":                TalosVersionPattern,
		"images[].checksum":               ChecksumPattern,
		"spec.version":                    KubernetesMinorPattern,
		"disk.pciAddress":                 PCIAddressPattern,
		"roles[]":                         NodeRolePattern,
		"kernelModules[].name":            KernelModuleNamePattern,
		"parameters[]":                    KernelModuleParameterPattern,
		"taints[].key":                    LabelKeyPattern,
		"taints[].value":                  LabelValuePattern,
		"gpus[].name":                     LabelKeyPattern,
		"labels[*]":                       LabelValuePattern,
		"maxNodeProvisionTime":            PositiveDurationPattern,
		"healthCheck.nodeStartupTimeout":  PositiveDurationPattern,
		"healthCheck.readyUnknownTimeout": PositiveDurationPattern,
		"healthCheck.readyFalseTimeout":   PositiveDurationPattern,
		"healthCheck.maxUnhealthy":        CountOrPercentPattern,
		"rollout.maxSurge":                CountOrPercentPattern,
		"rollout.maxUnavailable":          CountOrPercentPattern,
	}
	maxLength := map[string]float64{"imageFactoryURL": MaxURLLength, "endpoints[]": MaxURLLength, "images[].schematicID": MaxSchematicIDLength, "builtin.schematicID": MaxSchematicIDLength, "factory.schematicID": MaxSchematicPathLength, "talos.schematicID": MaxSchematicPathLength, "talos.version": MaxVersionLength}
	files, err := filepath.Glob("../../package/configuration/xrd-*.yaml")
	if err != nil || len(files) != 3 {
		t.Fatalf("want the three XRDs, got %v (%v)", files, err)
	}
	seen := map[string]int{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var xrd map[string]any
		if err := yaml.Unmarshal(b, &xrd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		versions, _ := dig(xrd, "spec", "versions").([]any)
		for _, v := range versions {
			schema, _ := dig(v.(map[string]any), "schema", "openAPIV3Schema", "properties", "spec").(map[string]any)
			walk(schema, "spec", func(path string, s map[string]any) {
				if strings.HasSuffix(path, ".registryMirrors") {
					seen["registryMirrors"]++
					wantRule := "self.all(k, k.matches('" + strings.ReplaceAll(RegistryHostPattern, `\`, `\\`) + "'))"
					var rules []string
					vs, _ := s["x-kubernetes-validations"].([]any)
					for _, v := range vs {
						rules = append(rules, v.(map[string]any)["rule"].(string))
					}
					if !slices.Contains(rules, wantRule) {
						t.Errorf("%s: %s carries the CEL rules %q, not the mirror-host rule %q", filepath.Base(f), path, rules, wantRule)
					}
				}
				for suffix, pattern := range want {
					if path != suffix && !strings.HasSuffix(path, "."+suffix) {
						continue
					}
					seen[suffix]++
					if got, _ := s["pattern"].(string); got != pattern {
						t.Errorf("%s: %s has pattern %q, the rule's is %q", filepath.Base(f), path, got, pattern)
					}
					if most, ok := maxLength[suffix]; ok && s["maxLength"] != most {
						t.Errorf("%s: %s has maxLength %v, the rule's is %v", filepath.Base(f), path, s["maxLength"], most)
					}
				}
			})
		}
	}
	for _, suffix := range append(slices.Collect(maps.Keys(want)), "registryMirrors") {
		if seen[suffix] == 0 {
			t.Errorf("no XRD field matches %q: the test would pass without checking it", suffix)
		}
	}
}

// walk calls fn on every schema under s, with its path (list items as []).
func walk(s map[string]any, path string, fn func(string, map[string]any)) {
	if s == nil {
		return
	}
	fn(path, s)
	props, _ := s["properties"].(map[string]any)
	for name, p := range props {
		walk(p.(map[string]any), path+"."+name, fn)
	}
	if items, ok := s["items"].(map[string]any); ok {
		walk(items, path+"[]", fn)
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		walk(ap, path+"[*]", fn)
	}
}

func dig(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

// The patterns compile as RE2, the engine of the API server's OpenAPI
// pattern validation.
func TestPatternsAreRE2(t *testing.T) {
	for _, p := range []string{URLPattern, RegistryHostPattern, TalosVersionPattern, KubernetesMinorPattern, SchematicIDPattern, SchematicPathPattern, InstallerRepositoryPattern, KernelModuleNamePattern, KernelModuleParameterPattern, LabelKeyPattern, LabelValuePattern} {
		if _, err := regexp.Compile(p); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
}
