package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/input/v1beta1"
)

func TestDecodeInput(t *testing.T) {
	cases := map[string]struct {
		reason  string
		json    string
		want    *v1beta1.Input
		wantErr string
	}{
		"KnownFieldsDecode": {
			reason: "A valid Input decodes into its type.",
			json:   `{"apiVersion":"workerimage.fn.crossplane.io/v1beta1","kind":"Input","mode":"Catalog","image":{"arch":"arm64"}}`,
			want:   &v1beta1.Input{Mode: v1beta1.ModeCatalog, Image: v1beta1.ImageOptions{Arch: "arm64"}},
		},
		"UnknownFieldIsRefused": {
			reason:  "A typo must not silently fall back to a default.",
			json:    `{"apiVersion":"workerimage.fn.crossplane.io/v1beta1","kfnd":"Input"}`,
			wantErr: `cannot read the function Input (workerimage.fn.crossplane.io/v1beta1 Input): unknown field "kfnd"; see package/input for its fields`,
		},
		"WrongTypeNamesTheField": {
			reason:  "A wrong type names the field and both types.",
			json:    `{"image":{"platform":7}}`,
			wantErr: `cannot read the function Input (workerimage.fn.crossplane.io/v1beta1 Input): image.platform is a JSON number, but must be a string; see package/input for its fields`,
		},
		"UnparsableDurationNamesTheField": {
			reason:  "A value its type refuses (a duration that does not parse) is named by its field, which encoding/json leaves out.",
			json:    `{"polling":{"steady":"abc"}}`,
			wantErr: `cannot read the function Input (workerimage.fn.crossplane.io/v1beta1 Input): polling.steady: time: invalid duration "abc"; see package/input for its fields`,
		},
		"ForeignKindIsRefused": {
			reason:  "Another function's input in our step is a Composition mistake.",
			json:    `{"apiVersion":"pt.fn.crossplane.io/v1beta1","kind":"Resources"}`,
			wantErr: `cannot read the function Input: it is a pt.fn.crossplane.io/v1beta1 Resources; set apiVersion workerimage.fn.crossplane.io/v1beta1 and kind Input in the Composition step's input`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for range 20 { // the wording must not vary from call to call
				got, err := DecodeInput(resource.MustStructJSON(tc.json))
				gotErr := ""
				if err != nil {
					gotErr = err.Error()
				}
				if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
					t.Fatalf("%s\n-want error, +got error:\n%s", tc.reason, diff)
				}
				if tc.want != nil {
					tc.want.APIVersion, tc.want.Kind = got.APIVersion, got.Kind
					if diff := cmp.Diff(tc.want, got); diff != "" {
						t.Fatalf("%s\n-want, +got:\n%s", tc.reason, diff)
					}
				}
			}
		})
	}
}
