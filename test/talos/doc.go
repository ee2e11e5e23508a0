// Package talos proves what internal/talosconfig renders (the strategic
// patches, the node patch, the Join worker's base config) with Talos's own
// code: the function mirrors the few CABPT fields it writes instead of
// importing Talos' machinery, so this separate module, and only it, depends
// on github.com/siderolabs/talos/pkg/machinery, pinned in go.mod.
//
// The module proxy serves the machinery only at exact versions (its version
// list answers 403); v1.13.9 is the pin. v1.13.10 is not served, and v1.14.0
// resolves to the root Talos module without the machinery package. To move
// the pin: go get github.com/siderolabs/talos/pkg/machinery@vX.Y.Z && go mod
// tidy in this directory.
package talos
