package nodepool

import (
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; CAPI v1.11 still serves it.

	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/cdistate"
	"github.com/cozystack/function-worker-image/internal/cloneplan"
	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/matrix"
	"github.com/cozystack/function-worker-image/internal/required"
	"github.com/cozystack/function-worker-image/internal/storageclass"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// plan is everything decided for one reconcile, before anything is emitted.
type plan struct {
	Pool  pool
	Image image
	Shape shape
	// StorageClass is the class written into the disk template.
	StorageClass class

	MachineTemplate    machineTemplate
	BootstrapTemplate  bootstrapTemplate
	MachineDeployment  *clusterv1.MachineDeployment
	MachineHealthCheck *clusterv1.MachineHealthCheck
	// ClusterAPI is the contract version the deployment and health check
	// are written in (capi.go).
	ClusterAPI v1beta1.ClusterAPIVersion

	// Hold, when set, keeps every observed resource as it is and composes
	// nothing new.
	Hold *hold

	// ClonePlan is CDI's predicted clone of a new template's worker disks.
	ClonePlan cloneplan.Plan

	SupportMatrix compose.Condition
	CloneHealth   compose.Condition
	Installer     compose.Condition

	// Join is the Join bootstrap mode's facts and decisions; nil for a
	// Generate pool.
	Join *joinPlan

	// Observed is the pool's observed composed state; World the required
	// resources.
	Observed composedState
	World    world
}

// decide runs the decisions in order. An error is a spec error and fatal.
func decide(c *call, got required.Resolved, raw required.Raw) (plan, error) {
	r, p, spec, img := c.r, c.pool, c.spec, c.img
	s := c.shape
	var err error
	if s.InstallerRepository, err = resolveInstallerRepository(p, spec, r.Config, img); err != nil {
		return plan{}, err
	}
	sm, err := checkSupportMatrix(p, matrix.FromConfig(r.Config), s, img)
	if err != nil {
		return plan{}, err
	}

	pl := plan{
		Pool: p, Image: img, Shape: s, SupportMatrix: sm,
		Installer: installerCondition(p, s.InstallerRepository, r.Config.Platform, img.Version.Value),
		Observed:  c.obs, ClusterAPI: r.Config.ClusterAPIVersion,
		World: readWorld(p, img, s.InstanceType, got, raw, r.Config.ClusterAPIVersion, c.reads),
		Join:  readJoin(p, spec, r.Config, got),
	}
	w := pl.World
	pl.CloneHealth = cloneHealth(p, w.WorkerDVs, c.reads, r.Config.MaxWorkerDisks)

	var gate gateInput
	if img.Source == SourceClone {
		def := storageclass.Default(w.StorageClasses)
		clone := poolClone(p, img, w.WorkerDVs)
		gate = gateInput{
			Pool: p, Image: img, DiskSize: s.DiskSize,
			GoldenDV: w.GoldenDV, GoldenPVC: w.GoldenPVC, Golden: cdistate.Of(w.GoldenDV, w.GoldenPVC),
			// A ready MachineSet on a template of this golden, or (when the
			// disks were read) a finished clone among them.
			Cloned:      clone != nil || c.obs.clonedByMachineSets(img, w.MachineSets),
			PoolClass:   poolClassOf(c.known, clone, w.WorkerPVCs, def),
			GoldenClass: goldenClassOf(w.GoldenDV, w.GoldenPVC, def),
		}
		pl.StorageClass = gate.PoolClass
	} else if s.DeclaredClass != "" {
		// An HTTP import has no source class to match; the declared class,
		// or none (CDI's default at bind time), keeps the template a pure
		// function of the spec.
		pl.StorageClass = class{Name: s.DeclaredClass, From: "spec.storageClass"}
	}

	if d := c.desired; d != nil && d.Class == pl.StorageClass.Name {
		pl.MachineTemplate, err = d.Template, d.err
	} else {
		pl.MachineTemplate, err = renderMachineTemplate(p, img, s, pl.StorageClass.Name)
	}
	if err != nil {
		return plan{}, err
	}
	size, known := nodeSize(spec.PoolShape, s, w.Instancetype)
	reserved, sizeHold, err := resolveReservations(p, spec, s, size, known)
	if err != nil {
		return plan{}, err
	}
	nc := talosconfig.ResolveNode(spec.PoolShape, reserved)
	if pl.BootstrapTemplate, err = renderBootstrapTemplate(p, img, s, nc, pl.Join); err != nil {
		return plan{}, err
	}
	pl.MachineDeployment = renderMachineDeployment(p, s, pl.MachineTemplate.Name, pl.BootstrapTemplate.Name)
	pl.MachineDeployment.Spec.Template.Labels = roleLabels(pl.MachineDeployment.Spec.Template.Labels, s)
	clusterapi.ApplyScaling(pl.MachineDeployment, s.Scaling, clusterapi.WorkerCapacity(size, known, reserved, nc, spec.GPUs))
	pl.MachineHealthCheck = renderMachineHealthCheck(p, s.HealthCheck)

	// Only a new or changed disk template waits for its golden: one that is
	// already composed has nothing left to wait for.
	if _, composed := pl.Observed.Resources[machineTemplateResource(pl.MachineTemplate.Name)]; img.Source == SourceClone && !composed {
		pl.Hold = gateClone(gate)
		if pl.Hold == nil {
			pl.ClonePlan = predictClone(img, pl.StorageClass.Name, s.DiskSize, w)
			pl.Hold = gateOnClonePlan(preflightInput{
				Pool: p, Image: img, Class: pl.StorageClass.Name, AllowCopy: r.Config.AllowHostAssistedCopy,
				GoldenWaived: gate.Cloned && !gate.Golden.Ready(), Recheck: r.Config.InProgressTTL,
			}, pl.ClonePlan)
		}
	}
	if pl.Hold == nil {
		pl.Hold = sizeHold
	}
	// The grant is checked whether or not the template is composed yet: a
	// pool's first template is composed while its deployment waits. A
	// deployment that already runs the current template has been let
	// through; holding it would change nothing but the pool's readiness
	// (say, when the catalog's RoleBinding goes with the catalog).
	running, _ := pl.Observed.inEffect()
	if pl.Hold == nil && img.Source == SourceClone && r.Config.WaitForCloneGrant && running != pl.MachineTemplate.Name {
		pl.Hold = gateOnCloneGrant(p, img, r.Config.VMServiceAccount, w, gate.Cloned)
	}
	// The Join mode's holds (control plane guard, missing facts) hold
	// everything, so they win over a deployment-only one.
	if pl.Join != nil {
		if h := pl.Join.hold(p, s); h != nil && (pl.Hold == nil || pl.Hold.DeploymentOnly) {
			pl.Hold = h
		}
		if pl.Hold == nil {
			pl.pinFacts()
		}
	}
	return pl, nil
}
