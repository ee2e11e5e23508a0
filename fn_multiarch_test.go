package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// TestOnlyAPoolOfAnotherArchitectureReadsKubeVirt: the KubeVirt CRs are asked
// for by a pool whose VM names its architecture (one of another architecture
// than the Input's), cluster-wide, and by no other pool; a held pool composes
// nothing and says why once, as a Warning (internal/nodepool/multiarch.go).
func TestOnlyAPoolOfAnotherArchitectureReadsKubeVirt(t *testing.T) {
	kubeVirt := &fnv1.ResourceSelector{
		ApiVersion: "kubevirt.io/v1",
		Kind:       "KubeVirt",
		Match:      &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{}}},
	}
	const held = `Node pool "tenant-demo/demo-md0": spec.architecture is "arm64", which its worker VMs carry as spec.template.spec.architecture, but the KubeVirt CR kubevirt/kubevirt has the MultiArchitecture feature gate off and its control plane is amd64 (status.defaultArchitecture), and KubeVirt refuses a VM of another architecture than its control plane's without that gate; so the new worker template is held back and the pool's existing resources are kept as they are. Enable the MultiArchitecture feature gate in the KubeVirt CR's spec.configuration.developerConfiguration.featureGates, or use a pool of the control plane's architecture (spec.architecture amd64, or unset when it is the Input's image.arch).`
	cases := map[string]struct {
		reason   string
		selector *fnv1.ResourceSelector
		// warnings are the Warning results; composed whether anything is.
		warnings []*fnv1.Result
		composed bool
	}{
		"nodepool/builtin-golden-succeeded": {
			reason:   "A pool of the Input's architecture reads nothing more.",
			composed: true,
		},
		"nodepool/arm64-pool-clones-arm64-golden": {
			reason:   "An arm64 pool asks for the KubeVirt CRs; with none there, it is composed as before the gate.",
			selector: kubeVirt, composed: true,
		},
		"nodepool/arm64-pool-multiarchitecture-on": {
			reason:   "With the gate on the arm64 pool is composed.",
			selector: kubeVirt, composed: true,
		},
		"nodepool/arm64-pool-held-multiarchitecture-off": {
			reason:   "With the gate off on an amd64 control plane the new pool composes nothing and warns once with the fix.",
			selector: kubeVirt,
			warnings: []*fnv1.Result{{Severity: fnv1.Severity_SEVERITY_WARNING, Reason: ptrTo("ArchitectureNotAdmitted"), Message: held, Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum()}},
		},
	}
	f := newTestFunction()
	seen := 0
	for _, sc := range loadExampleScenarios(t) {
		tc, ok := cases[sc.Name]
		if !ok {
			continue
		}
		seen++
		t.Run(sc.Name, func(t *testing.T) {
			_, rsp := settleRequest(t, f, sc.firstRequest(), sc.Pool)
			if diff := cmp.Diff(tc.selector, rsp.GetRequirements().GetResources()["kubevirt"], protocmp.Transform()); diff != "" {
				t.Errorf("%s: KubeVirt selector\n-want, +got:\n%s", tc.reason, diff)
			}
			var warnings []*fnv1.Result
			for _, r := range rsp.GetResults() {
				if r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING {
					warnings = append(warnings, r)
				}
			}
			if diff := cmp.Diff(tc.warnings, warnings, protocmp.Transform()); diff != "" {
				t.Errorf("%s: warnings\n-want, +got:\n%s", tc.reason, diff)
			}
			if got := len(rsp.GetDesired().GetResources()) > 0; got != tc.composed {
				t.Errorf("%s: composed anything = %t, want %t", tc.reason, got, tc.composed)
			}
		})
	}
	if seen != len(cases) {
		t.Fatalf("found %d of the %d scenarios", seen, len(cases))
	}
}

func ptrTo[T any](v T) *T { return &v }
