package schema

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The legacy variant (package/configuration/legacy) serves platforms whose
// tenants still use claims. It cannot be installed beside the modern
// Configuration: both define xtenantclusters and xnodepools in the same group.
// Everything in it but its crossplane.yaml is derived from the modern files,
// so the two never drift:
//   - XTenantCluster and XNodePool become apiextensions.crossplane.io/v1 XRDs
//     with scope LegacyCluster and claims TenantCluster and NodePool; their
//     schemas are byte-for-byte the modern ones;
//   - the catalog XRD (already cluster-scoped, no claim) and the three
//     Compositions (same composite types) are copies.

// LegacyClaims maps the kind of each XRD that gets a claim to its claim kind.
var LegacyClaims = map[string]string{
	"XTenantCluster": "TenantCluster",
	"XNodePool":      "NodePool",
}

const legacyNote = "# Generated from ../%s by `go test ./test/schema -update`: edit the\n# source, not this file.\n"

// LegacyFiles returns the derived files of the legacy variant, keyed by path
// relative to the repository root.
func LegacyFiles(root string) (map[string][]byte, error) {
	files, err := YAMLFiles(root, configurationDir, false)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, f := range files {
		base := filepath.Base(f)
		if base == "crossplane.yaml" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return nil, err
		}
		body, kind := stripLeadingComments(string(data))
		note := fmt.Sprintf(legacyNote, base)
		claim, ok := LegacyClaims[kind]
		if !ok {
			out[legacyDir+"/"+base] = []byte(note + body)
			continue
		}
		legacy, err := legacyXRD(body, kind, claim)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		header := fmt.Sprintf("# Legacy variant of %s for platforms still on claims: a Crossplane v1\n"+
			"# XRD, scope LegacyCluster, offering the namespaced claim %s.\n", kind, claim)
		out[legacyDir+"/"+base] = []byte(header + note + legacy)
	}
	return out, nil
}

// stripLeadingComments drops the comment block that opens a file and returns
// the rest, and the kind the document defines (names.kind of an XRD).
func stripLeadingComments(s string) (string, string) {
	lines := strings.SplitAfter(s, "\n")
	i := 0
	for i < len(lines) && strings.HasPrefix(lines[i], "#") {
		i++
	}
	body := strings.Join(lines[i:], "")
	kind := ""
	if j := strings.Index(body, "\n    kind: "); j >= 0 && strings.Contains(body, "kind: CompositeResourceDefinition") {
		rest := body[j+len("\n    kind: "):]
		kind = rest[:strings.IndexByte(rest, '\n')]
	}
	return body, kind
}

func legacyXRD(body, kind, claim string) (string, error) {
	replace := []struct{ old, new string }{
		{"apiVersion: apiextensions.crossplane.io/v2\n", "apiVersion: apiextensions.crossplane.io/v1\n"},
		{"\n  scope: Namespaced\n", fmt.Sprintf("\n  scope: LegacyCluster\n  claimNames:\n    kind: %s\n    plural: %ss\n    singular: %s\n    categories:\n    - workerimage\n",
			claim, strings.ToLower(claim), strings.ToLower(claim))},
	}
	for _, r := range replace {
		if strings.Count(body, r.old) != 1 {
			return "", fmt.Errorf("%s: expected exactly one %q to rewrite", kind, strings.TrimSpace(r.old))
		}
		body = strings.Replace(body, r.old, r.new, 1)
	}
	return body, nil
}
