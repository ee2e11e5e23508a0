package decode

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
)

// FuzzInto feeds the decoder arbitrary JSON specs for every composite type.
// It must never panic, decide the same way twice, report only valid UTF-8,
// and never report an internal error for user input.
func FuzzInto(f *testing.F) {
	for _, seed := range []string{
		`{"nodePools":{"gpu":{"replicas":3,"osImage":{"builtin":null}}}}`,
		`{"nodePools":{"gpu":{"replicas":"three"}},"version":1.35}`,
		`{"images":[{"schematicID":"abc","version":"v1.13.6"},{"storage":6}]}`,
		`{"replicas":4294967297,"talos":{"registryMirrors":{"docker.io":{"endpoints":[1]}}}}`,
		`{"resources":"big","osImage":[]}`,
		`"x"`, `[]`, `null`, `{"nodePools":{"\u00e9":{"diskSize":{"a":"\u2028"}}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var raw any
		if json.Unmarshal(b, &raw) != nil {
			return
		}
		for _, target := range []func() any{
			func() any { return &v1alpha1.TenantClusterSpec{} },
			func() any { return &v1alpha1.NodePoolSpec{} },
			func() any { return &v1alpha1.WorkerImageCatalogSpec{} },
		} {
			first, again := target(), target()
			errsA := Into(raw, field.NewPath("spec"), first)
			errsB := Into(raw, field.NewPath("spec"), again)
			if diff := cmp.Diff(messages(errsA), messages(errsB)); diff != "" {
				t.Fatalf("two decodes of %s disagree:\n%s", b, diff)
			}
			if diff := cmp.Diff(first, again); diff != "" {
				t.Fatalf("two decodes of %s disagree:\n%s", b, diff)
			}
			for _, e := range errsA {
				if e.Type == field.ErrorTypeInternal {
					t.Fatalf("user input %s gave an internal error: %v", b, e)
				}
				if !utf8.ValidString(e.Error()) {
					t.Fatalf("error is not valid UTF-8: %q", e.Error())
				}
			}
		}
	})
}

func messages(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}
