//go:build tools

// Package tools pins the CSI snapshot controller, the common controller of
// kubernetes-csi/external-snapshotter (cmd/snapshot-controller), which the
// e2e suite runs out of cluster. It is its own module because
// external-snapshotter v8.4.0 pins k8s.io to v0.34 and its own client
// module, which nothing else in the repository should carry.
package tools

import (
	_ "github.com/kubernetes-csi/external-snapshotter/v8/cmd/snapshot-controller"
)
