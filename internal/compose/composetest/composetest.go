// Package composetest runs a mode the way RunFunction does (compose.Run),
// for the tests of every mode, with every requirement resolved: prepare the
// request, ask for its requirements (and its chained ones), compose from
// what they resolved to.
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

// Run is one RunFunction call of m (compose.Run) with every requirement
// resolved: r's Required and Raw stand for what Crossplane fetched, for
// every selector the call asks, first and chained, whether or not they name
// it. The fetch is therefore always complete: chained requirements are
// always asked and Compose always runs (unless Requirements fails).
func Run(m compose.Mode, r Request) Result {
	res := compose.Run(m, r.Request, Fetcher(r.Required, r.Raw))
	out := Result{Requirements: res.Requirements, Chained: res.Chained, Err: res.Err, Output: res.Output}
	if res.Err != nil {
		out.Output = compose.Output{Fatal: res.Err}
	}
	return out
}

// Fetcher is a compose.Fetcher that has fetched everything: it returns got
// and raw whatever it is asked, complete.
func Fetcher(got required.Resolved, raw required.Raw) compose.Fetcher {
	return func(required.Selectors, map[string]bool) (required.Resolved, required.Raw, bool, error) {
		return got, raw, true, nil
	}
}
