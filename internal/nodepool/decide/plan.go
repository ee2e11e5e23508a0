package decide

import (
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; CAPI v1.11 still serves it.

	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/cloneplan"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/nodepool/render"
)

// Plan is everything decided for one reconcile, before anything is emitted.
type Plan struct {
	Pool  pool.Pool
	Image pool.Image
	Shape pool.Shape
	// StorageClass is the class written into the disk template.
	StorageClass pool.Class

	MachineTemplate    render.MachineTemplate
	BootstrapTemplate  render.BootstrapTemplate
	MachineDeployment  *clusterv1.MachineDeployment
	MachineHealthCheck *clusterv1.MachineHealthCheck
	// ClusterAPI is the contract version the deployment and health check
	// are written in (clusterapi).
	ClusterAPI v1beta1.ClusterAPIVersion

	// Hold, when set, keeps every observed resource as it is and composes
	// nothing new.
	Hold *Hold

	// Snapshot is whether a new clone template restores from the golden's
	// VolumeSnapshot (snapshot.go).
	Snapshot SnapshotDecision
	// Copy is the copy path a new clone template takes (copy.go): a copy of
	// the golden on another class, which the Input chose for the pool's.
	Copy *read.CopyPath
	// ClonePlan is CDI's predicted clone of a new template's worker disks.
	ClonePlan cloneplan.Plan
	// Budget is the clone budget's bound on the deployment (budget.go).
	Budget BudgetPlan
	// GrantRequest is true when the pool read the catalogs' clone RBAC and
	// its VM service account may not clone its golden: its Usage of the
	// golden asks the catalog for the grant (emit/usage.go).
	GrantRequest bool

	SupportMatrix compose.Condition
	CloneHealth   compose.Condition
	Installer     compose.Condition
	// Clones are the worker disks in a clone phase and since when each
	// has not moved (stall.go), for status.image.clones.
	Clones []CloneInFlight

	// Join is the Join bootstrap mode's facts and decisions; nil for a
	// Generate pool.
	Join *read.JoinPlan

	// Kept are the running templates kept for the pool's unchanged ask
	// in place of what this release renders (keepRequested);
	// TemplateRevision is the pool's spec.templateRevision.
	Kept             []KeptTemplate
	TemplateRevision int64
	// Adopted are the running templates of an existing pool another tool
	// made, composed as they are (decideAdoption).
	Adopted []KeptTemplate

	// Composed is what the pool composed; Required the required
	// resources.
	Composed read.Composed
	Required read.Required
}

// DeploymentRefs are the templates the MachineDeployment points at: the
// disk template decided, and the Talos config, or the running one a Join
// pool stays on while only its facts changed (PinFacts).
func (pl Plan) DeploymentRefs() (machine, bootstrap string) {
	return pl.MachineTemplate.Name, pl.BootstrapName()
}

// BootstrapName is the TalosConfigTemplate the deployment points at.
func (pl Plan) BootstrapName() string {
	if pl.Join != nil && pl.Join.Pinned != "" {
		return pl.Join.Pinned
	}
	return pl.BootstrapTemplate.Name
}

// KeptTemplate is a running template kept for the pool's unchanged ask
// although this release renders templates differently, or one adopted.
type KeptTemplate struct {
	Kind, Running, Rendered string
	// Revision is the RenderingRevision it was rendered by, 0 when another
	// tool made it.
	Revision int
}
