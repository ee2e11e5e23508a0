package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime"
	infrav1 "sigs.k8s.io/cluster-api-provider-kubevirt/api/v1alpha1"

	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/poolspec"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// RenderingRevision numbers how this function renders templates. Bump it
// with every change that renders any template differently for the same
// request (TestRenderingRevisionCoversTheRendering fails until it is), so
// that RenderingCurrent can tell the pools that run an earlier rendering
// without rendering anything for them.
const RenderingRevision = 2

// FirstRendering is the RenderingRevision of the releases that recorded no
// rendering, and of every release before request records.
const FirstRendering = 1

// renderingRevision is RenderingRevision, a variable so that tests can play
// a later release.
var Rendering = RenderingRevision

// DeploymentOnly are the spec fields that enter only the MachineDeployment
// and the MachineHealthCheck. Cluster API rolls a MachineDeployment when a
// template reference changes (MachineTemplateUpToDate,
// internal/controllers/machinedeployment/mdutil/util.go, v1.11.4), not when
// these do, so they are no part of what the templates are asked to be.
// TestRequestClassifiesEverySpecField makes a new field choose a side.
var DeploymentOnly = []string{"replicas", "minReplicas", "maxReplicas", "maxNodeProvisionTime", "healthCheck", "rollout"}

// poolRequest is what a pool asks its templates to be: its spec as written
// (deploymentOnly aside), the Input's values as written, and the cluster
// facts that enter a template. Defaults and rendering are not in it: they
// belong to the release, and a release must not roll a running pool.
type poolRequest struct {
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

// RequestSpec is the spec's part of a pool's request, built once per call
// (requestSpecOf): both templates' requests are hashed from it.
type RequestSpec struct {
	Fields        map[string]any
	InstanceTyped bool
}

// RequestSpecOf is spec as written, deploymentOnly aside, and without the
// labels Cluster API syncs from the Machines (machine, as poolspec split
// them): they too enter only the MachineDeployment, which propagates them in
// place.
//
// An architecture written as the Input's (inputArch) is no request: the
// pool renders as one that writes none.
func RequestSpecOf(spec v1alpha1.NodePoolSpec, machine map[string]string, inputArch string) (RequestSpec, error) {
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
		return RequestSpec{}, fmt.Errorf("cannot read the pool's request: %w", err)
	}
	for _, k := range DeploymentOnly {
		delete(s, k)
	}
	return RequestSpec{Fields: s, InstanceTyped: spec.InstanceType != ""}, nil
}

// RequestOf hashes a pool's request of one template. facts is nil for the
// KubevirtMachineTemplate, which no node size or Kubernetes release enters,
// so that the one Requirements renders needs nothing read to be known kept.
func RequestOf(spec RequestSpec, in config.Requested, class string, facts *BootstrapFacts) (string, error) {
	r := poolRequest{Spec: spec.Fields, Input: in, Class: class}
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

// MachineTemplateFrom and bootstrapTemplateFrom are templates this pool
// composes as they already are (kept or adopted), in the typed form too.
func MachineTemplateFrom(u *composed.Unstructured) (MachineTemplate, error) {
	kmt := &infrav1.KubevirtMachineTemplate{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, kmt); err != nil {
		return MachineTemplate{}, fmt.Errorf("KubevirtMachineTemplate %s: %w", u.GetName(), err)
	}
	return MachineTemplate{KubevirtMachineTemplate: kmt, Desired: u}, nil
}

func BootstrapTemplateFrom(u *composed.Unstructured) (BootstrapTemplate, error) {
	tct := &talosconfig.TalosConfigTemplate{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, tct); err != nil {
		return BootstrapTemplate{}, fmt.Errorf("TalosConfigTemplate %s: %w", u.GetName(), err)
	}
	return BootstrapTemplate{TalosConfigTemplate: tct, Desired: u}, nil
}

// Stamped is u with the request and this release's rendering recorded; the
// name is not touched (it hashes the spec alone, named).
func Stamped(u *composed.Unstructured, request string) *composed.Unstructured {
	return StampedAt(u, request, Rendering)
}

// StampedAt is u with the request and the rendering that made it recorded.
func StampedAt(u *composed.Unstructured, request string, rendering int) *composed.Unstructured {
	out := u.DeepCopy()
	a := out.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[pool.AnnRequest] = request
	a[pool.AnnRendering] = strconv.Itoa(rendering)
	out.SetAnnotations(a)
	return out
}
