package nodepool

import (
	"fmt"
	"strings"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; CAPI v1.11 still serves it.

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/config"
)

// ConditionWorkerImageReady says whether the pool's current template is
// composed, or why it is held back.
const ConditionWorkerImageReady = "WorkerImageReady"

// Reasons and results of an open gate.
const (
	ReasonTemplateComposed = "TemplateComposed"
	ReasonGateOpened       = "GateOpened"
	ReasonTemplateChanged  = "TemplateChanged"
)

// emit turns the plan into the Output.
func emit(pl plan, prev previous, cfg config.Config) (compose.Output, error) {
	out := compose.Output{Resources: map[resource.Name]*resource.DesiredComposed{}}
	machineTemplate, bootstrapTemplate := pl.MachineTemplate.Name, pl.bootstrapName()
	settled := true

	switch {
	case pl.Hold != nil && !pl.Hold.DeploymentOnly:
		// Hold the change back: every observed resource stays as it is.
		pl.Observed.Keep(out.Resources, compose.RetireNone, pl.keptReady)
		machineTemplate, bootstrapTemplate = pl.Observed.inEffect()
		settled = false
	default:
		if err := pl.emitCurrent(out.Resources); err != nil {
			return compose.Output{}, err
		}
		if pl.Hold != nil {
			// Only the deployment and its health check wait: they stay as
			// observed, on the templates keepReferenced keeps, or are not
			// composed at all for a new pool.
			for _, n := range []resource.Name{resourceMachineDeployment, resourceMachineHealthCheck} {
				delete(out.Resources, n)
				if u, ok := pl.Observed.Resources[n]; ok {
					out.Resources[n] = compose.Kept(u, pl.keptReady(n))
				}
			}
			machineTemplate, bootstrapTemplate = pl.Observed.inEffect()
			settled = false
		}
		pl.keepReferenced(out.Resources)
		for _, d := range out.Resources {
			if d.Ready != resource.ReadyTrue {
				settled = false
			}
		}
	}
	if err := pl.protectClones(out.Resources, cfg.Usages); err != nil {
		return compose.Output{}, err
	}
	// Whatever the mode could not read stays, whichever rule left it out.
	pl.Observed.Keep(out.Resources, compose.RetireAll, pl.keptReady)
	// A held pool has no workers for the change it waits for: it must not be
	// reported Ready because what it composes is.
	out.NotReady = pl.Hold != nil
	out.Signals = pl.signals()

	st := pl.status(machineTemplate, bootstrapTemplate)
	out.Status = map[string]any{
		"image": st.Image, "template": st.Template, "bootstrapTemplate": st.BootstrapTemplate,
		"gate": st.Gate, "replicas": st.Replicas, "readyReplicas": st.ReadyReplicas,
	}
	out.Conditions = []compose.Condition{pl.workerImageCondition(), pl.CloneHealth, pl.cloneCapacityCondition(), pl.SupportMatrix, pl.Installer, pl.renderingCondition(), pl.readableCondition()}
	if c, ok := pl.joinCondition(); ok {
		out.Conditions = append(out.Conditions, c)
	}
	out.Results = pl.results(prev, machineTemplate)
	if !settled {
		out.TTL = cfg.InProgressTTL
	}
	return out, nil
}

// emitCurrent composes the current templates, deployment and health check.
func (pl plan) emitCurrent(into map[resource.Name]*resource.DesiredComposed) error {
	// The templates come serialised from render, which names them.
	current := []struct {
		name    resource.Name
		obj     any
		desired *composed.Unstructured
	}{
		{name: machineTemplateResource(pl.MachineTemplate.Name), desired: pl.MachineTemplate.Desired},
		{name: bootstrapTemplateResource(pl.BootstrapTemplate.Name), desired: pl.BootstrapTemplate.Desired},
		{name: resourceMachineDeployment, obj: pl.MachineDeployment},
		{name: resourceMachineHealthCheck, obj: pl.MachineHealthCheck},
	}
	if ca := renderFactoryCA(pl.Pool, pl.Shape); ca != nil {
		current = append(current, struct {
			name    resource.Name
			obj     any
			desired *composed.Unstructured
		}{name: resourceFactoryCA, obj: ca})
	}
	for _, c := range current {
		if c.name != resourceMachineDeployment && pl.Join != nil && pl.Join.Pinned != "" && c.name == bootstrapTemplateResource(pl.BootstrapTemplate.Name) {
			// Facts alone changed: the running template stays (kept as
			// observed by keepReferenced), the new one is not composed.
			continue
		}
		u := c.desired
		if u == nil {
			obj, err := clusterapi.InContract(c.obj, pl.ClusterAPI)
			if err != nil {
				return refused(pl.Pool.Ref(), fmt.Errorf("%s: %w", c.name, err))
			}
			if u, err = compose.ToDesired(obj, templateShape...); err != nil {
				return refused(pl.Pool.Ref(), fmt.Errorf("%s: %w", c.name, err))
			}
		}
		ready := resource.ReadyFalse
		if _, ok := pl.Observed.Resources[c.name]; ok {
			ready = resource.ReadyTrue
		}
		if c.name == resourceMachineDeployment {
			ready = deploymentReady(pl.Observed.Deployment, pl.MachineDeployment.Spec.Replicas)
		}
		into[c.name] = &resource.DesiredComposed{Resource: u, Ready: ready}
	}
	return nil
}

// keepReferenced keeps every previous template a MachineSet or the observed
// MachineDeployment still points at: an old MachineSet needs its templates
// to scale down or remediate. The others retire, unless the deployment is
// unreadable and what the pool runs on is unknown. Usages are protectClones'.
func (pl plan) keepReferenced(into map[resource.Name]*resource.DesiredComposed) {
	machine, bootstrap := map[string]bool{}, map[string]bool{}
	m, b := pl.Observed.inEffect()
	machine[m], bootstrap[b] = true, true
	for _, ms := range pl.World.MachineSets {
		machine[ms.Spec.Template.Spec.InfrastructureRef.Name] = true
		if ref := ms.Spec.Template.Spec.Bootstrap.ConfigRef; ref != nil {
			bootstrap[ref.Name] = true
		}
	}
	unknown := pl.Observed.deploymentUnreadable()
	retired := func(n resource.Name) bool {
		name := pl.Observed.Resources[n].GetName()
		switch {
		case strings.HasPrefix(string(n), prefixMachineTemplate):
			return !unknown && !machine[name]
		case strings.HasPrefix(string(n), prefixBootstrapTemplate):
			return !unknown && !bootstrap[name]
		}
		return true
	}
	pl.Observed.Keep(into, retired, pl.keptReady)
}

// keptReady is the readiness of a kept resource: a template or Usage once it
// exists, the MachineDeployment once its ready replicas reach its own count.
func (pl plan) keptReady(n resource.Name) resource.Ready {
	if n == resourceMachineDeployment {
		return deploymentReady(pl.Observed.Deployment, nil)
	}
	return resource.ReadyTrue
}

// deploymentReady: ready once its ready replicas reach want, else its spec's.
func deploymentReady(md *clusterv1.MachineDeployment, want *int32) resource.Ready {
	if md == nil {
		return resource.ReadyFalse
	}
	if want == nil {
		want = md.Spec.Replicas
	}
	n := int32(0)
	if want != nil {
		n = *want
	}
	if md.Status.ReadyReplicas >= n {
		return resource.ReadyTrue
	}
	return resource.ReadyFalse
}

// status is the XNodePool status the tenant cluster reads back.
func (pl plan) status(machineTemplate, bootstrapTemplate string) v1alpha1.NodePoolStatus {
	img := &v1alpha1.NodePoolImageStatus{NodePoolImage: v1alpha1.NodePoolImage{
		SchematicID:  pl.Image.SchematicID.Value,
		Version:      pl.Image.Version.Value,
		SourceType:   string(pl.Image.Source),
		StorageClass: pl.StorageClass.Name,
	}, Clones: cloneProgress(pl.Clones)}
	if pl.Image.Source == SourceClone {
		img.Golden = pl.Image.GoldenRef()
	} else {
		img.ImageURL = pl.Image.URL
	}
	gate := &v1alpha1.Gate{State: GateOpen, Reason: ReasonTemplateComposed, Message: pl.openMessage()}
	if pl.Hold != nil {
		gate = &v1alpha1.Gate{State: GateHeld, Reason: pl.Hold.Reason, Message: pl.Hold.Message}
	}
	replicas, ready := int64(pl.desiredReplicas()), int64(pl.Observed.readyReplicas())
	return v1alpha1.NodePoolStatus{
		Image:             img,
		Template:          machineTemplate,
		BootstrapTemplate: bootstrapTemplate,
		Gate:              gate,
		Replicas:          &replicas,
		ReadyReplicas:     &ready,
	}
}

func (pl plan) openMessage() string {
	from := pl.Image.URL
	if pl.Image.Source == SourceClone {
		from = "golden image " + pl.Image.GoldenRef()
	}
	return fmt.Sprintf("Node pool %q boots Talos %s (schematic %s) from %s through template %s.",
		pl.Pool.Ref(), pl.Image.Version.Value, pl.Image.SchematicID.Value, from, pl.MachineTemplate.Name)
}

func (pl plan) workerImageCondition() compose.Condition {
	if pl.Hold != nil {
		return compose.Condition{Type: ConditionWorkerImageReady, Status: compose.StatusFalse, Reason: pl.Hold.Reason, Message: pl.Hold.Message}
	}
	return compose.Condition{Type: ConditionWorkerImageReady, Status: compose.StatusTrue, Reason: ReasonTemplateComposed, Message: pl.openMessage()}
}

// previous is what the observed composite said last time, to emit results
// on transitions only, and since when each disk in flight has not moved.
type previous struct {
	Gate       v1alpha1.Gate               `json:"gate"`
	Template   string                      `json:"template"`
	Conditions []compose.ObservedCondition `json:"conditions"`
	// Image carries the records of the disks in flight (stall.go).
	Image struct {
		Clones []v1alpha1.CloneProgress `json:"clones"`
	} `json:"image"`
}

// condition is "status/reason" of the previous condition of type t.
func (p previous) condition(t string) string {
	c, ok := compose.ConditionOf(p.Conditions, t)
	if !ok {
		return ""
	}
	return c.Status + "/" + c.Reason
}

// results are the events of what changed since the observed status.
func (pl plan) results(prev previous, machineTemplate string) []compose.Result {
	var rs []compose.Result
	switch {
	case pl.Hold != nil && (prev.Gate.State != GateHeld || prev.Gate.Reason != pl.Hold.Reason):
		rs = append(rs, compose.Result{Severity: compose.SeverityWarning, Reason: pl.Hold.Reason, Message: pl.Hold.Message})
	case pl.Hold == nil && prev.Gate.State == GateHeld:
		rs = append(rs, compose.Result{Severity: compose.SeverityNormal, Reason: ReasonGateOpened, Message: fmt.Sprintf("Node pool %q: the held change is composed now (%s).", pl.Pool.Ref(), prev.Gate.Reason+" resolved")})
	}
	if pl.Hold == nil && prev.Template != machineTemplate {
		msg := fmt.Sprintf("Node pool %q: composing worker template %s.", pl.Pool.Ref(), machineTemplate)
		if prev.Template != "" {
			msg = fmt.Sprintf("Node pool %q: rolling from worker template %s to %s.", pl.Pool.Ref(), prev.Template, machineTemplate)
		}
		rs = append(rs, compose.Result{Severity: compose.SeverityNormal, Reason: ReasonTemplateChanged, Message: msg})
	}
	conds := []compose.Condition{pl.CloneHealth, pl.SupportMatrix, pl.Installer, pl.renderingCondition(), pl.readableCondition()}
	if c, ok := pl.joinCondition(); ok {
		conds = append(conds, c)
	}
	for _, c := range conds {
		r, ok := compose.Transition(c, prev.Conditions)
		if !ok {
			r, ok = copyingResult(c, prev.Conditions)
		}
		if ok {
			rs = append(rs, r)
		}
	}
	return rs
}

// readableCondition covers the required objects and the observed resources.
func (pl plan) readableCondition() compose.Condition {
	problems := append(append([]string(nil), pl.World.Unreadable...), pl.Observed.Problems()...)
	return compose.Readable(fmt.Sprintf("node pool %q", pl.Pool.Ref()), problems)
}

// signals summarise the hold and the clone pre-flight's prediction for the
// metrics; a plan neither planned nor blocked was not predicted this call.
func (pl plan) signals() compose.Signals {
	var s compose.Signals
	if pl.Hold != nil {
		s.Hold = pl.Hold.Reason
	}
	if cp := pl.ClonePlan; cp.Strategy != "" || cp.Blocked != nil {
		sig := &compose.ClonePlanSignal{Strategy: string(cp.Strategy)}
		if cp.Fallback != nil {
			sig.Fallback = cp.Fallback.Reason
		}
		if cp.Blocked != nil {
			sig.Blocked = cp.Blocked.Reason
		}
		s.ClonePlan = sig
	}
	return s
}
