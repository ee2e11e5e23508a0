package compose

import (
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composite"

	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/required"
)

// Request is what a mode decides from: the validated Input, the observed
// composite and the observed composed resources. What Crossplane fetched
// for the mode's requirements reaches Call.Compose instead, once every
// selector is resolved.
type Request struct {
	Config    config.Config
	Composite *composite.Unstructured
	Observed  map[resource.Name]resource.ObservedComposed
}

// Mode composes one kind of composite. Prepare decodes the request once per
// RunFunction call; the Call it returns asks for the requirements and then
// composes from what they resolved to.
type Mode interface {
	Prepare(r Request) Call
}

// Call is one call of a mode with the composite decoded and resolved once.
type Call interface {
	// Requirements returns the required-resource selectors. It must be a
	// pure function of the composite's spec and the observed composed
	// resources, so that every call of one reconcile asks for the same
	// thing. An error means the composite cannot be read at all and is
	// fatal.
	Requirements() (required.Selectors, error)
	// Raw names the selectors whose objects this call reads straight from
	// the request's protobuf Structs; they reach Compose in raw.
	Raw() map[string]bool
	// Compose decides everything else, with got and raw as the resolved
	// requirements.
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
