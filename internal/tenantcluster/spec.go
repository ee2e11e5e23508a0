package tenantcluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/crossplane/function-sdk-go/resource/composite"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
)

// decodeSpec reads the composite's spec into its typed mirror, once. A field
// of the wrong type is reported by its full path, with the pool named: the
// JSON decoder drops map keys from its paths, which would leave a user with
// five pools guessing which one says replicas: "three".
func decodeSpec(xr *composite.Unstructured) (v1alpha1.TenantClusterSpec, error) {
	spec := v1alpha1.TenantClusterSpec{}
	raw, ok := xr.UnstructuredContent()["spec"]
	if !ok || raw == nil {
		return spec, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return spec, fmt.Errorf("cannot read spec: %w", err)
	}
	err = json.Unmarshal(b, &spec)
	if err == nil {
		return spec, nil
	}
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return spec, fmt.Errorf("cannot read spec: %w", err)
	}
	field := "spec." + te.Field
	if te.Field == "nodePools" || strings.HasPrefix(te.Field, "nodePools.") {
		field = poolFieldPath(b, te)
	}
	return spec, fmt.Errorf("%s is %s, but must be %s; fix the field's type in the composite", field, article(te.Value), jsonKind(te.Type))
}

// poolFieldPath finds the pool whose field failed to decode by decoding each
// pool on its own, in sorted order so that the first bad pool is always the
// one named.
func poolFieldPath(spec []byte, te *json.UnmarshalTypeError) string {
	fallback := "spec." + te.Field
	var s struct {
		NodePools map[string]json.RawMessage `json:"nodePools"`
	}
	if json.Unmarshal(spec, &s) != nil {
		return fallback
	}
	names := make([]string, 0, len(s.NodePools))
	for n := range s.NodePools {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		var p v1alpha1.PoolShape
		var pe *json.UnmarshalTypeError
		if errors.As(json.Unmarshal(s.NodePools[n], &p), &pe) {
			return poolField(n, pe.Field)
		}
	}
	return fallback
}

// article turns the decoder's "string" or "number 1.5" into readable prose.
func article(value string) string {
	switch {
	case value == "array", value == "object":
		return "an " + value
	case strings.HasPrefix(value, "number "):
		return "the number " + strings.TrimPrefix(value, "number ")
	default:
		return "a " + value
	}
}

// jsonKind names the JSON shape a Go type decodes from.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "an object"
	}
}
