//go:build tools

// Package tools pins Crossplane core v2.4.2, which the e2e suite runs out of
// cluster (test/e2e/hack/build-binaries.sh, CROSSPLANE_VERSION=v2.4.2). Each
// supported core version is its own module: they need different
// crossplane-runtime versions, and none of them the function's own.
package tools

import (
	_ "github.com/crossplane/crossplane/v2/cmd/crossplane"
)

// Core v2.4.2 requires crossplane-runtime/v2 v2.4.2, which the Go module
// proxy this project builds from refuses (403 "This module version is not
// available", for v2.4.1 too, 2026-12-02), so go.mod replaces it with
// v2.4.0, the newest it serves. The crossplane-runtime snapshot read here
// has no commit on release-2.4 after the v2.4.0 tag (71f3197, 2026-08-19),
// so what v2.4.1 and v2.4.2 changed could not be read; the suite proves
// the resulting core, not the release's binary.
