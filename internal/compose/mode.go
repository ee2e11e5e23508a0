package compose

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composite"

	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/required"
)

// Request is what a mode decides from; required resources reach
// Call.Compose instead, once every selector is resolved.
type Request struct {
	Config    config.Config
	Composite *composite.Unstructured
	Observed  map[resource.Name]resource.ObservedComposed
	// Now is when the call runs, read once from the Function's clock
	// (fn.go, WithClock) and whole seconds, as a status records it: what a
	// mode decides from time (a clone claim CDI left behind,
	// clonebudget.CountClaims; when an import or clone last moved,
	// internal/stall) is then a function of the request, and tests fix it.
	// The zero time bounds nothing and finds nothing stalled.
	Now time.Time
	// Peek is what the request already carries under a requirement's
	// name (required.Peek); nil reads nothing. Only a choice that picks
	// among objects asked for by name reads it (nodepool goldenchoice.go).
	Peek func(name string) []*unstructured.Unstructured
}

// Mode composes one kind of composite; Prepare decodes the request once per
// RunFunction call.
type Mode interface {
	Prepare(r Request) Call
}

// Call is one call of a mode with the composite decoded and resolved once.
type Call interface {
	// Requirements returns the required-resource selectors, a pure function
	// of the spec and observed resources so every call of a reconcile asks
	// the same. An error is fatal.
	Requirements() (required.Selectors, error)
	// Raw names the selectors whose objects this call reads straight from
	// the request's protobuf Structs; they reach Compose in raw.
	Raw() map[string]bool
	// Compose decides everything else from the resolved requirements.
	Compose(got required.Resolved, raw required.Raw) Output
}

// Chained is a Call some of whose requirements are named by objects others
// return (the PV a required PVC is bound to). ChainedRequirements(got), a
// pure function of got, is asked once Requirements resolved; Crossplane
// answers it on the next call because the requirements changed.
type Chained interface {
	ChainedRequirements(got required.Resolved) required.Selectors
}
