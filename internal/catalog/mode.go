// Package catalog composes the golden DataVolumes of an XWorkerImageCatalog
// and the RBAC that lets tenant VMs clone them.
package catalog

import (
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/required"
)

// Mode is the catalog mode.
type Mode struct{}

// Requirements implements compose.Mode.
func (Mode) Requirements(_ compose.Request) (required.Selectors, error) { return nil, nil }

// Compose implements compose.Mode.
func (Mode) Compose(_ compose.Request) compose.Output { return compose.Output{} }
