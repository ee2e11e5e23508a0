//go:build tools

// Package tools pins the Cluster API provider for KubeVirt (CAPK,
// sigs.k8s.io/cluster-api-provider-kubevirt, the module root's main.go),
// which the e2e suite runs out of cluster. It is its own module because
// CAPK v0.11.2 pins controller-runtime v0.22 and k8s.io v0.34, which
// nothing else in the repository should carry.
package tools

import (
	_ "sigs.k8s.io/cluster-api-provider-kubevirt"
)
