//go:build tools

// Package tools pins the crossplane CLI used by the render harness. It lives in
// its own module because crossplane/v2 v2.2.0 and function-sdk-go v0.7.1 need
// different crossplane-runtime versions.
package tools

import (
	_ "github.com/crossplane/crossplane/v2/cmd/crank"
)
