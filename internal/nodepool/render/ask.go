package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/poolspec"
)

// DeploymentOnly are the spec fields that enter only the MachineDeployment
// and the MachineHealthCheck. Cluster API rolls a MachineDeployment when a
// template reference changes (MachineTemplateUpToDate,
// internal/controllers/machinedeployment/mdutil/util.go, v1.11.4), not when
// these do, so they are no part of what the templates are asked to be.
// TestRequestClassifiesEverySpecField makes a new field choose a side.
var DeploymentOnly = []string{"replicas", "minReplicas", "maxReplicas", "maxNodeProvisionTime", "healthCheck", "rollout"}

// poolAsk is what a pool asks its templates to be: its spec as written
// (deploymentOnly aside), the Input's values as written, and the cluster
// facts that enter a template. Defaults and rendering are not in it: they
// belong to the release, and a release must not roll a running pool.
type poolAsk struct {
	Spec  map[string]any   `json:"spec"`
	Input config.Requested `json:"input"`
	// Class is the StorageClass the disks go on: on the clone path the
	// class of the pool's disks or of its golden, not always a spec value.
	Class string `json:"class,omitempty"`
	// InstanceType is the size of the instance type a pool is sized by,
	// which its kubelet reservations come from.
	InstanceType *poolspec.NodeSize `json:"instanceType,omitempty"`
	// MachineVersion is the Kubernetes release the Machines run, from the
	// Input's release table; it enters a Join pool's machine config.
	MachineVersion string `json:"machineVersion"`
}

// AskSpec is the spec's part of a pool's ask, built once per call
// (AskSpecOf): both templates' asks are hashed from it.
type AskSpec struct {
	Fields        map[string]any
	InstanceTyped bool
}

// AskSpecOf is spec as written, deploymentOnly aside, and without the
// labels Cluster API syncs from the Machines (machine, as poolspec split
// them): they too enter only the MachineDeployment, which propagates them in
// place.
//
// An architecture written as the Input's (inputArch) is no ask: the
// pool renders as one that writes none.
func AskSpecOf(spec v1alpha1.NodePoolSpec, machine map[string]string, inputArch string) (AskSpec, error) {
	if spec.Architecture == inputArch {
		spec.Architecture = ""
	}
	if m := machine; len(m) > 0 {
		spec.Labels = maps.Clone(spec.Labels)
		for k := range m {
			delete(spec.Labels, k)
		}
	}
	s, err := compose.Canonical(spec, compose.DropEmpty())
	if err != nil {
		return AskSpec{}, fmt.Errorf("cannot read the pool's request: %w", err)
	}
	for _, k := range DeploymentOnly {
		delete(s, k)
	}
	return AskSpec{Fields: s, InstanceTyped: spec.InstanceType != ""}, nil
}

// AskOf hashes a pool's ask of one template. facts is nil for the
// KubevirtMachineTemplate, which no node size or Kubernetes release enters,
// so that the one Requirements renders needs nothing read to be known kept.
func AskOf(spec AskSpec, in config.Requested, class string, facts *BootstrapFacts) (string, error) {
	r := poolAsk{Spec: spec.Fields, Input: in, Class: class}
	if facts != nil {
		r.MachineVersion = facts.MachineVersion
		if spec.InstanceTyped {
			r.InstanceType = &poolspec.NodeSize{MemoryBytes: facts.Size.MemoryBytes, MilliCPU: facts.Size.MilliCPU}
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("cannot read the pool's request: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:2*pool.HashLength], nil
}

// BootstrapFacts are the cluster facts that enter the TalosConfigTemplate:
// the node's size (the kubelet reservations come from it) and the Kubernetes
// release the Machines run.
type BootstrapFacts struct {
	Size           poolspec.NodeSize
	MachineVersion string
}
