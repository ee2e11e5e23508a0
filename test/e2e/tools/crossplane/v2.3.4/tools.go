//go:build tools

// Package tools pins Crossplane core v2.3.4, which the e2e suite runs out of
// cluster (test/e2e/hack/build-binaries.sh, CROSSPLANE_VERSION=v2.3.4). Each
// supported core version is its own module: they need different
// crossplane-runtime versions, and none of them the function's own.
package tools

import (
	_ "github.com/crossplane/crossplane/v2/cmd/crossplane"
)
