//go:build tools

// Package tools pins golangci-lint, built from the module proxy by
// hack/golangci-lint.sh and cached by version.
package tools

import (
	_ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
)
