package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
	"github.com/cozystack/function-worker-image/internal/talosimage"
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

// Bootstrap builds the TalosConfigTemplate. The installer
// follows the resolved image, so a pool on an osImage override upgrades in
// place to the OS it booted, not to the pool default.
// A Join pool (join non-nil) gets the complete worker config as its base
// document, and the same patches.
func Bootstrap(p pool.Pool, img pool.Image, s pool.Shape, nc talosconfig.Node, join *read.JoinPlan) (BootstrapTemplate, error) {
	installer := talosimage.InstallerImage(s.InstallerRepository.Value, img.SchematicID.Value, img.Version.Value)
	patches, err := talosconfig.StrategicPatches(installer, img.Version.Value, s.Mirrors, nc)
	if err != nil {
		return BootstrapTemplate{}, err
	}
	spec := talosconfig.TalosConfigSpec{
		GenerateType:     talosconfig.GenerateTypeWorker,
		TalosVersion:     img.Version.Value,
		StrategicPatches: patches,
	}
	annotations := map[string]string{labels.AnnPool: p.Ref()}
	if join != nil {
		if spec, annotations[pool.AnnJoinBase], err = bootstrapSpec(join, spec, s.MachineVersion); err != nil {
			return BootstrapTemplate{}, err
		}
	}
	tct := &talosconfig.TalosConfigTemplate{
		TypeMeta: metav1.TypeMeta{APIVersion: talosconfig.APIVersion, Kind: talosconfig.KindTalosConfigTemplate},
		Spec:     talosconfig.TalosConfigTemplateSpec{Template: talosconfig.TalosConfigTemplateResource{Spec: spec}},
	}
	tct.ObjectMeta = templateMeta(p, "", map[string]string{labels.Pool: p.Hash()}, annotations)
	name, desired, err := named(p, tct)
	if err != nil {
		return BootstrapTemplate{}, err
	}
	tct.Name = name
	return BootstrapTemplate{TalosConfigTemplate: tct, Desired: desired}, nil
}

// joinBase is the hash of a Join template apart from the facts: its spec
// with every fact replaced by a placeholder, and the pool's factsRevision.
// Two templates of a pool with the same base differ in facts alone, which
// never rolls the workers by itself (see pinFacts).
func joinBase(spec talosconfig.TalosConfigSpec, revision int64) (string, error) {
	m, err := compose.Canonical(struct {
		Spec     talosconfig.TalosConfigSpec `json:"spec"`
		Revision int64                       `json:"revision"`
	}{spec, revision}, compose.DropEmpty())
	if err != nil {
		return "", fmt.Errorf("cannot hash the Talos worker config: %w", err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("cannot hash the Talos worker config: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:pool.HashLength], nil
}
