package decide

import (
	"github.com/cozystack/function-worker-image/internal/cloneplan"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
)

// Hold is why a gate holds the change back. A nil *Hold is an open gate.
type Hold struct {
	Reason  string
	Message string
	// DeploymentOnly holds only the MachineDeployment: the new templates are
	// what makes the catalog grant the clone the deployment waits for.
	DeploymentOnly bool
}

// decideHold is what holds the pool back: the first of its holds that
// applies, in this order, which is the order that wins:
//  1. adoption: an existing pool another tool made would roll, or another
//     controller owns it (adopt.go); nothing is composed;
//  2. KubeVirt's admission of the VM's architecture (multiarch.go):
//     without it no VM runs, whatever it clones;
//  3. the clone gates of a new clone template: the golden's architecture,
//     readiness, class and size (gate.go);
//  4. the golden's snapshot, for a template restoring from it (snapshot.go);
//  5. the clone pre-flight: what CDI would do with the clone it is
//     predicted to make, a CSI clone on a node-local class last
//     (preflight.go);
//  6. an unknown node size (reservations.go);
//  7. the Join mode's holds, which hold everything (joinplan.go);
//  8. the clone grant, which holds the deployment alone (gate.go).
//
// Only a new or changed disk template waits for its golden (2-5): one that
// is composed, or adopted, runs already. The clone prediction is returned
// whenever the pre-flight looked at it.
func decideHold(in Input, pl Plan, gate GateInput, adoption, sizeHold *Hold) (*Hold, cloneplan.Plan) {
	p, img, s, w := pl.Pool, pl.Image, pl.Shape, pl.World
	_, composed := pl.Observed.Resources[read.MachineTemplateResource(pl.MachineTemplate.Name)]
	newTemplate := !composed && pl.Adopted == nil
	var arch, clone, snapshot, preflight, join, grant *Hold
	var cp cloneplan.Plan
	if newTemplate && in.Reads.KubeVirt {
		arch = GateOnMultiArchitecture(p, img, w.KubeVirt)
	}
	if arch == nil && newTemplate && img.Source == pool.SourceClone {
		clone = GateClone(gate)
		if clone == nil {
			snapshot = GateOnGoldenSnapshot(p, img, pl.Snapshot)
		}
		if clone == nil && snapshot == nil {
			cp = predict(pl, s, w)
			preflight = GateOnClonePlan(PreflightInput{
				Pool: p, Image: img, Class: pl.StorageClass.Name, AllowCopy: in.Config.AllowHostAssistedCopy, CopyChosen: pl.Copy != nil,
				GoldenWaived: gate.Cloned && !gate.Golden.Ready(), Recheck: in.Config.InProgressTTL,
				Placement: PlacementOf(gate.GoldenClass.Name, pl.StorageClass.Name, w),
			}, cp)
		}
	}
	if pl.Join != nil {
		join = JoinHold(pl.Join, p, s)
	}
	// The grant is checked whether or not the template is composed yet: a
	// pool's first template is composed while its deployment waits. A
	// deployment that already runs the current template has been let
	// through; holding it would change nothing but the pool's readiness
	// (say, when the catalog's RoleBinding goes with the catalog).
	running, _ := pl.Observed.InEffect()
	if img.Source == pool.SourceClone && in.Config.WaitForCloneGrant && running != pl.MachineTemplate.Name && pl.Adopted == nil {
		grant = GateOnCloneGrant(p, img, in.Config.VMServiceAccount, w, gate.Cloned)
	}
	return first(adoption, arch, clone, snapshot, preflight, sizeHold, join, grant), cp
}

// predict is the clone CDI is predicted to make of a new template's disk:
// a restore of the golden's snapshot, a copy the pool asked for, or a clone
// of the golden's PVC as CDI plans it.
func predict(pl Plan, s pool.Shape, w read.World) cloneplan.Plan {
	switch {
	case pl.Snapshot.Use:
		return PredictSnapshotClone(pl.Image, pl.StorageClass.Name, s.DiskSize, w)
	case pl.Copy != nil:
		return PredictCopy(pl.Image, pl.StorageClass.Name, s.DiskSize, w)
	}
	return PredictClone(pl.Image, pl.StorageClass.Name, s.DiskSize, w)
}

// first is the first hold that applies.
func first(holds ...*Hold) *Hold {
	for _, h := range holds {
		if h != nil {
			return h
		}
	}
	return nil
}
