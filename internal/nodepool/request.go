package nodepool

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	infrav1 "sigs.k8s.io/cluster-api-provider-kubevirt/api/v1alpha1"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/poolspec"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// AnnRequest records on each template the request it was rendered for
// (requestOf). A template that carries the pool's current request is kept,
// whatever this release would render in its place.
const AnnRequest = "workerimage.cozystack.io/request"

// AnnRendering records on each template the RenderingRevision that rendered
// it; an adopted template, which another tool made, records 0.
const AnnRendering = "workerimage.cozystack.io/rendering"

// RenderingRevision numbers how this function renders templates. Bump it
// with every change that renders any template differently for the same
// request (TestRenderingRevisionCoversTheRendering fails until it is), so
// that RenderingCurrent can tell the pools that run an earlier rendering
// without rendering anything for them.
const RenderingRevision = 2

// firstRendering is the RenderingRevision of the releases that recorded no
// rendering, and of every release before request records.
const firstRendering = 1

// renderingRevision is RenderingRevision, a variable so that tests can play
// a later release.
var renderingRevision = RenderingRevision

// ConditionRenderingCurrent says whether the pool runs the templates this
// release renders for what it asks for, or templates an earlier release
// rendered for the same request.
const ConditionRenderingCurrent = "RenderingCurrent"

// Reasons of RenderingCurrent.
const (
	ReasonRenderedByThisRelease  = "RenderedByThisRelease"
	ReasonKeptFromEarlierRelease = "KeptFromEarlierRelease"
)

// deploymentOnly are the spec fields that enter only the MachineDeployment
// and the MachineHealthCheck. Cluster API rolls a MachineDeployment when a
// template reference changes (MachineTemplateUpToDate,
// internal/controllers/machinedeployment/mdutil/util.go, v1.11.4), not when
// these do, so they are no part of what the templates are asked to be.
// TestRequestClassifiesEverySpecField makes a new field choose a side.
var deploymentOnly = []string{"replicas", "minReplicas", "maxReplicas", "maxNodeProvisionTime", "healthCheck", "rollout"}

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

// requestSpec is the spec's part of a pool's request, built once per call
// (requestSpecOf): both templates' requests are hashed from it.
type requestSpec struct {
	Fields        map[string]any
	InstanceTyped bool
}

// requestSpecOf is spec as written, deploymentOnly aside, and without the
// labels Cluster API syncs from the Machines (machine, as poolspec split
// them): they too enter only the MachineDeployment, which propagates them in
// place.
//
// An architecture written as the Input's (inputArch) is no request: the
// pool renders as one that writes none.
func requestSpecOf(spec v1alpha1.NodePoolSpec, machine map[string]string, inputArch string) (requestSpec, error) {
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
		return requestSpec{}, fmt.Errorf("cannot read the pool's request: %w", err)
	}
	for _, k := range deploymentOnly {
		delete(s, k)
	}
	return requestSpec{Fields: s, InstanceTyped: spec.InstanceType != ""}, nil
}

// requestOf hashes a pool's request of one template. facts is nil for the
// KubevirtMachineTemplate, which no node size or Kubernetes release enters,
// so that the one Requirements renders needs nothing read to be known kept.
func requestOf(spec requestSpec, in config.Requested, class string, facts *bootstrapFacts) (string, error) {
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
	return hex.EncodeToString(sum[:])[:2*hashLength], nil
}

// bootstrapFacts are the cluster facts that enter the TalosConfigTemplate:
// the node's size (the kubelet reservations come from it) and the Kubernetes
// release the Machines run.
type bootstrapFacts struct {
	Size           poolspec.NodeSize
	MachineVersion string
}

// keptTemplate is a running template kept for the pool's unchanged request
// although this release renders templates differently, or one adopted.
type keptTemplate struct {
	Kind, Running, Rendered string
	// Revision is the RenderingRevision it was rendered by, 0 when another
	// tool made it.
	Revision int
}

// keptFor is the running template under n when it records request: the
// pool asked for nothing new, so it stays as it is whatever this release
// would render, and nothing is rendered in its place (a release that
// renders differently rolls no pool; templateRevision takes it on purpose).
// A template without a record (rendered before records were written) is
// replaced only when this release renders it differently, as every release
// did before.
func (cs composedState) keptFor(n resource.Name, request string) *composed.Unstructured {
	u, ok := cs.Resources[n]
	if !ok || u.GetAnnotations()[AnnRequest] != request {
		return nil
	}
	return compose.AsObserved(u)
}

// unrecorded is the running template under n when it records no request:
// an earlier release made it before requests were recorded.
func (cs composedState) unrecorded(n resource.Name) *composed.Unstructured {
	u, ok := cs.Resources[n]
	if !ok || u.GetAnnotations()[AnnRequest] != "" {
		return nil
	}
	return u
}

// stale is a kept template an earlier rendering made, for RenderingCurrent;
// false for one this release renders alike.
func stale(kind string, u *composed.Unstructured) (keptTemplate, bool) {
	rev, err := strconv.Atoi(u.GetAnnotations()[AnnRendering])
	if err == nil && rev == renderingRevision {
		return keptTemplate{}, false
	}
	return keptTemplate{Kind: kind, Running: u.GetName(), Revision: rev}, true
}

// machineTemplateFrom and bootstrapTemplateFrom are templates this pool
// composes as they already are (kept or adopted), in the typed form too.
func machineTemplateFrom(u *composed.Unstructured) (machineTemplate, error) {
	kmt := &infrav1.KubevirtMachineTemplate{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, kmt); err != nil {
		return machineTemplate{}, fmt.Errorf("KubevirtMachineTemplate %s: %w", u.GetName(), err)
	}
	return machineTemplate{KubevirtMachineTemplate: kmt, Desired: u}, nil
}

func bootstrapTemplateFrom(u *composed.Unstructured) (bootstrapTemplate, error) {
	tct := &talosconfig.TalosConfigTemplate{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, tct); err != nil {
		return bootstrapTemplate{}, fmt.Errorf("TalosConfigTemplate %s: %w", u.GetName(), err)
	}
	return bootstrapTemplate{TalosConfigTemplate: tct, Desired: u}, nil
}

// stamped is u with the request and this release's rendering recorded; the
// name is not touched (it hashes the spec alone, named).
func stamped(u *composed.Unstructured, request string) *composed.Unstructured {
	return stampedAt(u, request, renderingRevision)
}

// stampedAt is u with the request and the rendering that made it recorded.
func stampedAt(u *composed.Unstructured, request string, rendering int) *composed.Unstructured {
	out := u.DeepCopy()
	a := out.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[AnnRequest] = request
	a[AnnRendering] = strconv.Itoa(rendering)
	out.SetAnnotations(a)
	return out
}

// pinOn pins the pool's Join config on the running bootstrap template u and
// names the facts that changed since it was built.
func (j *joinPlan) pinOn(bootstrap string, u *composed.Unstructured) {
	j.Pinned = bootstrap
	was := talosconfig.MachineConfig{}
	if data, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "data"); data != "" {
		// An unreadable document names no fact; the condition still says
		// that the facts changed.
		_ = yaml.Unmarshal([]byte(data), &was)
	}
	j.Changed = changedFacts(j.Refs, was.Facts(), j.Facts.JoinFacts)
}

// renderingCondition is RenderingCurrent.
func (pl plan) renderingCondition() compose.Condition {
	if len(pl.Adopted) > 0 {
		return compose.Condition{Type: ConditionRenderingCurrent, Status: compose.StatusFalse, Reason: ReasonAdopted, Message: msgAdopted(pl.Pool, pl.Adopted, pl.TemplateRevision)}
	}
	if len(pl.Kept) == 0 {
		return compose.Condition{Type: ConditionRenderingCurrent, Status: compose.StatusTrue, Reason: ReasonRenderedByThisRelease,
			Message: fmt.Sprintf("Node pool %q runs the templates this release renders for what it asks for.", pl.Pool.Ref())}
	}
	return compose.Condition{Type: ConditionRenderingCurrent, Status: compose.StatusFalse, Reason: ReasonKeptFromEarlierRelease, Message: msgKeptFromEarlierRelease(pl.Pool, pl.Kept, pl.TemplateRevision)}
}

// msgKeptFromEarlierRelease says which running templates an earlier
// rendering (or another tool) made, and how to take this release's.
func msgKeptFromEarlierRelease(p pool, kept []keptTemplate, revision int64) string {
	var each []string
	for _, k := range kept {
		by := fmt.Sprintf("rendering revision %d", k.Revision)
		if k.Revision == 0 {
			by = "another tool"
		}
		each = append(each, fmt.Sprintf("%s %s (made by %s)", k.Kind, k.Running, by))
	}
	return fmt.Sprintf("Node pool %q runs %s, for what the pool still asks for; this release renders revision %d. Nothing rolls until the pool's request changes. To take this release's rendering now, which rolls the pool's workers once if it differs, set spec.templateRevision to %d, or bump the function Input's templateRevision to do it for every pool.",
		p.Ref(), joinAnd(each), renderingRevision, revision+1)
}

// msgAdopted says which existing templates the pool adopted.
func msgAdopted(p pool, adopted []keptTemplate, revision int64) string {
	var each []string
	for _, k := range adopted {
		each = append(each, fmt.Sprintf("%s %s (this release renders %s)", k.Kind, k.Running, k.Rendered))
	}
	return fmt.Sprintf("Node pool %q adopted the MachineDeployment another tool made (the kubernetes-nodes chart, say) and runs on its %s, equivalent to what the pool asks for, so no worker rolled. Nothing rolls until the pool's request changes. To take this release's rendering now, which rolls the pool's workers once, set spec.templateRevision to %d.",
		p.Ref(), joinAnd(each), revision+1)
}
