//go:build tools

// Package tools pins the control-plane binaries the e2e suite runs: etcd,
// kube-apiserver and kube-controller-manager, built from the Go module proxy.
// It is its own module because k8s.io/kubernetes needs replace lines for its
// staging modules that nothing else in the repository should carry.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
