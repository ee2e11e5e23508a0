package render

import (
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// bootstrapSpec turns a Generate spec into the Join one (generateType none,
// the worker config as data, the same patches) and its base hash.
func bootstrapSpec(j *read.JoinPlan, spec talosconfig.TalosConfigSpec, release string) (talosconfig.TalosConfigSpec, string, error) {
	spec.GenerateType = talosconfig.GenerateTypeNone
	base := spec
	var err error
	if base.Data, err = talosconfig.JoinConfig(j.Refs.JoinCluster(), j.Config, talosconfig.PlaceholderFacts(), release).Encode(); err != nil {
		return spec, "", err
	}
	hash, err := joinBase(base, j.Revision)
	if err != nil {
		return spec, "", err
	}
	if spec.Data, err = talosconfig.JoinConfig(j.Refs.JoinCluster(), j.Config, j.Facts.JoinFacts, release).Encode(); err != nil {
		return spec, "", err
	}
	return spec, hash, nil
}
