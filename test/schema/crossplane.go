package schema

// This file turns an XRD into the CustomResourceDefinitions Crossplane v2.2.0
// generates from it, so that the tests validate composites against what the API
// server will really enforce. It follows internal/xcrd (crd.go and schemas.go)
// of github.com/crossplane/crossplane/v2 v2.2.0 (Apache-2.0), which cannot be
// imported: it is an internal package. What it reproduces:
//   - the root: apiVersion, kind, metadata (name at most 63 characters), spec
//     (required), status, plus the XRD's root description and x-kubernetes-validations;
//   - spec: the XRD's spec properties, required, validations and
//     x-kubernetes-preserve-unknown-fields, plus Crossplane's machinery:
//     spec.crossplane.{compositionRef,...,resourceRefs} for Namespaced and
//     Cluster XRs, the same fields directly under spec plus claimRef and
//     writeConnectionSecretToRef for LegacyCluster XRs;
//   - status: the XRD's status properties, required and validations, plus
//     conditions (and connectionDetails, claimConditionTypes for legacy). Note
//     that Crossplane does NOT copy x-kubernetes-preserve-unknown-fields of the
//     XRD's status: only nested properties can preserve unknown fields;
//   - the claim CRD of a LegacyCluster XRD with claimNames: the same schema,
//     with the claim's own spec fields (compositeDeletePolicy, resourceRef, ...).
// Printer columns, categories and owner references do not affect validation
// and are left out.

import (
	"fmt"
	"maps"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Scopes of a composite resource.
const (
	ScopeNamespaced    = "Namespaced"
	ScopeCluster       = "Cluster"
	ScopeLegacyCluster = "LegacyCluster"
)

// XRD is the part of a Crossplane CompositeResourceDefinition (v1 or v2) that
// shapes the generated CRDs.
type XRD struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec XRDSpec `json:"spec"`

	// File the XRD was read from, relative to the repository root.
	File string `json:"-"`
}

// XRDSpec is the spec of an XRD.
type XRDSpec struct {
	Group                 string                               `json:"group"`
	Names                 extv1.CustomResourceDefinitionNames  `json:"names"`
	ClaimNames            *extv1.CustomResourceDefinitionNames `json:"claimNames,omitempty"`
	Scope                 string                               `json:"scope,omitempty"`
	DefaultCompositionRef *struct {
		Name string `json:"name"`
	} `json:"defaultCompositionRef,omitempty"`
	Versions []XRDVersion `json:"versions"`
}

// XRDVersion is one version of an XRD.
type XRDVersion struct {
	Name          string `json:"name"`
	Served        bool   `json:"served"`
	Referenceable bool   `json:"referenceable"`
	Schema        struct {
		OpenAPIV3Schema extv1.JSONSchemaProps `json:"openAPIV3Schema"`
	} `json:"schema"`
	AdditionalPrinterColumns []extv1.CustomResourceColumnDefinition `json:"additionalPrinterColumns,omitempty"`
}

// EffectiveScope is the XRD's scope with Crossplane's defaults applied: v2
// XRDs default to Namespaced, v1 XRDs to LegacyCluster.
func (x XRD) EffectiveScope() string {
	if x.Spec.Scope != "" {
		return x.Spec.Scope
	}
	if x.APIVersion == "apiextensions.crossplane.io/v1" {
		return ScopeLegacyCluster
	}
	return ScopeNamespaced
}

// CompositeCRD returns the CRD Crossplane generates for the XRD's composite.
func CompositeCRD(x XRD) *extv1.CustomResourceDefinition {
	scope := x.EffectiveScope()
	crd := &extv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: x.Metadata.Name},
		Spec: extv1.CustomResourceDefinitionSpec{
			Group:    x.Spec.Group,
			Names:    x.Spec.Names,
			Scope:    extv1.NamespaceScoped,
			Versions: make([]extv1.CustomResourceDefinitionVersion, len(x.Spec.Versions)),
		},
	}
	if scope != ScopeNamespaced {
		crd.Spec.Scope = extv1.ClusterScoped
	}
	crd.Spec.Names.Categories = append(append([]string(nil), crd.Spec.Names.Categories...), "composite")
	for i, v := range x.Spec.Versions {
		crdv := crdVersion(v, 63)
		maps.Copy(crdv.Schema.OpenAPIV3Schema.Properties["spec"].Properties, compositeSpecProps(scope))
		maps.Copy(crdv.Schema.OpenAPIV3Schema.Properties["status"].Properties, compositeStatusProps(scope))
		crd.Spec.Versions[i] = crdv
	}
	fillListKinds(crd)
	return crd
}

// ClaimCRD returns the CRD Crossplane generates for a legacy XRD's claim, or
// an error when the XRD offers no claim.
func ClaimCRD(x XRD) (*extv1.CustomResourceDefinition, error) {
	if x.Spec.ClaimNames == nil {
		return nil, fmt.Errorf("%s offers no claim", x.Metadata.Name)
	}
	if x.EffectiveScope() != ScopeLegacyCluster {
		return nil, fmt.Errorf("%s offers a claim but is not LegacyCluster: only LegacyCluster composites can offer claims", x.Metadata.Name)
	}
	names := *x.Spec.ClaimNames
	crd := &extv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: names.Plural + "." + x.Spec.Group},
		Spec: extv1.CustomResourceDefinitionSpec{
			Group:    x.Spec.Group,
			Names:    names,
			Scope:    extv1.NamespaceScoped,
			Versions: make([]extv1.CustomResourceDefinitionVersion, len(x.Spec.Versions)),
		},
	}
	crd.Spec.Names.Categories = append(append([]string(nil), crd.Spec.Names.Categories...), "claim")
	for i, v := range x.Spec.Versions {
		crdv := crdVersion(v, 63)
		maps.Copy(crdv.Schema.OpenAPIV3Schema.Properties["spec"].Properties, claimSpecProps())
		maps.Copy(crdv.Schema.OpenAPIV3Schema.Properties["status"].Properties, compositeStatusProps(ScopeLegacyCluster))
		crd.Spec.Versions[i] = crdv
	}
	fillListKinds(crd)
	return crd, nil
}

func fillListKinds(crd *extv1.CustomResourceDefinition) {
	if crd.Spec.Names.ListKind == "" {
		crd.Spec.Names.ListKind = crd.Spec.Names.Kind + "List"
	}
	if crd.Spec.Names.Singular == "" {
		crd.Spec.Names.Singular = lower(crd.Spec.Names.Kind)
	}
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// crdVersion follows xcrd.genCrdVersion.
func crdVersion(v XRDVersion, maxNameLength int64) extv1.CustomResourceDefinitionVersion {
	s := *v.Schema.OpenAPIV3Schema.DeepCopy()
	root := baseProps()
	root.Description = s.Description
	root.XValidations = s.XValidations

	maxLength := maxNameLength
	if old := s.Properties["metadata"].Properties["name"].MaxLength; old != nil && *old < maxLength {
		maxLength = *old
	}
	root.Properties["metadata"] = extv1.JSONSchemaProps{
		Type:       "object",
		Properties: map[string]extv1.JSONSchemaProps{"name": {Type: "string", MaxLength: ptr.To(maxLength)}},
	}

	xSpec := s.Properties["spec"]
	cSpec := root.Properties["spec"]
	cSpec.Required = append(cSpec.Required, xSpec.Required...)
	cSpec.XPreserveUnknownFields = xSpec.XPreserveUnknownFields
	cSpec.XValidations = append(cSpec.XValidations, xSpec.XValidations...)
	cSpec.OneOf = append(cSpec.OneOf, xSpec.OneOf...)
	cSpec.Description = xSpec.Description
	maps.Copy(cSpec.Properties, xSpec.Properties)
	root.Properties["spec"] = cSpec

	xStatus := s.Properties["status"]
	cStatus := root.Properties["status"]
	cStatus.Required = xStatus.Required
	cStatus.XValidations = xStatus.XValidations
	cStatus.Description = xStatus.Description
	cStatus.OneOf = xStatus.OneOf
	maps.Copy(cStatus.Properties, xStatus.Properties)
	root.Properties["status"] = cStatus

	return extv1.CustomResourceDefinitionVersion{
		Name:                     v.Name,
		Served:                   v.Served,
		Storage:                  v.Referenceable,
		AdditionalPrinterColumns: v.AdditionalPrinterColumns,
		Schema:                   &extv1.CustomResourceValidation{OpenAPIV3Schema: root},
		Subresources:             &extv1.CustomResourceSubresources{Status: &extv1.CustomResourceSubresourceStatus{}},
	}
}

func baseProps() *extv1.JSONSchemaProps {
	return &extv1.JSONSchemaProps{
		Type:     "object",
		Required: []string{"spec"},
		Properties: map[string]extv1.JSONSchemaProps{
			"apiVersion": {Type: "string"},
			"kind":       {Type: "string"},
			"metadata":   {Type: "object"},
			"spec":       {Type: "object", Properties: map[string]extv1.JSONSchemaProps{}},
			"status":     {Type: "object", Properties: map[string]extv1.JSONSchemaProps{}},
		},
	}
}

func nameRef() extv1.JSONSchemaProps {
	return extv1.JSONSchemaProps{Type: "object", Required: []string{"name"}, Properties: map[string]extv1.JSONSchemaProps{"name": {Type: "string"}}}
}

func labelSelector() extv1.JSONSchemaProps {
	return extv1.JSONSchemaProps{
		Type:     "object",
		Required: []string{"matchLabels"},
		Properties: map[string]extv1.JSONSchemaProps{
			"matchLabels": {Type: "object", AdditionalProperties: &extv1.JSONSchemaPropsOrBool{Allows: true, Schema: &extv1.JSONSchemaProps{Type: "string"}}},
		},
	}
}

func enum(values ...string) []extv1.JSON {
	out := make([]extv1.JSON, 0, len(values))
	for _, v := range values {
		out = append(out, extv1.JSON{Raw: []byte(`"` + v + `"`)})
	}
	return out
}

func refs(withNamespace bool) extv1.JSONSchemaProps {
	p := map[string]extv1.JSONSchemaProps{
		"apiVersion": {Type: "string"},
		"name":       {Type: "string"},
		"kind":       {Type: "string"},
	}
	if withNamespace {
		p["namespace"] = extv1.JSONSchemaProps{Type: "string"}
	}
	return extv1.JSONSchemaProps{
		Type:      "array",
		Items:     &extv1.JSONSchemaPropsOrArray{Schema: &extv1.JSONSchemaProps{Type: "object", Properties: p, Required: []string{"apiVersion", "kind"}}},
		XListType: ptr.To("atomic"),
	}
}

// compositeSpecProps follows xcrd.CompositeResourceSpecProps with no default
// composition update policy.
func compositeSpecProps(scope string) map[string]extv1.JSONSchemaProps {
	props := map[string]extv1.JSONSchemaProps{
		"compositionRef":              nameRef(),
		"compositionSelector":         labelSelector(),
		"compositionRevisionRef":      nameRef(),
		"compositionRevisionSelector": labelSelector(),
		"compositionUpdatePolicy":     {Type: "string", Enum: enum("Automatic", "Manual")},
		"resourceRefs":                refs(scope != ScopeNamespaced),
	}
	if scope == ScopeLegacyCluster {
		props["claimRef"] = extv1.JSONSchemaProps{
			Type:     "object",
			Required: []string{"apiVersion", "kind", "namespace", "name"},
			Properties: map[string]extv1.JSONSchemaProps{
				"apiVersion": {Type: "string"}, "kind": {Type: "string"}, "namespace": {Type: "string"}, "name": {Type: "string"},
			},
		}
		props["writeConnectionSecretToRef"] = extv1.JSONSchemaProps{
			Type:       "object",
			Required:   []string{"name", "namespace"},
			Properties: map[string]extv1.JSONSchemaProps{"name": {Type: "string"}, "namespace": {Type: "string"}},
		}
		return props
	}
	return map[string]extv1.JSONSchemaProps{
		"crossplane": {Type: "object", Description: "Configures how Crossplane will reconcile this composite resource", Properties: props},
	}
}

// claimSpecProps follows xcrd.CompositeResourceClaimSpecProps with no default
// composite delete policy.
func claimSpecProps() map[string]extv1.JSONSchemaProps {
	return map[string]extv1.JSONSchemaProps{
		"compositionRef":              nameRef(),
		"compositionSelector":         labelSelector(),
		"compositionRevisionRef":      nameRef(),
		"compositionRevisionSelector": labelSelector(),
		"compositionUpdatePolicy":     {Type: "string", Enum: enum("Automatic", "Manual")},
		"compositeDeletePolicy":       {Type: "string", Enum: enum("Background", "Foreground")},
		"resourceRef": {
			Type:       "object",
			Required:   []string{"apiVersion", "kind", "name"},
			Properties: map[string]extv1.JSONSchemaProps{"apiVersion": {Type: "string"}, "kind": {Type: "string"}, "name": {Type: "string"}},
		},
		"writeConnectionSecretToRef": nameRef(),
	}
}

// compositeStatusProps follows xcrd.CompositeResourceStatusProps.
func compositeStatusProps(scope string) map[string]extv1.JSONSchemaProps {
	props := map[string]extv1.JSONSchemaProps{
		"conditions": {
			Description:  "Conditions of the resource.",
			Type:         "array",
			XListMapKeys: []string{"type"},
			XListType:    ptr.To("map"),
			Items: &extv1.JSONSchemaPropsOrArray{Schema: &extv1.JSONSchemaProps{
				Type:     "object",
				Required: []string{"lastTransitionTime", "reason", "status", "type"},
				Properties: map[string]extv1.JSONSchemaProps{
					"lastTransitionTime": {Type: "string", Format: "date-time"},
					"message":            {Type: "string"},
					"reason":             {Type: "string"},
					"status":             {Type: "string"},
					"type":               {Type: "string"},
					"observedGeneration": {Type: "integer", Format: "int64"},
				},
			}},
		},
	}
	if scope == ScopeLegacyCluster {
		props["connectionDetails"] = extv1.JSONSchemaProps{
			Type:       "object",
			Properties: map[string]extv1.JSONSchemaProps{"lastPublishedTime": {Type: "string", Format: "date-time"}},
		}
		props["claimConditionTypes"] = extv1.JSONSchemaProps{
			Type:      "array",
			XListType: ptr.To("set"),
			Items:     &extv1.JSONSchemaPropsOrArray{Schema: &extv1.JSONSchemaProps{Type: "string"}},
		}
	}
	return props
}
