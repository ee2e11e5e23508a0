package nodepool

import (
	"fmt"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/required"
	"github.com/cozystack/function-worker-image/internal/rules"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// AnnJoinBase is the hash of a Join TalosConfigTemplate's spec without the
// facts (joinBase), which tells a change of facts alone from one of the pool.
const AnnJoinBase = labels.Prefix + "join-base"

// ConditionJoinFactsCurrent says whether a Join pool's running worker config
// carries the cluster's current facts.
const ConditionJoinFactsCurrent = "JoinFactsCurrent"

// Reasons of the Join mode: the holds, and JoinFactsCurrent's.
const (
	ReasonJoinFactsMissing   = "JoinFactsMissing"
	ReasonJoinFactsInvalid   = "JoinFactsInvalid"
	ReasonControlPlaneBehind = "ControlPlaneBehind"
	ReasonJoinFactsCurrent   = "FactsCurrent"
	ReasonJoinFactsChanged   = "JoinFactsChanged"
)

// joinPlan is what the Join mode read and decided.
type joinPlan struct {
	Refs     joinRefs
	Config   config.Join
	Facts    joinFacts
	Revision int64
	// Pinned is the running TalosConfigTemplate the deployment stays on
	// while only the facts changed; empty otherwise.
	Pinned string
	// Changed names the facts that changed since the pinned template.
	Changed []string
}

// readJoin reads the Join mode's facts; nil for a Generate pool.
func readJoin(p pool, spec v1alpha1.NodePoolSpec, cfg config.Config, got required.Resolved) *joinPlan {
	if v1alpha1.BootstrapModeOf(spec.Bootstrap) != v1alpha1.BootstrapJoin {
		return nil
	}
	refs := joinRefsOf(p, cfg.Join)
	return &joinPlan{Refs: refs, Config: cfg.Join, Facts: readJoinFacts(refs, got), Revision: spec.Bootstrap.FactsRevision}
}

// bootstrapSpec turns a Generate spec into the Join one (generateType none,
// the worker config as data, the same patches) and its base hash.
func (j *joinPlan) bootstrapSpec(spec talosconfig.TalosConfigSpec, release string) (talosconfig.TalosConfigSpec, string, error) {
	spec.GenerateType = talosconfig.GenerateTypeNone
	base := spec
	var err error
	if base.Data, err = talosconfig.JoinConfig(j.Refs.cluster(), j.Config, talosconfig.PlaceholderFacts(), release).Encode(); err != nil {
		return spec, "", err
	}
	hash, err := joinBase(base, j.Revision)
	if err != nil {
		return spec, "", err
	}
	if spec.Data, err = talosconfig.JoinConfig(j.Refs.cluster(), j.Config, j.Facts.JoinFacts, release).Encode(); err != nil {
		return spec, "", err
	}
	return spec, hash, nil
}

// hold is the Join mode's hold, or nil; the version guard comes first. The
// chart fails its render instead; a hold changes nothing either but lifts
// by itself once the facts appear or the control plane is upgraded, the
// normal order of a new cluster or of an upgrade made in one edit.
func (j *joinPlan) hold(p pool, s shape) *hold {
	// A control plane version without a minor skips it, as in the chart.
	if cp, ok := rules.LeadingMinor(j.Facts.ControlPlaneVersion); j.Facts.ControlPlaneFound && ok {
		if v, ok := rules.ParseMinor(s.KubernetesVersion.Value); ok && v.Compare(cp) > 0 {
			return &hold{Reason: ReasonControlPlaneBehind, Message: msgControlPlaneBehind(p, j.Refs, s.KubernetesVersion, j.Facts.ControlPlaneVersion)}
		}
	}
	if len(j.Facts.Missing) > 0 {
		return &hold{Reason: ReasonJoinFactsMissing, Message: msgJoinFactsMissing(p, j.Facts.Missing, j.Facts.Invalid)}
	}
	if len(j.Facts.Invalid) > 0 {
		return &hold{Reason: ReasonJoinFactsInvalid, Message: msgJoinFactsInvalid(p, j.Facts.Invalid)}
	}
	return nil
}

// pinFacts keeps a pool whose facts alone changed on its running
// TalosConfigTemplate: the name hashes the facts too, so a rotated Secret
// would roll every worker unasked. JoinFactsCurrent says which facts
// changed and how to roll (spec.bootstrap.factsRevision); any change that
// rolls the pool anyway takes the current facts.
func (pl *plan) pinFacts() {
	j := pl.Join
	machine, bootstrap := pl.Observed.inEffect()
	if bootstrap == "" || bootstrap == pl.BootstrapTemplate.Name || machine != pl.MachineTemplate.Name {
		return
	}
	if md := pl.Observed.Deployment; md == nil || md.Spec.Template.Spec.Version == nil || *md.Spec.Template.Spec.Version != pl.Shape.MachineVersion {
		return
	}
	u, ok := pl.Observed.Resources[bootstrapTemplateResource(bootstrap)]
	if !ok || u.GetAnnotations()[AnnJoinBase] != pl.BootstrapTemplate.Annotations[AnnJoinBase] {
		return
	}
	j.pinOn(bootstrap, u)
	// Only the bootstrap reference moves back, or an autoscaled pool would
	// lose what decideWorkers gave it (autoscaler bounds, role labels).
	pl.repoint(machine, bootstrap)
}

// repoint points the planned MachineDeployment at other templates and
// changes nothing else of what decideWorkers gave it.
func (pl *plan) repoint(machine, bootstrap string) {
	md := pl.MachineDeployment.DeepCopy()
	md.Spec.Template.Spec.InfrastructureRef.Name = machine
	ref := *md.Spec.Template.Spec.Bootstrap.ConfigRef
	ref.Name = bootstrap
	md.Spec.Template.Spec.Bootstrap.ConfigRef = &ref
	pl.MachineDeployment = md
}

// bootstrapName is the TalosConfigTemplate the deployment points at.
func (pl plan) bootstrapName() string {
	if pl.Join != nil && pl.Join.Pinned != "" {
		return pl.Join.Pinned
	}
	return pl.BootstrapTemplate.Name
}

// joinCondition is JoinFactsCurrent, for a Join pool that is not held (a
// held one says why in WorkerImageReady); none otherwise.
func (pl plan) joinCondition() (compose.Condition, bool) {
	if pl.Join == nil || pl.Hold != nil {
		return compose.Condition{}, false
	}
	if pl.Join.Pinned != "" {
		return compose.Condition{Type: ConditionJoinFactsCurrent, Status: compose.StatusFalse, Reason: ReasonJoinFactsChanged,
			Message: msgJoinFactsChanged(pl.Pool, pl.Join.Pinned, pl.Join.Changed, pl.Join.Revision)}, true
	}
	return compose.Condition{Type: ConditionJoinFactsCurrent, Status: compose.StatusTrue, Reason: ReasonJoinFactsCurrent,
		Message: fmt.Sprintf("Node pool %q runs TalosConfigTemplate %s, built from cluster %q's current join facts.", pl.Pool.Ref(), pl.BootstrapTemplate.Name, pl.Pool.Cluster)}, true
}
