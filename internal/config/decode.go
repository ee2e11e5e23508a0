package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/cozystack/function-worker-image/input/v1beta1"
)

// Input identity.
const (
	InputAPIVersion = "workerimage.fn.crossplane.io/v1beta1"
	InputKind       = "Input"
)

// DecodeInput reads the function Input strictly, so a typo never falls back
// to a default. It uses encoding/json, not request.GetInput, whose decoder
// deliberately varies its error wording between runs; the same request must
// get the same response. A missing Input means every default.
func DecodeInput(s *structpb.Struct) (*v1beta1.Input, error) {
	in := &v1beta1.Input{}
	if s == nil {
		return in, nil
	}
	b, err := json.Marshal(s.AsMap()) // map keys are sorted: stable bytes
	if err != nil {
		return nil, fmt.Errorf("cannot read the function Input: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(in); err != nil {
		return nil, fmt.Errorf("cannot read the function Input (%s %s): %s; see package/input for its fields", InputAPIVersion, InputKind, describe(err, s.AsMap()))
	}
	if (in.APIVersion != "" && in.APIVersion != InputAPIVersion) || (in.Kind != "" && in.Kind != InputKind) {
		return nil, fmt.Errorf("cannot read the function Input: it is a %s %s; set apiVersion %s and kind %s in the Composition step's input", in.APIVersion, in.Kind, InputAPIVersion, InputKind)
	}
	return in, nil
}

// describe turns a decoding error into a message naming the field; a value
// its own type refuses comes back from encoding/json without it, so it is
// looked up in v.
func describe(err error, v any) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "the Input"
		}
		return fmt.Sprintf("%s is a JSON %s, but must be a %s", field, te.Value, te.Type.String())
	}
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		if path, ferr := refusedField(reflect.TypeFor[v1beta1.Input](), v, ""); ferr != nil {
			return fmt.Sprintf("%s: %v", path, ferr)
		}
	}
	// encoding/json reports an unknown field as `json: unknown field "x"`.
	return strings.TrimPrefix(err.Error(), "json: ")
}

// unmarshaler is the type of a field that decodes itself.
var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

// refusedField returns the first field of v, in a stable order, whose own
// UnmarshalJSON refuses its value, with that error.
func refusedField(t reflect.Type, v any, path string) (string, error) {
	if v == nil {
		return "", nil
	}
	if reflect.PointerTo(t).Implements(unmarshaler) {
		b, err := json.Marshal(v)
		if err != nil {
			return path, err
		}
		if err := reflect.New(t).Interface().(json.Unmarshaler).UnmarshalJSON(b); err != nil {
			return path, err
		}
		return "", nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return refusedField(t.Elem(), v, path)
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return "", nil
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" && f.Anonymous {
				// An inline struct's fields are the parent's.
				if p, err := refusedField(f.Type, v, path); err != nil {
					return p, err
				}
				continue
			}
			if name == "" {
				name = f.Name
			}
			if p, err := refusedField(f.Type, m[name], join(path, name)); err != nil {
				return p, err
			}
		}
	case reflect.Slice, reflect.Array:
		l, _ := v.([]any)
		for i, e := range l {
			if p, err := refusedField(t.Elem(), e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return p, err
			}
		}
	case reflect.Map:
		m, _ := v.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if p, err := refusedField(t.Elem(), m[k], fmt.Sprintf("%s[%s]", path, k)); err != nil {
				return p, err
			}
		}
	}
	return "", nil
}

// join is path.name, or name at the root.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
