//go:build tools

// Package tools pins the Cluster API bootstrap provider for Talos (CABPT,
// github.com/siderolabs/cluster-api-bootstrap-provider-talos, the module
// root's main.go), which the e2e suite runs out of cluster. It is its own
// module because CABPT v0.6.12 pins cluster-api v1.10, controller-runtime
// v0.20 and k8s.io v0.32, which nothing else in the repository should
// carry; go.mod repeats the module's own replace of cel-go, which Go
// ignores in a dependency.
package tools

import (
	_ "github.com/siderolabs/cluster-api-bootstrap-provider-talos"
)
