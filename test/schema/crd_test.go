package schema

import (
	"testing"
)

const root = "../.."

// Package directories the tests read.
const (
	configurationDir = "package/configuration"
	legacyDir        = "package/configuration/legacy"
)

func mustXRDs(t *testing.T, dir string) []XRD {
	t.Helper()
	xrds, err := LoadXRDs(root, dir)
	if err != nil {
		t.Fatalf("cannot load the XRDs of %s: %v", dir, err)
	}
	if len(xrds) == 0 {
		t.Fatalf("%s holds no XRDs", dir)
	}
	return xrds
}

// TestXRDsGenerateValidCRDs runs the API server's CRD validation on the CRDs
// Crossplane generates from every shipped XRD: a structural schema, pruned
// defaults that pass their own schema, rules that compile, and a CEL cost
// within the API server's static budget.
func TestXRDsGenerateValidCRDs(t *testing.T) {
	for _, dir := range []string{configurationDir, legacyDir} {
		for _, x := range mustXRDs(t, dir) {
			t.Run(x.File, func(t *testing.T) {
				if errs := ValidateCRD(CompositeCRD(x)); len(errs) > 0 {
					t.Errorf("%s: the composite CRD Crossplane generates is invalid:\n%v", x.File, errs.ToAggregate())
				}
				if x.Spec.ClaimNames == nil {
					return
				}
				crd, err := ClaimCRD(x)
				if err != nil {
					t.Fatalf("%s: %v", x.File, err)
				}
				if errs := ValidateCRD(crd); len(errs) > 0 {
					t.Errorf("%s: the claim CRD Crossplane generates is invalid:\n%v", x.File, errs.ToAggregate())
				}
			})
		}
	}
}
