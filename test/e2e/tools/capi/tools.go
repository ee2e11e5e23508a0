//go:build tools

// Package tools pins the Cluster API core manager (sigs.k8s.io/cluster-api,
// the module root's main.go), which the e2e suite runs out of cluster. It is
// its own module because cluster-api v1.11.4 pins k8s.io to v0.33 and
// controller-runtime v0.21, which nothing else in the repository should carry.
package tools

import (
	_ "sigs.k8s.io/cluster-api"
)
