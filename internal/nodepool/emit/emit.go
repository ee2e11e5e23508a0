package emit

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
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/nodepool/render"
	"github.com/cozystack/function-worker-image/internal/stall"
)

// desiredReplicas is the worker count the pool reports: the fixed count, or
// for an autoscaled pool what the autoscaler last set on the observed
// MachineDeployment (its floor before there is one).
func desiredReplicas(pl decide.Plan) int32 {
	if !pl.Shape.Scaling.Autoscaled {
		return pl.Shape.Replicas
	}
	if md := pl.Composed.Deployment; md != nil && md.Spec.Replicas != nil {
		return *md.Spec.Replicas
	}
	return pl.Shape.Scaling.Min
}

// Emit turns the plan into the Output.
func Emit(pl decide.Plan, prev read.Previous, cfg config.Config) (compose.Output, error) {
	out := compose.Output{Resources: map[resource.Name]*resource.DesiredComposed{}}
	machineTemplate, bootstrapTemplate := pl.MachineTemplate.Name, pl.BootstrapName()
	settled := true

	switch {
	case pl.Hold != nil && !pl.Hold.DeploymentOnly:
		// Hold the change back: every observed resource stays as it is.
		pl.Composed.Keep(out.Resources, compose.RetireNone, func(n resource.Name) resource.Ready { return keptReady(pl, n) })
		machineTemplate, bootstrapTemplate = pl.Composed.InEffect()
		settled = false
	default:
		if err := emitCurrent(pl, out.Resources); err != nil {
			return compose.Output{}, err
		}
		if pl.Hold != nil {
			// Only the deployment and its health check wait: they stay as
			// observed, on the templates keepReferenced keeps, or are not
			// composed at all for a new pool.
			for _, n := range []resource.Name{read.ResourceMachineDeployment, read.ResourceMachineHealthCheck} {
				delete(out.Resources, n)
				if u, ok := pl.Composed.Resources[n]; ok {
					out.Resources[n] = compose.Kept(u, keptReady(pl, n))
				}
			}
			machineTemplate, bootstrapTemplate = pl.Composed.InEffect()
			settled = false
		}
		keepReferenced(pl, out.Resources)
		for _, d := range out.Resources {
			if d.Ready != resource.ReadyTrue {
				settled = false
			}
		}
	}
	if err := protectClones(pl, out.Resources, cfg.Usages); err != nil {
		return compose.Output{}, err
	}
	// Whatever the mode could not read stays, whichever rule left it out.
	pl.Composed.Keep(out.Resources, compose.RetireAll, func(n resource.Name) resource.Ready { return keptReady(pl, n) })
	// A held pool has no workers for the change it waits for: it must not be
	// reported Ready because what it composes is.
	out.NotReady = pl.Hold != nil
	out.Signals = signals(pl)

	st := status(pl, machineTemplate, bootstrapTemplate)
	out.Status = map[string]any{
		"image": st.Image, "template": st.Template, "bootstrapTemplate": st.BootstrapTemplate,
		"gate": st.Gate, "replicas": st.Replicas, "readyReplicas": st.ReadyReplicas,
	}
	out.Conditions = []compose.Condition{workerImageCondition(pl), pl.CloneHealth, CloneCapacityCondition(pl), pl.SupportMatrix, pl.Installer, renderingCondition(pl), readableCondition(pl)}
	if c, ok := joinCondition(pl); ok {
		out.Conditions = append(out.Conditions, c)
	}
	out.Results = results(pl, prev, machineTemplate)
	if !settled {
		out.TTL = cfg.InProgressTTL
	}
	return out, nil
}

// emitCurrent composes the current templates, deployment and health check.
func emitCurrent(pl decide.Plan, into map[resource.Name]*resource.DesiredComposed) error {
	// The templates come serialised from render, which names them.
	current := []struct {
		name    resource.Name
		obj     any
		desired *composed.Unstructured
	}{
		{name: read.MachineTemplateResource(pl.MachineTemplate.Name), desired: pl.MachineTemplate.Desired},
		{name: read.BootstrapTemplateResource(pl.BootstrapTemplate.Name), desired: pl.BootstrapTemplate.Desired},
		{name: read.ResourceMachineDeployment, obj: pl.MachineDeployment},
		{name: read.ResourceMachineHealthCheck, obj: pl.MachineHealthCheck},
	}
	if ca := render.FactoryCA(pl.Pool, pl.Shape); ca != nil {
		current = append(current, struct {
			name    resource.Name
			obj     any
			desired *composed.Unstructured
		}{name: read.ResourceFactoryCA, obj: ca})
	}
	for _, c := range current {
		if c.name != read.ResourceMachineDeployment && pl.Join != nil && pl.Join.Pinned != "" && c.name == read.BootstrapTemplateResource(pl.BootstrapTemplate.Name) {
			// Facts alone changed: the running template stays (kept as
			// observed by keepReferenced), the new one is not composed.
			continue
		}
		u := c.desired
		if u == nil {
			obj, err := clusterapi.InContract(c.obj, pl.ClusterAPI)
			if err != nil {
				return pool.Refused(pl.Pool.Ref(), fmt.Errorf("%s: %w", c.name, err))
			}
			if u, err = compose.ToDesired(obj, render.TemplateShape...); err != nil {
				return pool.Refused(pl.Pool.Ref(), fmt.Errorf("%s: %w", c.name, err))
			}
		}
		ready := resource.ReadyFalse
		if _, ok := pl.Composed.Resources[c.name]; ok {
			ready = resource.ReadyTrue
		}
		if c.name == read.ResourceMachineDeployment {
			ready = deploymentReady(pl.Composed.Deployment, pl.MachineDeployment.Spec.Replicas)
		}
		into[c.name] = &resource.DesiredComposed{Resource: u, Ready: ready}
	}
	return nil
}

// keepReferenced keeps every previous template a MachineSet or the observed
// MachineDeployment still points at: an old MachineSet needs its templates
// to scale down or remediate. The others retire, unless the deployment is
// unreadable and what the pool runs on is unknown. Usages are protectClones'.
func keepReferenced(pl decide.Plan, into map[resource.Name]*resource.DesiredComposed) {
	machine, bootstrap := map[string]bool{}, map[string]bool{}
	m, b := pl.Composed.InEffect()
	machine[m], bootstrap[b] = true, true
	for _, ms := range pl.Required.MachineSets {
		machine[ms.Spec.Template.Spec.InfrastructureRef.Name] = true
		if ref := ms.Spec.Template.Spec.Bootstrap.ConfigRef; ref != nil {
			bootstrap[ref.Name] = true
		}
	}
	unknown := pl.Composed.DeploymentUnreadable()
	retired := func(n resource.Name) bool {
		name := pl.Composed.Resources[n].GetName()
		switch {
		case strings.HasPrefix(string(n), read.PrefixMachineTemplate):
			return !unknown && !machine[name]
		case strings.HasPrefix(string(n), read.PrefixBootstrapTemplate):
			return !unknown && !bootstrap[name]
		}
		return true
	}
	pl.Composed.Keep(into, retired, func(n resource.Name) resource.Ready { return keptReady(pl, n) })
}

// keptReady is the readiness of a kept resource: a template or Usage once it
// exists, the MachineDeployment once its ready replicas reach its own count.
func keptReady(pl decide.Plan, n resource.Name) resource.Ready {
	if n == read.ResourceMachineDeployment {
		return deploymentReady(pl.Composed.Deployment, nil)
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
func status(pl decide.Plan, machineTemplate, bootstrapTemplate string) v1alpha1.NodePoolStatus {
	img := &v1alpha1.NodePoolImageStatus{NodePoolImage: v1alpha1.NodePoolImage{
		SchematicID:  pl.Image.SchematicID.Value,
		Version:      pl.Image.Version.Value,
		SourceType:   string(pl.Image.Source),
		StorageClass: pl.StorageClass.Name,
	}, Clones: CloneProgress(pl.Clones)}
	if pl.Image.Source == pool.SourceClone {
		img.Golden = pl.Image.GoldenRef()
	} else {
		img.ImageURL = pl.Image.URL
	}
	gate := &v1alpha1.Gate{State: decide.GateOpen, Reason: ReasonTemplateComposed, Message: openMessage(pl)}
	if pl.Hold != nil {
		gate = &v1alpha1.Gate{State: decide.GateHeld, Reason: pl.Hold.Reason, Message: pl.Hold.Message}
	}
	replicas, ready := int64(desiredReplicas(pl)), int64(pl.Composed.ReadyReplicas())
	return v1alpha1.NodePoolStatus{
		Image:             img,
		Template:          machineTemplate,
		BootstrapTemplate: bootstrapTemplate,
		Gate:              gate,
		Replicas:          &replicas,
		ReadyReplicas:     &ready,
	}
}

// results are the events of what changed since the observed status.
func results(pl decide.Plan, prev read.Previous, machineTemplate string) []compose.Result {
	var rs []compose.Result
	switch {
	case pl.Hold != nil && (prev.Gate.State != decide.GateHeld || prev.Gate.Reason != pl.Hold.Reason):
		rs = append(rs, compose.Result{Severity: compose.SeverityWarning, Reason: pl.Hold.Reason, Message: pl.Hold.Message})
	case pl.Hold == nil && prev.Gate.State == decide.GateHeld:
		rs = append(rs, compose.Result{Severity: compose.SeverityNormal, Reason: ReasonGateOpened, Message: fmt.Sprintf("Node pool %q: the held change is composed now (%s).", pl.Pool.Ref(), prev.Gate.Reason+" resolved")})
	}
	if pl.Hold == nil && prev.Template != machineTemplate {
		msg := fmt.Sprintf("Node pool %q: composing worker template %s.", pl.Pool.Ref(), machineTemplate)
		if prev.Template != "" {
			msg = fmt.Sprintf("Node pool %q: rolling from worker template %s to %s.", pl.Pool.Ref(), prev.Template, machineTemplate)
		}
		rs = append(rs, compose.Result{Severity: compose.SeverityNormal, Reason: ReasonTemplateChanged, Message: msg})
	}
	conds := []compose.Condition{pl.CloneHealth, pl.SupportMatrix, pl.Installer, renderingCondition(pl), readableCondition(pl)}
	if c, ok := joinCondition(pl); ok {
		conds = append(conds, c)
	}
	for _, c := range conds {
		r, ok := compose.Transition(c, prev.Conditions)
		if !ok {
			r, ok = CopyingResult(c, prev.Conditions)
		}
		if ok {
			rs = append(rs, r)
		}
	}
	return rs
}

// signals summarise the hold and the clone pre-flight's prediction for the
// metrics; a plan neither planned nor blocked was not predicted this call.
func signals(pl decide.Plan) compose.Signals {
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

// CloneProgress is status.image.clones.
func CloneProgress(clones []decide.CloneInFlight) []v1alpha1.CloneProgress {
	if len(clones) == 0 {
		return nil
	}
	out := make([]v1alpha1.CloneProgress, 0, len(clones))
	for _, c := range clones {
		out = append(out, v1alpha1.CloneProgress{DataVolume: c.DataVolume, Phase: c.Phase, Progress: c.Progress, Restarts: c.Restarts, ProgressSince: stall.FormatSince(c.Since)})
	}
	return out
}
