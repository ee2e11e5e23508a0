package pool

// AnnRequest records on each template the request it was rendered for
// (requestOf). A template that carries the pool's current request is kept,
// whatever this release would render in its place.
const AnnRequest = "workerimage.cozystack.io/request"

// AnnRendering records on each template the RenderingRevision that rendered
// it; an adopted template, which another tool made, records 0.
const AnnRendering = "workerimage.cozystack.io/rendering"
