package main

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	apisDir          = "../../apis/v1alpha1"
	configurationDir = "../../package/configuration"
)

// TestCommittedXRDsAreGenerated fails when the XRDs in package/configuration
// are not what the Go types generate: the types changed without make
// generate, or an XRD was edited by hand.
func TestCommittedXRDsAreGenerated(t *testing.T) {
	want, err := Generate(apisDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		got, err := os.ReadFile(filepath.Join(configurationDir, name))
		if err != nil {
			t.Errorf("%v (run make generate)", err)
			continue
		}
		if diff := cmp.Diff(string(want[name]), string(got)); diff != "" {
			t.Errorf("package/configuration/%s is stale; run make generate\n-generated, +committed:\n%s", name, diff)
		}
	}
	committed, err := filepath.Glob(filepath.Join(configurationDir, "xrd-*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range committed {
		if _, ok := want[filepath.Base(f)]; !ok {
			t.Errorf("package/configuration/%s is generated from no type in apis/v1alpha1: remove it or add its kind there", filepath.Base(f))
		}
	}
}

func TestFold(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		want   string
	}{
		"OneLine": {
			reason: "A one-line comment stays as it is.",
			in:     "Name of the golden DataVolume.",
			want:   "Name of the golden DataVolume.",
		},
		"WrappedLines": {
			reason: "The line breaks of a wrapped comment become spaces.",
			in:     "Storage is the default size of a golden, a quantity no smaller than\nthe raw disk image (1246Mi).",
			want:   "Storage is the default size of a golden, a quantity no smaller than the raw disk image (1246Mi).",
		},
		"Paragraphs": {
			reason: "A blank line of the comment (three newlines from controller-gen) still separates paragraphs.",
			in:     "First\nparagraph.\n\n\nSecond\nparagraph.",
			want:   "First paragraph.\n\nSecond paragraph.",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, fold(tc.in)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
