package nodepool

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

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

// requestOf hashes a pool's request. size counts only for a pool sized by
// an instance type (instanceType set): the others' size is in their spec.
func requestOf(spec v1alpha1.NodePoolSpec, in config.Requested, class string, size poolspec.NodeSize, machineVersion string) (string, error) {
	s, err := compose.Canonical(spec, compose.DropEmpty())
	if err != nil {
		return "", fmt.Errorf("cannot read the pool's request: %w", err)
	}
	for _, k := range deploymentOnly {
		delete(s, k)
	}
	r := poolRequest{Spec: s, Input: in, Class: class, MachineVersion: machineVersion}
	if spec.InstanceType != "" {
		r.InstanceType = &poolspec.NodeSize{MemoryBytes: size.MemoryBytes, MilliCPU: size.MilliCPU}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("cannot read the pool's request: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:2*hashLength], nil
}

// keptTemplate is a running template kept in place of what this release
// renders for the same request.
type keptTemplate struct {
	Kind, Running, Rendered string
}

// keepRequested stamps the rendered templates with request and, where the
// MachineDeployment runs a template already stamped with it, keeps that one
// in place of the rendered one: the pool asked for nothing new, so whatever
// this release renders differently (a new default, a fixed rendering) waits
// until the pool's request changes, or its templateRevision is bumped. A
// template without a record (rendered before records were written) is
// replaced only when this release renders it differently, which is what
// every release did before.
func (pl *plan) keepRequested(request string) error {
	pl.MachineTemplate.Desired = stamped(pl.MachineTemplate.Desired, request)
	pl.BootstrapTemplate.Desired = stamped(pl.BootstrapTemplate.Desired, request)
	machine, bootstrap := pl.Observed.inEffect()
	kept := false
	if u := pl.runningFor(machineTemplateResource(machine), request); u != nil && machine != pl.MachineTemplate.Name {
		mt, err := machineTemplateFrom(compose.AsObserved(u))
		if err != nil {
			return refused(pl.Pool.Ref(), err)
		}
		pl.Kept = append(pl.Kept, keptTemplate{Kind: KindKubevirtMachineTmpl, Running: machine, Rendered: pl.MachineTemplate.Name})
		pl.MachineTemplate = mt
		kept = true
	}
	if u := pl.runningFor(bootstrapTemplateResource(bootstrap), request); u != nil && bootstrap != pl.BootstrapTemplate.Name {
		bt, err := bootstrapTemplateFrom(compose.AsObserved(u))
		if err != nil {
			return refused(pl.Pool.Ref(), err)
		}
		tct := bt.TalosConfigTemplate
		// A Join config rendered alike but for its facts differs in facts
		// alone, which JoinFactsCurrent reports; it is no earlier rendering.
		if pl.Join == nil || tct.Annotations[AnnJoinBase] != pl.BootstrapTemplate.Annotations[AnnJoinBase] {
			pl.Kept = append(pl.Kept, keptTemplate{Kind: talosconfig.KindTalosConfigTemplate, Running: bootstrap, Rendered: pl.BootstrapTemplate.Name})
		}
		if pl.Join != nil {
			// Facts are not part of the request (their revision is): a kept
			// config says which of them it predates, as pinFacts does.
			pl.Join.pinOn(bootstrap, u)
			if len(pl.Join.Changed) == 0 {
				pl.Join.Pinned = ""
			}
		}
		pl.BootstrapTemplate = bt
		kept = true
	}
	if kept {
		md := pl.MachineDeployment.DeepCopy()
		md.Spec.Template.Spec.InfrastructureRef.Name = pl.MachineTemplate.Name
		ref := *md.Spec.Template.Spec.Bootstrap.ConfigRef
		ref.Name = pl.BootstrapTemplate.Name
		md.Spec.Template.Spec.Bootstrap.ConfigRef = &ref
		pl.MachineDeployment = md
	}
	return nil
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

// runningFor is the observed template under n when it records request.
func (pl plan) runningFor(n resource.Name, request string) *composed.Unstructured {
	u, ok := pl.Observed.Resources[n]
	if !ok || u.GetAnnotations()[AnnRequest] != request {
		return nil
	}
	return u
}

// stamped is u with the request recorded; the name is not touched (it
// hashes the spec alone, named).
func stamped(u *composed.Unstructured, request string) *composed.Unstructured {
	if u == nil {
		return nil
	}
	out := u.DeepCopy()
	a := out.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[AnnRequest] = request
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

// msgKeptFromEarlierRelease says which running templates an earlier release
// rendered, what this one would render, and how to take it.
func msgKeptFromEarlierRelease(p pool, kept []keptTemplate, revision int64) string {
	var each []string
	for _, k := range kept {
		each = append(each, fmt.Sprintf("%s %s (this release renders %s)", k.Kind, k.Running, k.Rendered))
	}
	return fmt.Sprintf("Node pool %q runs %s, rendered by an earlier release of the function for what the pool still asks for. Nothing rolls until the pool's request changes. To take this release's rendering now, which rolls the pool's workers once, set spec.templateRevision to %d, or bump the function Input's templateRevision to do it for every pool.",
		p.Ref(), joinAnd(each), revision+1)
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
