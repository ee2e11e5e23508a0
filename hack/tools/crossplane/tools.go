//go:build tools

// Package tools pins the crossplane CLI (render, xpkg build), which the
// Crossplane project ships in its own module since v2.5. Its render runs the
// pipeline through a local Crossplane core binary (--crossplane-binary,
// hack/crossplane-core.sh) instead of Docker. It lives in its own module
// because the CLI and function-sdk-go need different crossplane-runtime
// versions.
package tools

import (
	_ "github.com/crossplane/cli/v2/cmd/crossplane"
)
