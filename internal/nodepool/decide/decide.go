package decide

import (
	"time"

	"github.com/crossplane/function-sdk-go/resource/composite"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/clonerbac"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/matrix"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/nodepool/render"
)

// Input is what a call decides from: the pool as it asks (decoded once, in
// Prepare) and the current state, read once.
type Input struct {
	Config    config.Config
	Composite *composite.Unstructured
	Now       time.Time

	Pool  pool.Pool
	Spec  v1alpha1.NodePoolSpec
	Image pool.Image
	// Shape is the resolved shape, without its installer repository
	// (Decide resolves it: it can fail, and only Compose reports that).
	Shape pool.Shape
	// Ask is the spec's part of the templates' asks (render.AskSpecOf).
	Ask render.AskSpec
	// Known is the next template's class when known without the cluster
	// (declared, or the one the pool runs on); Desired is that template,
	// as Prepare rendered it to decide what to read.
	Known   *pool.Class
	Desired *Rendered
	// Choice is the golden of the pool's architecture (read.ChooseGoldenOf).
	Choice read.GoldenChoice

	// The current state: what the pool composed, what it last reported,
	// what this call reads and what it read.
	Composed read.Composed
	Previous read.Previous
	Reads    read.Reads
	Required read.Required
	// Join is the Join mode's facts, nil for a Generate pool; Existing the
	// MachineDeployment of the pool's name another tool made, nil when
	// there is none to adopt.
	Join     *read.JoinPlan
	Existing *read.Existing
}

// Rendered is a machine template rendered for one class, so that Compose
// reuses what Requirements rendered.
type Rendered struct {
	Class    string
	Template render.MachineTemplate
	Err      error
}

// Decide is every decision of one call, in the order that wins, as Cluster
// API's topology controller computes the desired state from the current
// one (internal/controllers/topology/cluster/desired_state.go, v1.11.4,
// computeDesiredState). Each step is one call; a later step reads what the
// earlier ones decided and never rewrites it. An error is a spec error and
// fatal.
func Decide(in Input) (Plan, error) {
	pl := Plan{
		Pool: in.Pool, Image: in.Image, Shape: in.Shape, Composed: in.Composed, Required: in.Required, Join: in.Join,
		ClusterAPI: in.Config.ClusterAPIVersion, TemplateRevision: in.Spec.TemplateRevision,
	}
	var err error
	// 1. The installer the workers upgrade with: a factory that makes none
	// is fatal (installer.go).
	if pl.Shape.InstallerRepository, err = ResolveInstallerRepository(in.Pool, in.Spec, in.Config, in.Image); err != nil {
		return Plan{}, err
	}
	// 2. The Talos/Kubernetes support matrix: a known bad pairing is fatal
	// (supportmatrix.go).
	if pl.SupportMatrix, err = CheckSupportMatrix(in.Pool, matrix.FromConfig(in.Config), pl.Shape, in.Image); err != nil {
		return Plan{}, err
	}
	pl.Installer = InstallerCondition(in.Pool, pl.Shape.InstallerRepository, in.Config.Platform, in.Image.Version.Value)
	// 3. The worker disks in flight, and since when each has not moved
	// (stall.go).
	pl.Clones = TrackClones(in.Required.WorkerDVs, in.Previous.Image.Clones, in.Now, in.Config.Stall)
	// 4. What the clone gates decide from: the golden, its class and the
	// pool's, the copy path the Input chose (gate.go, copy.go).
	gate := gateInputOf(in, pl.Shape)
	// 5. The StorageClass written into the disk template.
	pl.StorageClass = storageClassOf(pl.Shape, in.Image, gate)
	// 6. The disk's source: a copy from the golden on another class, else
	// a restore of the golden's snapshot where the class prefers it, else a
	// clone of its PVC (copy.go, snapshot.go). A copy reads the golden's PVC
	// where it is: CDI would first restore a snapshot on the golden's
	// driver (clone/planner.go planHostAssistedFromSnapshot).
	if pl.Copy = gate.Copy; pl.Copy == nil {
		pl.Snapshot = DecideSnapshot(in.Config, in.Image, pl.StorageClass.Name, in.Required)
	}
	// 7. The disk template: the running one when it records the pool's
	// ask, else this release's (templates.go).
	if pl.MachineTemplate, err = machineTemplateOf(in, pl.Shape, pl.StorageClass.Name, render.DiskSource{FromSnapshot: pl.Snapshot.Use, Copy: pl.Copy}); err != nil {
		return Plan{}, err
	}
	// 8. The node: its size, kubelet reservations and Talos config, kept
	// or rendered alike (templates.go).
	running, _ := in.Composed.InEffect()
	node, err := nodeOf(in, pl.Shape, pl.StorageClass.Name, pl.MachineTemplate.Name == running)
	if err != nil {
		return Plan{}, err
	}
	pl.BootstrapTemplate = node.Bootstrap
	// 9. The running templates an earlier rendering made (templates.go).
	noteKept(&pl, node.BootstrapKept)
	// 10. Adoption of a pool another tool made: its running templates in
	// place of this release's, or a hold (adopt.go).
	adoption, err := decideAdoption(&pl, in.Existing, in.Composite, in.Spec.TemplateRevision)
	if err != nil {
		return Plan{}, err
	}
	// 11. The hold: the first of the pool's holds that applies, with the
	// clone CDI is predicted to make (holds.go).
	pl.Hold, pl.ClonePlan = decideHold(in, pl, gate, adoption, node.SizeHold)
	// 12. Whether the pool's Usage asks the catalog for the clone grant
	// (usage's label, emit).
	pl.GrantRequest = in.Image.Source == pool.SourceClone && in.Config.WaitForCloneGrant && in.Reads.Grant &&
		!clonerbac.Allows(in.Required.CloneBindings, in.Required.CloneRoles, in.Image.GoldenNamespace, in.Pool.Namespace, in.Config.VMServiceAccount, in.Image.GoldenName)
	// 13. How the disks were cloned, and how the template the workers are
	// made from after this call makes them (health.go).
	pl.CloneHealth = CloneHealth(in.Pool, in.Image, in.Required.WorkerDVs, pl.Clones, in.Reads, in.Config.MaxWorkerDisks, in.Config.Stall, read.CopyOf(WorkersTemplate(pl)))
	// 14. A Join pool whose facts alone changed stays on its running
	// config (joinplan.go).
	if pl.Join != nil && pl.Hold == nil {
		PinFacts(&pl)
	}
	// 15. The clone budget and the published capacity bound what the
	// deployment asks for (budget.go, capacity.go).
	pl.Budget = DecideBudget(pl, in.Config, in.Reads, in.Now)
	// 16. The MachineDeployment on the templates decided, within the
	// budget, and its health check (render).
	machine, bootstrap := pl.DeploymentRefs()
	pl.MachineDeployment = render.Deployment(in.Pool, pl.Budget.Bounded(pl.Shape), machine, bootstrap, node.Capacity)
	pl.MachineHealthCheck = render.HealthCheck(in.Pool, pl.Shape.HealthCheck)
	return pl, nil
}
