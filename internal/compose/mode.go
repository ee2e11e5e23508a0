package compose

import (
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composite"

	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/required"
)

// Request is what a mode decides from: the validated Input, the observed
// composite, the observed composed resources and the required resources.
type Request struct {
	Config    config.Config
	Composite *composite.Unstructured
	Observed  map[resource.Name]resource.ObservedComposed
	// Required is nil while Requirements is being asked; Compose is only
	// called once every selector has been resolved. RequiredRaw holds the
	// selectors a Call reads from the wire (Call.Raw).
	Required    required.Resolved
	RequiredRaw required.Raw
}

// Mode composes one kind of composite.
type Mode interface {
	// Requirements returns the required-resource selectors for r. It must be a
	// pure function of the composite's spec and the observed composed
	// resources, so that every call of one reconcile asks for the same thing.
	// An error means the composite cannot be read at all and is fatal.
	Requirements(r Request) (required.Selectors, error)

	// Compose decides everything else.
	Compose(r Request) Output
}

// Call is one call of a mode with the composite decoded and resolved once:
// Requirements and Compose of one RunFunction call share it.
type Call interface {
	// Requirements is Mode.Requirements of the call's request.
	Requirements() (required.Selectors, error)
	// Raw names the selectors whose objects this call reads straight from
	// the request's protobuf Structs; they reach Compose in raw.
	Raw() map[string]bool
	// Compose is Mode.Compose of the call's request with got and raw as
	// its resolved requirements.
	Compose(got required.Resolved, raw required.Raw) Output
}

// Chained is a Call some of whose requirements are named by the objects
// others return, so they cannot be known before those arrive (the PV a
// required PVC is bound to, by its spec.volumeName). Once every selector
// of Requirements is resolved, ChainedRequirements(got) returns what to ask
// for besides; they are answered on the next call, which Crossplane makes
// because the requirements changed. It must be a pure function of got
// (and of what Requirements decides from), so that the calls after it ask
// for the same. A chained requirement costs one call more per reconcile
// only when it is asked for.
type Chained interface {
	ChainedRequirements(got required.Resolved) required.Selectors
}

// Preparer is a Mode that decodes its composite once per call. Without it,
// Requirements and Compose each decode the request.
type Preparer interface {
	Prepare(r Request) Call
}
