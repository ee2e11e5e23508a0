package read

import (
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
)

// keptFor is the running template under n when it records request: the
// pool asked for nothing new, so it stays as it is whatever this release
// would render, and nothing is rendered in its place (a release that
// renders differently rolls no pool; templateRevision takes it on purpose).
// A template without a record (rendered before records were written) is
// replaced only when this release renders it differently, as every release
// did before.
func (cs ComposedState) KeptFor(n resource.Name, request string) *composed.Unstructured {
	u, ok := cs.Resources[n]
	if !ok || u.GetAnnotations()[pool.AnnRequest] != request {
		return nil
	}
	return compose.AsObserved(u)
}

// unrecorded is the running template under n when it records no request:
// an earlier release made it before requests were recorded.
func (cs ComposedState) Unrecorded(n resource.Name) *composed.Unstructured {
	u, ok := cs.Resources[n]
	if !ok || u.GetAnnotations()[pool.AnnRequest] != "" {
		return nil
	}
	return u
}
