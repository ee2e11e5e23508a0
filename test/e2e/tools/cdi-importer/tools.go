//go:build tools

// Package tools pins CDI's importer (cmd/cdi-importer), cloner
// (cmd/cdi-cloner) and upload server (cmd/cdi-uploadserver), which the e2e
// suite runs as the stand-ins for CDI's importer pods and the source and
// target pods of a host-assisted clone (harness/importer.go).
// It is its own module, apart from tools/cdi, because the importer needs
// cgo and the libnbd Go bindings, which the module proxy does not serve:
// hack/build-binaries.sh puts the bindings of the machine's libnbd (its
// Debian source package) in ./libnbd, which go.mod's replace names.
package tools

import (
	_ "kubevirt.io/containerized-data-importer/cmd/cdi-cloner"
	_ "kubevirt.io/containerized-data-importer/cmd/cdi-importer"
	_ "kubevirt.io/containerized-data-importer/cmd/cdi-uploadserver"
)
