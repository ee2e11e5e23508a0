package schema

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// ValidateCRD runs the API server's own create-time validation of a CRD:
// structural schema, defaults (pruned, valid against their schema),
// x-kubernetes-validations compilation and CEL cost estimation.
func ValidateCRD(crd *extv1.CustomResourceDefinition) field.ErrorList {
	internal := &apiextensions.CustomResourceDefinition{}
	if err := extv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, internal, nil); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	// A CRD is created with its storage version recorded.
	for _, v := range internal.Spec.Versions {
		if v.Storage {
			internal.Status.StoredVersions = append(internal.Status.StoredVersions, v.Name)
		}
	}
	return crdvalidation.ValidateCustomResourceDefinition(context.Background(), internal)
}

// Validator validates custom resources of one CRD version the way the API
// server does on create and update with strict field validation.
type Validator struct {
	structural *structuralschema.Structural
	schema     apiservervalidation.SchemaValidator
	cel        *cel.Validator
}

// NewValidator returns a Validator for version of crd.
func NewValidator(crd *extv1.CustomResourceDefinition, version string) (*Validator, error) {
	var props *extv1.JSONSchemaProps
	for _, v := range crd.Spec.Versions {
		if v.Name == version && v.Schema != nil {
			props = v.Schema.OpenAPIV3Schema
		}
	}
	if props == nil {
		return nil, fmt.Errorf("%s has no schema for version %s", crd.Name, version)
	}
	internal := &apiextensions.JSONSchemaProps{}
	if err := extv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(props, internal, nil); err != nil {
		return nil, err
	}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, fmt.Errorf("%s is not structural: %w", crd.Name, err)
	}
	sv, _, err := apiservervalidation.NewSchemaValidator(internal)
	if err != nil {
		return nil, err
	}
	return &Validator{structural: s, schema: sv, cel: cel.NewValidator(s, true, celconfig.PerCallLimit)}, nil
}

// Admit returns obj as the API server would store it on create (unknown
// fields rejected, defaults applied) and every validation error.
func (v *Validator) Admit(obj map[string]any) (map[string]any, field.ErrorList) {
	return v.admit(obj, nil)
}

// AdmitUpdate is Admit for an update of old (as stored) to obj. Transition
// rules (those using oldSelf) only run here.
func (v *Validator) AdmitUpdate(obj, old map[string]any) (map[string]any, field.ErrorList) {
	return v.admit(obj, old)
}

func (v *Validator) admit(in, old map[string]any) (map[string]any, field.ErrorList) {
	obj := runtime.DeepCopyJSON(in)
	var errs field.ErrorList
	unknown := structuralpruning.PruneWithOptions(obj, v.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	sort.Strings(unknown)
	for _, p := range unknown {
		errs = append(errs, field.NotSupported(field.NewPath(p), "", []string{"a field of the schema (strict field validation)"}))
	}
	structuraldefaulting.Default(obj, v.structural)

	if old == nil {
		errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj, v.schema)...)
		errs = append(errs, listtype.ValidateListSetsAndMaps(nil, v.structural, obj)...)
	} else {
		errs = append(errs, apiservervalidation.ValidateCustomResourceUpdate(nil, obj, old, v.schema)...)
		errs = append(errs, listtype.ValidateListSetsAndMaps(nil, v.structural, obj)...)
	}
	if len(errs) > 0 {
		// The API server runs CEL only when the schema validation passed.
		return obj, errs
	}
	var oldObj any
	if old != nil {
		oldObj = old
	}
	celErrs, _ := v.cel.Validate(context.Background(), nil, v.structural, obj, oldObj, celconfig.RuntimeCELCostBudget)
	return obj, append(errs, celErrs...)
}
