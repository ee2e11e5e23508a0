package nodepool

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/rules"
)

// decodeSpec reads the composite's spec into its typed mirror with
// encoding/json. A field of the wrong type is reported by its full path and
// the value found there: the decoder's own error names neither the map key
// it was under nor the value.
func decodeSpec(raw map[string]any) (v1alpha1.NodePoolSpec, error) {
	spec := v1alpha1.NodePoolSpec{}
	if raw == nil {
		return spec, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return spec, fmt.Errorf("cannot read spec: %w", err)
	}
	err = json.Unmarshal(b, &spec)
	var te *json.UnmarshalTypeError
	if err == nil || !errors.As(err, &te) {
		if err != nil {
			return spec, fmt.Errorf("cannot read spec: %w", err)
		}
		return spec, nil
	}
	if m, ok := findMistyped(reflect.TypeOf(spec), raw, "spec"); ok {
		return spec, fmt.Errorf("%s %s is %s, but must be %s; fix the field's type in the composite", m.Path, m.Value, m.Found, m.Want)
	}
	return spec, fmt.Errorf("spec.%s is %s, but must be %s; fix the field's type in the composite", jsonPath(te.Field), Article(te.Value), JSONKind(te.Type))
}

// mistyped is the first value whose JSON type does not fit its field.
type mistyped struct {
	Path  string
	Value string // as JSON, truncated
	Found string // the JSON type found, with its article
	Want  string // the JSON type the field takes, with its article
}

// findMistyped walks v against the type it decodes into, in a fixed order
// (struct fields as declared, map keys sorted), and returns the first value
// of the wrong JSON type. Unknown keys are not its concern: the decoder
// ignores them, and osImage's are checked by checkOSImageKeys.
func findMistyped(t reflect.Type, v any, path string) (mistyped, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		return mistyped{}, false
	}
	bad := mistyped{Path: path, Value: jsonValue(v), Found: jsonTypeOf(v), Want: JSONKind(t)}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return bad, true
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && name == "" {
				if m, ok := findMistyped(f.Type, obj, path); ok {
					return m, true
				}
				continue
			}
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			if m, ok := findMistyped(f.Type, obj[name], path+"."+name); ok {
				return m, true
			}
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return bad, true
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if m, ok := findMistyped(t.Elem(), obj[k], fmt.Sprintf("%s[%q]", path, k)); ok {
				return m, true
			}
		}
	case reflect.Slice, reflect.Array:
		list, ok := v.([]any)
		if !ok {
			return bad, true
		}
		for i, e := range list {
			if m, ok := findMistyped(t.Elem(), e, fmt.Sprintf("%s[%d]", path, i)); ok {
				return m, true
			}
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return bad, true
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return bad, true
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !rules.IsNumber(v) {
			return bad, true
		}
		if _, err := strconv.ParseInt(jsonValue(v), 10, t.Bits()); err != nil {
			bad.Want = fmt.Sprintf("a whole number that fits %s", t.Kind())
			return bad, true
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if !rules.IsNumber(v) {
			return bad, true
		}
		if _, err := strconv.ParseUint(jsonValue(v), 10, t.Bits()); err != nil {
			bad.Want = fmt.Sprintf("a whole number that fits %s", t.Kind())
			return bad, true
		}
	case reflect.Float32, reflect.Float64:
		if !rules.IsNumber(v) {
			return bad, true
		}
	}
	return mistyped{}, false
}

// jsonValue is v as JSON, cut short enough to read in a message.
func jsonValue(v any) string {
	const keep = 64
	s := fmt.Sprint(v)
	if b, err := json.Marshal(v); err == nil {
		s = string(b)
	}
	if len(s) > keep {
		s = s[:keep] + "..."
	}
	return s
}

// jsonTypeOf names the JSON type of an unstructured value.
func jsonTypeOf(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return "a number"
}

// JSONKind names the JSON type a Go type decodes from, with its article;
// the tenant cluster names its own spec's types with it too.
func JSONKind(t reflect.Type) string {
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

// Article turns encoding/json's UnmarshalTypeError.Value ("string",
// "number 1.5") into readable prose.
func Article(value string) string {
	switch {
	case value == "array", value == "object":
		return "an " + value
	case strings.HasPrefix(value, "number "):
		return "the number " + strings.TrimPrefix(value, "number ")
	default:
		return "a " + value
	}
}

// jsonPath drops the Go names of embedded structs (PoolShape) from the
// decoder's field path, leaving the JSON names the user wrote.
func jsonPath(field string) string {
	parts := strings.Split(field, ".")
	out := parts[:0]
	for _, p := range parts {
		if p != "" && p[0] >= 'A' && p[0] <= 'Z' {
			continue
		}
		out = append(out, p)
	}
	return strings.Join(out, ".")
}
