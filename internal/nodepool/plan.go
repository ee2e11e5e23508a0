package nodepool

import (
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; CAPI v1.11 still serves it.

	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/cdistate"
	"github.com/cozystack/function-worker-image/internal/cloneplan"
	"github.com/cozystack/function-worker-image/internal/clonerbac"
	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/matrix"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/nodepool/render"
	"github.com/cozystack/function-worker-image/internal/required"
	"github.com/cozystack/function-worker-image/internal/storageclass"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// decide reads everything first, then decides in named steps, each
// returning its part of the plan, as Cluster API's topology controller reads
// the current state before it computes the desired one
// (internal/controllers/topology/cluster/current_state.go, getCurrentState).
// An error is a spec error and fatal.
func decidePool(c *call, got required.Resolved, raw required.Raw) (decide.Plan, error) {
	r, p, spec, img := c.r, c.pool, c.spec, c.img
	cur := read.Read(c.readInput(), got, raw)
	world, join := cur.World, cur.Join

	s := c.shape
	var err error
	if s.InstallerRepository, err = decide.ResolveInstallerRepository(p, spec, r.Config, img); err != nil {
		return decide.Plan{}, err
	}
	sm, err := decide.CheckSupportMatrix(p, matrix.FromConfig(r.Config), s, img)
	if err != nil {
		return decide.Plan{}, err
	}
	clones := decide.TrackClones(world.WorkerDVs, c.prev.Image.Clones, r.Now, r.Config.Stall)
	pl := decide.Plan{
		Pool: p, Image: img, Shape: s, SupportMatrix: sm,
		Installer: decide.InstallerCondition(p, s.InstallerRepository, r.Config.Platform, img.Version.Value),
		Observed:  c.obs, ClusterAPI: r.Config.ClusterAPIVersion, World: world, Join: join,
		Clones: clones,
	}
	gate := decideGate(c, s, world)
	pl.StorageClass = decideStorageClass(s, img, gate)
	// A copy reads the golden's PVC where it is: CDI would first restore a
	// snapshot on the golden's driver (clone/planner.go
	// planHostAssistedFromSnapshot), a second volume per worker.
	if pl.Copy = gate.Copy; pl.Copy == nil {
		pl.Snapshot = decide.DecideSnapshot(r.Config, img, pl.StorageClass.Name, world)
	}
	if pl.MachineTemplate, err = decideMachineTemplate(c, s, pl.StorageClass.Name, render.DiskSource{FromSnapshot: pl.Snapshot.Use, Copy: pl.Copy}); err != nil {
		return decide.Plan{}, err
	}
	w, err := decideWorkers(c, s, world, join, pl.StorageClass.Name, pl.MachineTemplate.Name)
	if err != nil {
		return decide.Plan{}, err
	}
	pl.BootstrapTemplate, pl.MachineDeployment, pl.MachineHealthCheck = w.Bootstrap, w.Deployment, w.HealthCheck
	pl.TemplateRevision = spec.TemplateRevision
	noteKept(&pl, w.BootstrapKept)
	adoptHold, err := pl.DecideAdoption(cur.Existing, r.Composite, spec.TemplateRevision)
	if err != nil {
		return decide.Plan{}, err
	}
	pl.Hold, pl.ClonePlan = decideHold(c, pl, gate, w.SizeHold)
	pl.GrantRequest = img.Source == pool.SourceClone && r.Config.WaitForCloneGrant && c.reads.Grant &&
		!clonerbac.Allows(world.CloneBindings, world.CloneRoles, img.GoldenNamespace, p.Namespace, r.Config.VMServiceAccount, img.GoldenName)
	if adoptHold != nil {
		// Nothing is composed: the existing pool runs on as it is.
		pl.Hold = adoptHold
	}
	// How the disks were cloned, and how the template the workers are made
	// from after this call makes them.
	pl.CloneHealth = decide.CloneHealth(p, img, world.WorkerDVs, clones, c.reads, r.Config.MaxWorkerDisks, r.Config.Stall, read.CopyOf(pl.WorkersTemplate()))
	if pl.Join != nil && pl.Hold == nil {
		pl.PinFacts()
	}
	pl.DecideBudget(r.Config, c.reads, r.Now)
	return pl, nil
}

// decideGate is what the clone gates decide a clone template from; zero on
// the HTTP path.
func decideGate(c *call, s pool.Shape, w read.World) decide.GateInput {
	p, img := c.pool, c.img
	if img.Source != pool.SourceClone {
		return decide.GateInput{}
	}
	def := storageclass.Default(w.StorageClasses)
	clone := decide.PoolClone(p, img, w.WorkerDVs)
	in := decide.GateInput{
		Pool: p, Image: img, DiskSize: s.DiskSize,
		GoldenDV: w.GoldenDV, GoldenPVC: w.GoldenPVC, Golden: cdistate.Of(w.GoldenDV, w.GoldenPVC),
		// A ready MachineSet on a template of this golden, or (when the
		// disks were read) a finished clone among them.
		Cloned:      clone != nil || c.obs.ClonedByMachineSets(img, w.MachineSets),
		PoolClass:   decide.PoolClassOf(c.known, clone, w.WorkerPVCs, def),
		GoldenClass: decide.GoldenClassOf(w.GoldenDV, w.GoldenPVC, def),
		Choice:      read.CheckedChoice(c.choice, w.GoldenDV),
	}
	in.Copy = decide.ChooseCopy(c.r.Config, img, in.Golden, in.PoolClass, in.GoldenClass)
	return in
}

// decideStorageClass is the class written into the disk template: the
// gate's pool class on the clone path. An HTTP import has no source class to
// match; the declared class, or none (CDI's default at bind time), keeps the
// template a pure function of the spec.
func decideStorageClass(s pool.Shape, img pool.Image, gate decide.GateInput) pool.Class {
	switch {
	case img.Source == pool.SourceClone:
		return gate.PoolClass
	case s.DeclaredClass != "":
		return pool.Class{Name: s.DeclaredClass, From: "spec.storageClass"}
	}
	return pool.Class{}
}

// decideMachineTemplate is the disk template for the class: the running one
// when it records what the pool asks for now (keptFor), else the one this
// release renders, reusing what Requirements decided when the class is the
// one it knew and the disk clones the golden's PVC, as Requirements
// renders it (it has read neither whether the class prefers snapshots nor
// the golden's class, which decides the copy path).
func decideMachineTemplate(c *call, s pool.Shape, storageClass string, src render.DiskSource) (render.MachineTemplate, error) {
	if d := c.desired; d != nil && d.Class == storageClass && src.ClonesPVC() {
		return d.Template, d.err
	}
	return machineTemplateFor(c, s, storageClass, src)
}

// machineTemplateFor keeps or renders the disk template on storageClass.
// A kept template is kept whatever its disk's source: which source a new
// template takes is no part of the pool's ask (snapshot.go, copy.go).
func machineTemplateFor(c *call, s pool.Shape, storageClass string, src render.DiskSource) (render.MachineTemplate, error) {
	ask, err := render.AskOf(c.ask, c.r.Config.Requested, storageClass, nil)
	if err != nil {
		return render.MachineTemplate{}, err
	}
	return machineTemplateOn(c, s, storageClass, ask, src)
}

// machineTemplateOn is machineTemplateFor with the pool's ask of the
// template on storageClass already hashed.
func machineTemplateOn(c *call, s pool.Shape, storageClass, ask string, src render.DiskSource) (render.MachineTemplate, error) {
	running, _ := c.obs.InEffect()
	if u := c.obs.KeptFor(read.MachineTemplateResource(running), ask); u != nil {
		return render.MachineTemplateFrom(u)
	}
	t, err := render.Machine(c.pool, c.img, s, storageClass, render.Rendering, src)
	if err != nil {
		return render.MachineTemplate{}, err
	}
	if u := c.obs.Unrecorded(read.MachineTemplateResource(running)); u != nil && u.GetName() != t.Name {
		kept, err := earlierMachineTemplate(c, s, storageClass, u, ask)
		if err != nil {
			return render.MachineTemplate{}, err
		}
		if kept != nil {
			return *kept, nil
		}
	}
	t.Desired = render.Stamped(t.Desired, ask)
	return t, nil
}

// earlierMachineTemplate keeps a running template that a release before
// ask records made, when an earlier rendering of the pool's current
// spec is that template (the name hashes the whole spec): the pool asked for
// nothing new, so it keeps it, recorded with the rendering that made it, and
// RenderingCurrent names it. nil when no earlier rendering makes it: the
// spec changed, and the pool rolls as it would have on any release. No
// earlier rendering restored a disk from a snapshot or asked for a copy.
func earlierMachineTemplate(c *call, s pool.Shape, storageClass string, running *composed.Unstructured, ask string) (*render.MachineTemplate, error) {
	for rendering := render.Rendering - 1; rendering >= render.FirstRendering; rendering-- {
		t, err := render.Machine(c.pool, c.img, s, storageClass, rendering, render.DiskSource{})
		if err != nil {
			return nil, err
		}
		if t.Name == running.GetName() {
			kept, err := render.MachineTemplateFrom(render.StampedAt(compose.AsObserved(running), ask, rendering))
			return &kept, err
		}
	}
	return nil, nil
}

// noteKept lists the kept templates an earlier rendering made, and checks a
// kept Join config's facts: they are not in the request (their revision is),
// so a kept config says which of them it predates, as pinFacts does.
func noteKept(pl *decide.Plan, bootstrapKept bool) {
	// A template this release rendered records this revision, so only a
	// kept one can be stale.
	if k, ok := decide.Stale(pool.KindKubevirtMachineTmpl, pl.MachineTemplate.Desired); ok {
		pl.Kept = append(pl.Kept, k)
	}
	_, bootstrap := pl.Observed.InEffect()
	if !bootstrapKept {
		return
	}
	if k, ok := decide.Stale(talosconfig.KindTalosConfigTemplate, pl.BootstrapTemplate.Desired); ok {
		pl.Kept = append(pl.Kept, k)
	}
	if pl.Join != nil {
		decide.PinOn(pl.Join, bootstrap, pl.BootstrapTemplate.Desired)
		if len(pl.Join.Changed) == 0 {
			pl.Join.Pinned = ""
		}
	}
}

// workers is what the pool's workers are built from beyond the disk
// template: their Talos config, the MachineDeployment and its health check,
// and the hold of a pool whose size is unknown.
type workers struct {
	Bootstrap   render.BootstrapTemplate
	Deployment  *clusterv1.MachineDeployment
	HealthCheck *clusterv1.MachineHealthCheck
	SizeHold    *decide.Hold
	// BootstrapKept: the running TalosConfigTemplate records the request.
	BootstrapKept bool
}

// decideWorkers sizes the node (kubelet reservations and the autoscaler's
// capacity from its instance type or resources), keeps the running Talos
// config when it records the pool's ask or renders it, and builds the
// Cluster API objects on both templates.
func decideWorkers(c *call, s pool.Shape, w read.World, join *read.JoinPlan, storageClass, machineTemplate string) (workers, error) {
	p, spec := c.pool, c.spec
	size, known := decide.NodeSize(s, w.Instancetype)
	reserved, sizeHold, err := decide.ResolveReservations(p, spec, s, size, known)
	if err != nil {
		return workers{}, err
	}
	nc := talosconfig.ResolveNode(spec.PoolShape, s.Labels, reserved)
	ask, err := render.AskOf(c.ask, c.r.Config.Requested, storageClass, &render.BootstrapFacts{Size: size, MachineVersion: s.MachineVersion})
	if err != nil {
		return workers{}, err
	}
	var bt render.BootstrapTemplate
	_, running := c.obs.InEffect()
	u := c.obs.KeptFor(read.BootstrapTemplateResource(running), ask)
	if u != nil {
		bt, err = render.BootstrapTemplateFrom(u)
	} else if bt, err = render.Bootstrap(p, c.img, s, nc, join); err == nil {
		bt.Desired = render.Stamped(bt.Desired, ask)
	}
	if err != nil {
		return workers{}, err
	}
	md := render.Deployment(p, s, machineTemplate, bt.Name)
	md.Spec.Template.Labels = render.MachineLabels(md.Spec.Template.Labels, s)
	// The autoscaler builds a node from scratch with every label the Node
	// will carry, whoever puts it there.
	onNode := nc
	onNode.Labels = render.WithLabels(nc.Labels, s.Labels.Machine)
	clusterapi.ApplyScaling(md, s.Scaling, clusterapi.WorkerCapacity(size, known, reserved, onNode, spec.GPUs))
	return workers{Bootstrap: bt, Deployment: md, HealthCheck: render.HealthCheck(p, s.HealthCheck), SizeHold: sizeHold, BootstrapKept: u != nil}, nil
}

// decideHold is what holds the pool back, the first that applies:
// KubeVirt's admission of the VM's architecture (multiarch.go), the
// clone gates and pre-flight of a new clone template (with the clone it
// predicts; a CSI clone on a node-local class last among them), an unknown
// node size, the clone grant, then the Join mode's holds, which hold
// everything and so win over a deployment-only one.
func decideHold(c *call, pl decide.Plan, gate decide.GateInput, sizeHold *decide.Hold) (*decide.Hold, cloneplan.Plan) {
	r, p, img, s, w := c.r, pl.Pool, pl.Image, pl.Shape, pl.World
	var h *decide.Hold
	var cp cloneplan.Plan
	// Only a new or changed disk template waits for its golden: one that is
	// already composed has nothing left to wait for.
	// An adopted template runs already, like a composed one.
	_, composed := pl.Observed.Resources[read.MachineTemplateResource(pl.MachineTemplate.Name)]
	if !composed && pl.Adopted == nil && c.reads.KubeVirt {
		// Before the golden: without KubeVirt's admission no VM runs,
		// whatever it clones (multiarch.go).
		h = decide.GateOnMultiArchitecture(p, img, w.KubeVirt)
	}
	if h == nil && img.Source == pool.SourceClone && !composed && pl.Adopted == nil {
		h = decide.GateClone(gate)
		if h == nil {
			h = decide.GateOnGoldenSnapshot(p, img, pl.Snapshot)
		}
		if h == nil {
			switch {
			case pl.Snapshot.Use:
				cp = decide.PredictSnapshotClone(img, pl.StorageClass.Name, s.DiskSize, w)
			case pl.Copy != nil:
				cp = decide.PredictCopy(img, pl.StorageClass.Name, s.DiskSize, w)
			default:
				cp = decide.PredictClone(img, pl.StorageClass.Name, s.DiskSize, w)
			}
			h = decide.GateOnClonePlan(decide.PreflightInput{
				Pool: p, Image: img, Class: pl.StorageClass.Name, AllowCopy: r.Config.AllowHostAssistedCopy, CopyChosen: pl.Copy != nil,
				GoldenWaived: gate.Cloned && !gate.Golden.Ready(), Recheck: r.Config.InProgressTTL,
				Placement: decide.PlacementOf(gate.GoldenClass.Name, pl.StorageClass.Name, w),
			}, cp)
		}
	}
	if h == nil {
		h = sizeHold
	}
	// The grant is checked whether or not the template is composed yet: a
	// pool's first template is composed while its deployment waits. A
	// deployment that already runs the current template has been let
	// through; holding it would change nothing but the pool's readiness
	// (say, when the catalog's RoleBinding goes with the catalog).
	running, _ := pl.Observed.InEffect()
	if h == nil && img.Source == pool.SourceClone && r.Config.WaitForCloneGrant && running != pl.MachineTemplate.Name && pl.Adopted == nil {
		h = decide.GateOnCloneGrant(p, img, r.Config.VMServiceAccount, w, gate.Cloned)
	}
	if pl.Join != nil {
		if jh := decide.JoinHold(pl.Join, p, s); jh != nil && (h == nil || h.DeploymentOnly) {
			h = jh
		}
	}
	return h, cp
}
