package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/cozystack/function-worker-image/input/v1beta1"
)

// Input identity.
const (
	InputAPIVersion = "workerimage.fn.crossplane.io/v1beta1"
	InputKind       = "Input"
)

// DecodeInput reads the function Input strictly: an unknown field is an
// error, so a typo never silently falls back to a default. It decodes with
// encoding/json rather than the SDK's request.GetInput because the JSON
// decoder behind the SDK deliberately varies its error wording from run to
// run, and the same request must always get the same response. A missing
// Input means every default.
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
		return nil, fmt.Errorf("cannot read the function Input (%s %s): %s; see package/input for its fields", InputAPIVersion, InputKind, describe(err))
	}
	if (in.APIVersion != "" && in.APIVersion != InputAPIVersion) || (in.Kind != "" && in.Kind != InputKind) {
		return nil, fmt.Errorf("cannot read the function Input: it is a %s %s; set apiVersion %s and kind %s in the Composition step's input", in.APIVersion, in.Kind, InputAPIVersion, InputKind)
	}
	return in, nil
}

// describe turns a decoding error into a message that names the field.
func describe(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "the Input"
		}
		return fmt.Sprintf("%s is a JSON %s, but must be a %s", field, te.Value, te.Type.String())
	}
	// encoding/json reports an unknown field as `json: unknown field "x"`.
	return strings.TrimPrefix(err.Error(), "json: ")
}
