package compose

import (
	"maps"

	"github.com/cozystack/function-worker-image/internal/required"
)

// Fetcher resolves selectors to what Crossplane fetched for them: the
// objects of every selector not in raw, the protobuf Structs of those in
// raw (Call.Raw), and complete false while any selector is unanswered.
// RunFunction's reads the request (required.Fetch); a test's returns fixed
// objects (composetest). An error is fatal.
type Fetcher func(sel required.Selectors, raw map[string]bool) (required.Resolved, required.Raw, bool, error)

// RunResult is what one call of a mode asked for and decided.
type RunResult struct {
	// Requirements is what the call asked for first; Chained what
	// ChainedRequirements (compose.Chained) asked for besides, once every
	// one of Requirements was fetched: nil unless it was asked.
	Requirements, Chained required.Selectors
	// Selectors is every requirement the response carries: Requirements
	// and, when Chained is not empty, Chained over them (a new map; neither
	// is changed). Nil when Requirements failed.
	Selectors required.Selectors
	// Composed is true when Compose ran: every selector was fetched. When
	// false and Err is nil, the call returns its requirements only.
	Composed bool
	// Output is what Compose decided; zero unless Composed.
	Output Output
	// Err is fatal: Requirements failed (the composite cannot be read) or
	// fetching failed. Nothing was composed.
	Err error
}

// Run is one RunFunction call of m: ask for m's requirements, fetch them,
// ask for its chained requirements only once everything is fetched (they
// are named by fetched objects), fetch again, and compose only when
// everything asked for was fetched; deciding before Crossplane fetches
// would act on nothing.
func Run(m Mode, r Request, fetch Fetcher) RunResult {
	call := m.Prepare(r)
	var res RunResult
	if res.Requirements, res.Err = call.Requirements(); res.Err != nil {
		return res
	}
	res.Selectors = res.Requirements
	got, raw, complete, err := fetch(res.Selectors, call.Raw())
	if err != nil {
		res.Err = err
		return res
	}
	if ch, ok := call.(Chained); ok && complete {
		res.Chained = ch.ChainedRequirements(got)
		if len(res.Chained) > 0 {
			res.Selectors = maps.Clone(res.Requirements)
			if res.Selectors == nil {
				res.Selectors = required.Selectors{}
			}
			maps.Copy(res.Selectors, res.Chained)
			if got, raw, complete, err = fetch(res.Selectors, call.Raw()); err != nil {
				res.Err = err
				return res
			}
		}
	}
	if !complete {
		return res
	}
	res.Output, res.Composed = call.Compose(got, raw), true
	return res
}
