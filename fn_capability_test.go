package main

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/cozystack/function-worker-image/internal/capability"
)

// TestCapabilitiesCrossplaneAdvertises: every example scenario, called as
// Crossplane v2.2 to v2.4 calls it (with the five capabilities they
// advertise, xfn.SupportedCapabilities), answers exactly as it does without
// them; without CAPABILITY_REQUIRED_RESOURCES it is refused with one fatal
// result (the pipeline stops, nothing is applied); without CAPABILITY_CONDITIONS it still
// composes, with a warning first.
func TestCapabilitiesCrossplaneAdvertises(t *testing.T) {
	all := capability.Advertised
	with := func(req *fnv1.RunFunctionRequest, caps ...fnv1.Capability) *fnv1.RunFunctionRequest {
		out := proto.CloneOf(req)
		out.Meta = &fnv1.RequestMeta{Tag: req.GetMeta().GetTag(), Capabilities: caps}
		return out
	}
	run := func(t *testing.T, req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
		t.Helper()
		rsp, err := newTestFunction().RunFunction(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return rsp
	}
	for _, sc := range loadExampleScenarios(t) {
		t.Run(sc.Name, func(t *testing.T) {
			req, _ := settleRequest(t, newTestFunction(), sc.firstRequest(), sc.Pool)
			base := run(t, req)
			if diff := cmp.Diff(base, run(t, with(req, all...)), protocmp.Transform()); diff != "" {
				t.Errorf("the capabilities Crossplane v2.2-v2.4 advertise change the answer (-without, +with):\n%s", diff)
			}
			refused := run(t, with(req, fnv1.Capability_CAPABILITY_CAPABILITIES, fnv1.Capability_CAPABILITY_CONDITIONS))
			// A fatal result stops the pipeline: Crossplane applies
			// nothing of this reconcile, so every composed resource stays.
			if msg := fatalMessage(refused); !strings.Contains(msg, "CAPABILITY_REQUIRED_RESOURCES") || len(refused.GetResults()) != 1 || refused.GetRequirements() != nil {
				t.Errorf("without required resources: results %v, requirements %v; want one fatal naming CAPABILITY_REQUIRED_RESOURCES and nothing asked", refused.GetResults(), refused.GetRequirements())
			}
			noConditions := run(t, with(req, fnv1.Capability_CAPABILITY_CAPABILITIES, fnv1.Capability_CAPABILITY_REQUIRED_RESOURCES))
			if r := noConditions.GetResults(); len(r) == 0 || r[0].GetSeverity() != fnv1.Severity_SEVERITY_WARNING || !strings.Contains(r[0].GetMessage(), "CAPABILITY_CONDITIONS") {
				t.Errorf("without conditions: first result %v, want a warning naming CAPABILITY_CONDITIONS", r)
			}
			if diff := cmp.Diff(base.GetDesired(), noConditions.GetDesired(), protocmp.Transform()); diff != "" {
				t.Errorf("without conditions the function must compose as it does with them (-with, +without):\n%s", diff)
			}
		})
	}
}
