//go:build tools

// Package tools pins Crossplane core, which the e2e suite runs out of cluster.
// It is its own module because crossplane/v2 v2.2.0 and function-sdk-go v0.7.1
// need different crossplane-runtime versions.
package tools

import (
	_ "github.com/crossplane/crossplane/v2/cmd/crossplane"
)
