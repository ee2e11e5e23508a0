//go:build tools

// Package tools pins CDI (Containerized Data Importer), whose controller and
// API server the e2e suite runs out of cluster, built from the Go module
// proxy. It is its own module because CDI v1.65.0 replaces its staging API
// module and pins k8s.io to v0.31.5, which nothing else in the repository
// should carry.
package tools

import (
	_ "kubevirt.io/containerized-data-importer/cmd/cdi-apiserver"
	_ "kubevirt.io/containerized-data-importer/cmd/cdi-controller"
)
