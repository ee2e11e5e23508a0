package schema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
)

const platformDoc = "docs/platform.md"

// TestPlatformDocIsUpToDate checks that the field reference in
// docs/platform.md is what Reference generates from the shipped XRDs.
func TestPlatformDocIsUpToDate(t *testing.T) {
	var xrds []XRD
	for _, kind := range []string{v1alpha1.KindWorkerImageCatalog, v1alpha1.KindTenantCluster, v1alpha1.KindNodePool} {
		xrds = append(xrds, xrdByKind(t, configurationDir, kind))
	}
	want := ReferenceBegin + "\n\n" + Reference(xrds) + ReferenceEnd

	path := filepath.Join(root, platformDoc)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	begin, end := strings.Index(doc, ReferenceBegin), strings.Index(doc, ReferenceEnd)
	if begin < 0 || end < begin {
		t.Fatalf("%s lacks the markers %q and %q around the field reference", platformDoc, ReferenceBegin, ReferenceEnd)
	}
	got := doc[begin : end+len(ReferenceEnd)]
	if *update {
		if err := os.WriteFile(path, []byte(doc[:begin]+want+doc[end+len(ReferenceEnd):]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the field reference in %s is stale; run go test ./test/schema -update\n-want, +got:\n%s", platformDoc, diff)
	}
}
