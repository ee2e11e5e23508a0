package yamlenc

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	sigsyaml "sigs.k8s.io/yaml"
)

// Every case must come out byte for byte as sigs.k8s.io/yaml writes it.
func TestMarshalIsSigsYAML(t *testing.T) {
	cases := map[string]any{
		"Nested":                         map[string]any{"machine": map[string]any{"kubelet": map[string]any{"extraArgs": map[string]any{"max-pods": "110"}}, "install": map[string]any{"image": "factory.talos.dev/installer/abc:v1.13.6"}}},
		"Numbers":                        map[string]any{"int": 3, "neg": -7, "zero": 0, "float": 1.5, "big": int64(math.MaxInt64), "huge": uint64(math.MaxUint64), "exp": 1e21, "small": 1e-7, "whole": 2.0},
		"StringsThatLookLikeOtherThings": map[string]any{"a": "true", "b": "1", "c": "1.0", "d": "null", "e": "yes", "f": "~", "g": "0x1F", "h": "", "i": "- x", "j": "a: b", "k": "#c", "l": "<>&", "m": "multi\nline\n", "n": "ünï", "o": " lead"},
		"ListsAndNulls":                  map[string]any{"l": []any{1, "two", nil, true, map[string]any{"k": []any{}}}, "empty": map[string]any{}, "nil": nil},
		"Struct": struct {
			A string `json:"a"`
			B []int  `json:"b,omitempty"`
			C *int   `json:"c"`
		}{A: "x", B: []int{1, 2}},
		"KeysSortedAsGoYAML": map[string]any{"b10": 1, "b9": 2, "B": 3, "a": 4, "1": 5, "10": 6, "2": 7},
	}
	for name, obj := range cases {
		t.Run(name, func(t *testing.T) {
			want, werr := sigsyaml.Marshal(obj)
			got, gerr := Marshal(obj)
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("errors differ: sigs %v, yamlenc %v", werr, gerr)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("-sigs.k8s.io/yaml, +yamlenc:\n%s", diff)
			}
		})
	}
}

// FuzzMarshalIsSigsYAML: for any JSON document, the two agree byte for byte.
func FuzzMarshalIsSigsYAML(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[1.5,"x",null,true],"c":{"d":"1e3"}}`, `[1e21,-0,0.1,18446744073709551615,9223372036854775808]`, `"yes"`, `{"":{"\u003c":"\n"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var obj any
		if json.Unmarshal(data, &obj) != nil {
			return
		}
		want, werr := sigsyaml.Marshal(obj)
		got, gerr := Marshal(obj)
		if werr != nil || gerr != nil {
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("errors differ on %s: sigs %v, yamlenc %v", data, werr, gerr)
			}
			return
		}
		if string(want) != string(got) {
			t.Errorf("on %s:\n-sigs.k8s.io/yaml\n%s\n+yamlenc\n%s", data, want, got)
		}
	})
}
