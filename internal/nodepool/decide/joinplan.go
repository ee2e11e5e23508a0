package decide

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/rules"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// hold is the Join mode's hold, or nil; the version guard comes first. The
// chart fails its render instead; a hold changes nothing either but lifts
// by itself once the facts appear or the control plane is upgraded, the
// normal order of a new cluster or of an upgrade made in one edit.
func JoinHold(j *read.JoinPlan, p pool.Pool, s pool.Shape) *Hold {
	// A control plane version without a minor skips it, as in the chart.
	if cp, ok := rules.LeadingMinor(j.Facts.ControlPlaneVersion); j.Facts.ControlPlaneFound && ok {
		if v, ok := rules.ParseMinor(s.KubernetesVersion.Value); ok && v.Compare(cp) > 0 {
			return &Hold{Reason: ReasonControlPlaneBehind, Message: msgControlPlaneBehind(p, j.Refs, s.KubernetesVersion, j.Facts.ControlPlaneVersion)}
		}
	}
	if len(j.Facts.Missing) > 0 {
		return &Hold{Reason: ReasonJoinFactsMissing, Message: msgJoinFactsMissing(p, j.Facts.Missing, j.Facts.Invalid)}
	}
	if len(j.Facts.Invalid) > 0 {
		return &Hold{Reason: ReasonJoinFactsInvalid, Message: msgJoinFactsInvalid(p, j.Facts.Invalid)}
	}
	return nil
}

// PinFacts keeps a pool whose facts alone changed on its running
// TalosConfigTemplate: the name hashes the facts too, so a rotated Secret
// would roll every worker unasked. JoinFactsCurrent says which facts
// changed and how to roll (spec.bootstrap.factsRevision); any change that
// rolls the pool anyway takes the current facts.
func PinFacts(pl *Plan) {
	j := pl.Join
	machine, bootstrap := pl.Composed.InEffect()
	if bootstrap == "" || bootstrap == pl.BootstrapTemplate.Name || machine != pl.MachineTemplate.Name {
		return
	}
	if md := pl.Composed.Deployment; md == nil || md.Spec.Template.Spec.Version == nil || *md.Spec.Template.Spec.Version != pl.Shape.MachineVersion {
		return
	}
	u, ok := pl.Composed.Resources[read.BootstrapTemplateResource(bootstrap)]
	if !ok || u.GetAnnotations()[pool.AnnJoinBase] != pl.BootstrapTemplate.Annotations[pool.AnnJoinBase] {
		return
	}
	// The deployment then points at the pinned config (Plan.DeploymentRefs).
	PinOn(j, bootstrap, u)
}

func MsgJoinFactsChanged(p pool.Pool, pinned string, changed []string, revision int64) string {
	what := "the cluster's join facts"
	if len(changed) > 0 {
		what = strings.Join(changed, "; ")
	}
	return fmt.Sprintf("Node pool %q: %s changed since its running TalosConfigTemplate %s was built. A change of facts alone does not roll the workers, so the pool stays on %s, and new workers (scale-up, remediation) still get the old facts, which may keep them from joining. To roll the pool onto the current facts, set spec.bootstrap.factsRevision to %d; any other change that rolls the pool takes them too.",
		p.Ref(), what, pinned, pinned, revision+1)
}

// PinOn pins the pool's Join config on the running bootstrap template u and
// names the facts that changed since it was built.
func PinOn(j *read.JoinPlan, bootstrap string, u *composed.Unstructured) {
	j.Pinned = bootstrap
	was := talosconfig.MachineConfig{}
	if data, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "data"); data != "" {
		// An unreadable document names no fact; the condition still says
		// that the facts changed.
		_ = yaml.Unmarshal([]byte(data), &was)
	}
	j.Changed = read.ChangedFacts(j.Refs, was.Facts(), j.Facts.JoinFacts)
}
