// Package yamlenc writes YAML exactly as sigs.k8s.io/yaml.Marshal does,
// without its go-yaml re-parse of the JSON (JSONToYAML), a third of a node
// pool call's allocations (docs/performance.md): numbers are typed as
// go-yaml's resolver would type them instead.
package yamlenc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v2"
	sigsyaml "sigs.k8s.io/yaml"
)

// nel is U+0085 in UTF-8.
var nel = []byte("\u0085")

// Marshal is sigs.k8s.io/yaml.Marshal: obj as JSON, then as YAML.
func Marshal(obj any) ([]byte, error) {
	j, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("error marshaling into JSON: %w", err)
	}
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if !readable(j) {
		// sigs.k8s.io/yaml fails here: go-yaml's reader refuses the JSON.
		return nil, errors.New("yaml: control characters are not allowed")
	}
	if bytes.Contains(j, nel) {
		// A raw NEL (encoding/json does not escape it) is a line break to
		// go-yaml's parser (yaml_private.h is_break), so sigs.k8s.io/yaml
		// folds it, and the white space around it, inside the JSON's
		// double-quoted strings; that rare string takes sigs.k8s.io/yaml's
		// own path rather than a copy of YAML's folding rules.
		return sigsyaml.JSONToYAML(j)
	}
	return yaml.Marshal(typed(v))
}

// readable reports whether go-yaml's reader accepts every character of the
// JSON (go.yaml.in/yaml/v2 readerc.go yaml_parser_update_buffer). After
// encoding/json's escaping, only DEL, the C1 controls but NEL and
// U+FFFE/FFFF can be refused.
func readable(j []byte) bool {
	for _, r := range string(j) {
		switch {
		case r == 0x09, r == 0x0A, r == 0x0D:
		case r >= 0x20 && r <= 0x7E:
		case r == 0x85:
		case r >= 0xA0 && r <= 0xD7FF:
		case r >= 0xE000 && r <= 0xFFFD:
		case r >= 0x10000 && r <= 0x10FFFF:
		default:
			return false
		}
	}
	return true
}

// typed replaces every json.Number with what go-yaml v2 resolves it to
// (resolve.go: ParseInt, ParseUint, ParseFloat in turn).
func typed(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = typed(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = typed(e)
		}
		return x
	case json.Number:
		s := string(x)
		if i, err := strconv.ParseInt(s, 0, 64); err == nil {
			if i == int64(int(i)) {
				return int(i)
			}
			return i
		}
		if u, err := strconv.ParseUint(s, 0, 64); err == nil {
			return u
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
		return s
	}
	return v
}
