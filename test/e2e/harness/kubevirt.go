package harness

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// KubeVirt's module and the version whose CRDs the suite installs: the API
// CAPK v0.11.2 is built against (kubevirt.io/api v1.7.0 in its go.mod).
const (
	KubeVirtModule  = "kubevirt.io/kubevirt"
	KubeVirtVersion = "v1.7.0"
)

// Kinds of KubeVirt.
var (
	VirtualMachine         = gvk("kubevirt.io", "v1", "VirtualMachine")
	VirtualMachineInstance = gvk("kubevirt.io", "v1", "VirtualMachineInstance")
)

// kubevirtValidations is the file of KubeVirt's module that holds the
// OpenAPI schema of each CRD, as YAML in the Go map CRDsValidation, keyed by
// the CRD's singular name. virt-operator builds the CRDs in Go at run time
// (pkg/virt-operator/resource/generate/components/crds.go) and no YAML of
// them ships in the module, so the suite reads the schemas from the source
// text, as it reads the other projects' CRD files.
const kubevirtValidations = "pkg/virt-operator/resource/generate/components/validations_generated.go"

// KubeVirtCRDs returns the VirtualMachine and VirtualMachineInstance CRDs
// as virt-operator v1.7.0 makes them (crds.go NewVirtualMachineCrd and
// NewVirtualMachineInstanceCrd): group kubevirt.io, versions v1 (storage)
// and v1alpha3 (served, deprecated) with the same schema
// (virtv1.ApiSupportedVersions), namespaced, a status subresource on the
// VirtualMachine only (a VirtualMachineInstance's status is written with
// the object, by virt-handler and virt-controller). Printer columns are
// left out.
func KubeVirtCRDs(ctx context.Context) ([]*unstructured.Unstructured, error) {
	dir, err := ModuleDir(ctx, KubeVirtModule, KubeVirtVersion)
	if err != nil {
		return nil, err
	}
	schemas, err := readCRDValidations(filepath.Join(dir, filepath.FromSlash(kubevirtValidations)), "virtualmachine", "virtualmachineinstance")
	if err != nil {
		return nil, fmt.Errorf("%s@%s: %w", KubeVirtModule, KubeVirtVersion, err)
	}
	crd := func(kind, singular, plural string, shortNames []any, statusSubresource bool) *unstructured.Unstructured {
		version := func(name string, storage bool) map[string]any {
			v := map[string]any{"name": name, "served": true, "storage": storage, "schema": schemas[singular]}
			if !storage {
				v["deprecated"] = true
				v["deprecationWarning"] = "kubevirt.io/v1alpha3 is now deprecated and will be removed in a future release."
			}
			if statusSubresource {
				v["subresources"] = map[string]any{"status": map[string]any{}}
			}
			return v
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1",
			"kind":       "CustomResourceDefinition",
			"metadata":   map[string]any{"name": plural + ".kubevirt.io", "labels": map[string]any{"kubevirt.io": ""}},
			"spec": map[string]any{
				"group": "kubevirt.io",
				"scope": "Namespaced",
				"names": map[string]any{
					"kind": kind, "listKind": kind + "List", "plural": plural, "singular": singular,
					"shortNames": shortNames, "categories": []any{"all"},
				},
				"versions": []any{version("v1", true), version("v1alpha3", false)},
			},
		}}
	}
	return []*unstructured.Unstructured{
		crd("VirtualMachine", "virtualmachine", "virtualmachines", []any{"vm", "vms"}, true),
		crd("VirtualMachineInstance", "virtualmachineinstance", "virtualmachineinstances", []any{"vmi", "vmis"}, false),
	}, nil
}

// readCRDValidations parses the Go file at path and returns, for each of
// names, its entry of the map literal CRDsValidation decoded from YAML (a
// CustomResourceValidation: {openAPIV3Schema: ...}).
func readCRDValidations(path string, names ...string) (map[string]any, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]any{}
	ast.Inspect(f, func(n ast.Node) bool {
		kv, ok := n.(*ast.KeyValueExpr)
		if !ok {
			return true
		}
		k, ok1 := kv.Key.(*ast.BasicLit)
		v, ok2 := kv.Value.(*ast.BasicLit)
		if !ok1 || !ok2 || k.Kind != token.STRING || v.Kind != token.STRING {
			return true
		}
		key, err1 := strconv.Unquote(k.Value)
		val, err2 := strconv.Unquote(v.Value)
		if err1 != nil || err2 != nil || !want[key] {
			return true
		}
		var schema map[string]any
		if err := yaml.Unmarshal([]byte(val), &schema); err != nil {
			out[key] = fmt.Errorf("CRDsValidation[%q]: %w", key, err)
			return false
		}
		out[key] = schema
		return false
	})
	for _, n := range names {
		switch v := out[n].(type) {
		case nil:
			return nil, fmt.Errorf("%s: no CRDsValidation entry %q; re-check the file", path, n)
		case error:
			return nil, v
		}
	}
	return out, nil
}
