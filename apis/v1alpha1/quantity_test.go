package v1alpha1

import (
	"encoding/json"
	"testing"
)

// TestQuantityReadsIntegersAndStrings: a quantity is int-or-string in the
// schema, and reads as written: an integer as its digits.
func TestQuantityReadsIntegersAndStrings(t *testing.T) {
	cases := map[string]struct {
		json    string
		want    Quantity
		wantErr bool
	}{
		"String":       {json: `"1500m"`, want: "1500m"},
		"Integer":      {json: `4`, want: "4"},
		"LargeInteger": {json: `17179869184`, want: "17179869184"},
		"Exponent":     {json: `1e1`, want: "1e1"},
		"Bool":         {json: `true`, wantErr: true},
		"Object":       {json: `{"size": "4Gi"}`, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var q Quantity
			err := json.Unmarshal([]byte(tc.json), &q)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Unmarshal(%s) error %v, want error %t", tc.json, err, tc.wantErr)
			}
			if q != tc.want {
				t.Errorf("Unmarshal(%s) = %q, want %q", tc.json, q, tc.want)
			}
			if err != nil {
				return
			}
			// It is written back as a string, which the schema takes too.
			b, _ := json.Marshal(q)
			if want, _ := json.Marshal(string(tc.want)); string(b) != string(want) {
				t.Errorf("Marshal = %s, want %s", b, want)
			}
		})
	}
}
