// Package decode decodes a composite's unstructured spec into its Go type,
// reporting every mistyped value by the path the user wrote
// (spec.nodePools[gpu].replicas), so one pass names every problem.
package decode

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/internal/rules"
)

// Into decodes raw, a composite's field as unstructured JSON, into into, a
// pointer to its Go type; each mistyped value is reported at its path under
// root and left zero. skip lists paths another rule already reported (a
// replica count beyond int32), neither reported again nor decoded.
//
// A null under a pointer to a struct decodes to the zero struct, not nil:
// in a union such as osImage, presence selects (builtin: {} and a bare
// builtin: are the same).
func Into(raw any, root *field.Path, into any, skip ...string) field.ErrorList {
	t := reflect.TypeOf(into)
	if t == nil || t.Kind() != reflect.Pointer {
		return field.ErrorList{field.InternalError(root, fmt.Errorf("decode target %T is not a pointer", into))}
	}
	if raw == nil {
		return nil
	}
	d := decoder{skip: skip}
	clean := d.walk(t.Elem(), raw, root)
	b, err := json.Marshal(clean)
	if err == nil {
		err = json.Unmarshal(b, into)
	}
	if err != nil {
		// walk removed every mistyped value: a bug, not bad input.
		d.errs = append(d.errs, field.InternalError(root, fmt.Errorf("cannot decode a well-typed %s: %w", t.Elem(), err)))
	}
	return d.errs
}

type decoder struct {
	skip []string
	errs field.ErrorList
}

// walk returns v with every value that does not fit t removed, reporting
// each in a stable order.
func (d *decoder) walk(t reflect.Type, v any, path *field.Path) any {
	if slices.Contains(d.skip, path.String()) {
		return nil
	}
	ptrToStruct := t.Kind() == reflect.Pointer && deref(t).Kind() == reflect.Struct
	t = deref(t)
	if v == nil {
		if ptrToStruct {
			return map[string]any{}
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return d.mistyped(path, v, t)
		}
		out := map[string]any{}
		d.fields(t, obj, path, out)
		return out
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return d.mistyped(path, v, t)
		}
		out := make(map[string]any, len(obj))
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if c := d.walk(t.Elem(), obj[k], path.Key(k)); c != nil || obj[k] == nil {
				out[k] = c
			}
		}
		return out
	case reflect.Slice, reflect.Array:
		list, ok := v.([]any)
		if !ok {
			return d.mistyped(path, v, t)
		}
		out := make([]any, 0, len(list))
		for i, e := range list {
			out = append(out, d.walk(t.Elem(), e, path.Index(i)))
		}
		return out
	case reflect.String:
		if _, ok := v.(string); ok {
			break
		}
		if n, ok := number(v); ok && intOrString(t) {
			return json.Number(n)
		}
		return d.mistyped(path, v, t)
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return d.mistyped(path, v, t)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := number(v)
		if !ok {
			return d.mistyped(path, v, t)
		}
		if _, err := strconv.ParseInt(n, 10, t.Bits()); err != nil {
			d.errs = append(d.errs, field.Invalid(path, json.Number(n), fmt.Sprintf("must be a whole number from %d to %d", minInt(t.Bits()), maxInt(t.Bits()))))
			return nil
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := number(v)
		if !ok {
			return d.mistyped(path, v, t)
		}
		if _, err := strconv.ParseUint(n, 10, t.Bits()); err != nil {
			d.errs = append(d.errs, field.Invalid(path, json.Number(n), fmt.Sprintf("must be a whole number from 0 to %d", uint64(math.MaxUint64)>>(64-t.Bits()))))
			return nil
		}
	case reflect.Float32, reflect.Float64:
		if _, ok := number(v); !ok {
			return d.mistyped(path, v, t)
		}
	}
	return v
}

// fields walks the JSON fields of struct t, inlining embedded structs as
// encoding/json does.
func (d *decoder) fields(t reflect.Type, obj map[string]any, path *field.Path, out map[string]any) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" && deref(f.Type).Kind() == reflect.Struct {
			d.fields(deref(f.Type), obj, path, out)
			continue
		}
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		v, present := obj[name]
		if !present {
			continue
		}
		if c := d.walk(f.Type, v, path.Child(name)); c != nil {
			out[name] = c
		}
	}
}

// mistyped reports v at path as not being of t's JSON type.
func (d *decoder) mistyped(path *field.Path, v any, t reflect.Type) any {
	var shown any = field.OmitValueType{}
	switch x := v.(type) {
	case string:
		shown = rules.Quoted(x)
	case bool:
		shown = x
	default:
		if n, ok := number(v); ok {
			shown = json.Number(n)
		}
	}
	d.errs = append(d.errs, field.Invalid(path, shown, fmt.Sprintf("is %s, but must be %s; fix the field's type in the composite", jsonTypeOf(v), JSONKind(t))))
	return nil
}

// number is v as a JSON number literal (1e12 is 1000000000000), if it is one.
func number(v any) (string, bool) {
	switch v.(type) {
	case nil, string, bool, map[string]any, []any:
		return "", false
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", false
	}
	return string(b), true
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func minInt(bits int) int64 { return -1 << (bits - 1) }
func maxInt(bits int) int64 { return 1<<(bits-1) - 1 }

// jsonTypeOf names the JSON type of an unstructured value, with its article.
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

// JSONKind names the JSON type a Go type decodes from, with its article.
func JSONKind(t reflect.Type) string {
	switch deref(t).Kind() {
	case reflect.String:
		if intOrString(deref(t)) {
			return "a string or an integer"
		}
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

// intOrString reports whether t, a string kind, reads a JSON number too: a
// type with its own UnmarshalJSON, such as v1alpha1.Quantity, whose schema
// is x-kubernetes-int-or-string.
func intOrString(t reflect.Type) bool {
	return reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]())
}
