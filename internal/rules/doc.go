// Package rules holds the product's validation rules, each defined once and
// used by every mode: a rule takes the field path it checks and returns a
// field.ErrorList (k8s.io/apimachinery util/validation/field), so the tenant
// cluster and the node pool report the same problem from the same code, each
// at its own path.
package rules
