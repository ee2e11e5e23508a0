// Package composetest runs a mode the way RunFunction does, for the tests of
// every mode: prepare the request, ask for its requirements (and its chained
// ones), compose from what they resolved to.
package composetest

import (
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/required"
)

// Request is a mode's request with what Crossplane fetched for it: Required
// for the selectors it reads as objects, Raw for those it reads from the
// wire (compose.Call.Raw).
type Request struct {
	compose.Request
	Required required.Resolved
	Raw      required.Raw
}

// Result is what one call of a mode asked for and decided.
type Result struct {
	// Requirements is what the call asked for first; Chained what it asked
	// for besides once those were resolved (compose.Chained).
	Requirements, Chained required.Selectors
	// Err is the fatal error of Requirements: the composite cannot be read.
	Err error
	// Output is what Compose decided or, when Requirements failed, that
	// failure, as RunFunction reports it.
	Output compose.Output
}

// Run is one RunFunction call of m with every requirement resolved: r's
// Required and Raw stand for what Crossplane fetched.
func Run(m compose.Mode, r Request) Result {
	call := m.Prepare(r.Request)
	var res Result
	if res.Requirements, res.Err = call.Requirements(); res.Err != nil {
		res.Output = compose.Output{Fatal: res.Err}
		return res
	}
	if ch, ok := call.(compose.Chained); ok {
		res.Chained = ch.ChainedRequirements(r.Required)
	}
	res.Output = call.Compose(r.Required, r.Raw)
	return res
}
