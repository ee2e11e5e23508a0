// Package capability reads what the calling Crossplane says it supports
// (RunFunctionRequest.meta.capabilities, proto/v1/run_function.proto in
// function-sdk-go v0.7.1), so that the function refuses clearly where it
// cannot work instead of acting on a request Crossplane will not complete.
package capability

import (
	"errors"
	"slices"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// Advertised is what every Crossplane core the function supports sends, v2.2.0
// to v2.4.2 (internal/xfn/capabilities.go SupportedCapabilities, which
// crossplane render's core sends too).
var Advertised = []fnv1.Capability{
	fnv1.Capability_CAPABILITY_CAPABILITIES, fnv1.Capability_CAPABILITY_REQUIRED_RESOURCES,
	fnv1.Capability_CAPABILITY_CREDENTIALS, fnv1.Capability_CAPABILITY_CONDITIONS, fnv1.Capability_CAPABILITY_REQUIRED_SCHEMAS,
}

// Verdict is what the function makes of the capabilities a request carries.
type Verdict struct {
	// Fatal is set when the function cannot work with this Crossplane.
	Fatal error
	// Warning is set when it works, but the user will not see everything
	// it reports.
	Warning string
}

// Check judges the capabilities in meta. Crossplane advertises them from
// v2.2 on, starting with CAPABILITY_CAPABILITIES; without it nothing can be
// told (an older Crossplane, which the function does not support, or a
// caller such as a test that sends none), so nothing is refused.
//
// Every mode reads the cluster through required resources (all of
// Crossplane's v2.2 to v2.4 cores support them): without
// CAPABILITY_REQUIRED_RESOURCES the gates would decide on nothing, so the
// call is refused. Without CAPABILITY_CONDITIONS the composite's conditions
// (WorkerImageReady, the holds) never reach it; the function still
// composes, and says so.
func Check(meta *fnv1.RequestMeta) Verdict {
	caps := meta.GetCapabilities()
	if !slices.Contains(caps, fnv1.Capability_CAPABILITY_CAPABILITIES) {
		return Verdict{}
	}
	if !slices.Contains(caps, fnv1.Capability_CAPABILITY_REQUIRED_RESOURCES) {
		return Verdict{Fatal: errors.New("this Crossplane does not fetch the resources a function requires (its request advertises no CAPABILITY_REQUIRED_RESOURCES), and function-worker-image decides every golden, gate and pool from them; run it on a Crossplane core from v2.2.0 to v2.4.2")}
	}
	if !slices.Contains(caps, fnv1.Capability_CAPABILITY_CONDITIONS) {
		return Verdict{Warning: "this Crossplane does not apply the conditions a function returns (its request advertises no CAPABILITY_CONDITIONS): the composite's WorkerImageReady, RenderingCurrent and hold conditions will not show; read its status fields and events instead, or run a Crossplane core from v2.2.0 to v2.4.2"}
	}
	return Verdict{}
}
