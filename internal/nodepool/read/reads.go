package read

import (
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; CAPI v1.11 still serves it.

	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
)

// What one call of a pool reads. Crossplane v2.2.0 sends required resources
// whole, managedFields included (cmd/crossplane/core/core.go: its cache has
// no transform), and the function refuses a request above
// --max-recv-message-size; a worker DataVolume as CDI v1.65.0 leaves it is
// ~6 KB (internal/fixture/testdata/cdi), so reading every worker stopped a
// ~340-worker pool. Each requirement is asked only when a decision reads it,
// decided from the spec, previous status and observed resources alone, so
// both calls of a reconcile ask the same and it settles in two.

// Reads is what this call asks Crossplane for beyond what every call reads
// (the pool's MachineSets, its instance type, a Join pool's facts).
type Reads struct {
	// Clone: the golden DataVolume and PVC, StorageClasses, StorageProfiles,
	// VolumeSnapshotClasses, CDI and CDIConfig, which the clone gates and
	// pre-flight read, and then maybe the golden's PV (goldenVolumeToRead).
	Clone bool
	// Grant: the catalogs' clone RBAC, for a deployment that does not run
	// the current clone template yet (the grant gate), and while the pool
	// may start clones (a scale-up, a replaced Machine): an unbound
	// namespace then asks the catalog again (GrantRequest).
	Grant bool
	// Workers: the pool's worker DataVolumes, for clone health and for
	// whether the pool already cloned its golden (the gates).
	Workers bool
	// DiskClass: the claims of the pool's disks of this golden, for the
	// class a finished clone was bound on.
	DiskClass bool
	// Budget: the claims CDI runs the golden's clones through, for the
	// clone budget (decide/budget.go), and the published storage capacity, the
	// golden's claim and the classes, for the capacity prediction
	// (decide/capacity.go), while the pool may start clones.
	Budget bool
	// KubeVirt: the KubeVirt CRs, for a pool whose VM names its
	// architecture (decide/multiarch.go); every other pool reads none.
	KubeVirt bool
	// WorkerDisks bounds the pool's worker disks (workerDisks); above
	// cloneHealth.maxWorkerDisks, TooManyWorkers, they are not read.
	WorkerDisks    int32
	TooManyWorkers bool
}

// ReadsInput is what planReads decides from.
type ReadsInput struct {
	Image pool.Image
	// DeclaredClass is spec.storageClass.
	DeclaredClass string
	// Composed is what the pool composed, as observed.
	Composed Composed
	// Ceiling is replicas, or an autoscaled pool's maxReplicas.
	Ceiling int32
	// Desired is the machine template on the class known without the
	// cluster; empty when only the StorageClasses tell the class.
	Desired string
	// Asked is true when the running template records another ask
	// than the pool's (askedAnew): what a new template would be made of is
	// read even where Desired is composed.
	Asked bool
	// PreviousHealth is the CloneHealthy condition of the previous status.
	PreviousHealth compose.ObservedCondition
	HasPrevious    bool
	WaitForGrant   bool
	MaxWorkerDisks int32
}

// PlanReads decides what a call reads: Clone for a new clone template (not
// composed, or on today's default class) or a ask the running template
// was not rendered for (Asked); Grant for a deployment not yet on
// the current clone template; DiskClass when the class is not known without
// the cluster (docs/platform.md's "class of its own disks"). Worker disks
// are read for Clone or Grant, and while the deployment is unsettled or the
// previous status not healthy: a disk is made only with a new Machine,
// which unsettles the deployment. Above MaxWorkerDisks the request would
// not fit.
func PlanReads(in ReadsInput) Reads {
	rd := Reads{WorkerDisks: WorkerDisks(in.Composed.Deployment, in.Ceiling)}
	// starting: the pool may start clones on this call, a new template, a
	// deployment not on it yet, a fixed pool asked to grow, or a deployment
	// not settled (a scale, a roll, a replaced Machine). Then the grant is
	// checked (an unbound namespace asks for it: GrantRequest), and what
	// bounds the clones is read: the pool's disks, the golden's running
	// clones and the published capacity (decide/budget.go, decide/capacity.go).
	starting := false
	if in.Image.Source == pool.SourceClone {
		_, newTemplate := in.Composed.Resources[MachineTemplateResource(in.Desired)]
		newTemplate = in.Desired == "" || !newTemplate
		rd.Clone = newTemplate || in.Asked
		running, _ := in.Composed.InEffect()
		rd.DiskClass = in.Desired == ""
		starting = newTemplate || running != in.Desired || growingPool(in.Composed.Deployment, in.Ceiling) || !Settled(in.Composed)
		rd.Grant = in.WaitForGrant && starting
		rd.Budget = starting
	}
	healthy := in.HasPrevious && in.PreviousHealth.Status == string(compose.StatusTrue)
	forHealth := !healthy || !Settled(in.Composed)
	rd.Workers = forHealth || starting
	if rd.WorkerDisks > in.MaxWorkerDisks {
		// Whatever would read them does without: clone health reports
		// Unknown, the gates rely on the MachineSets alone.
		rd.Workers, rd.DiskClass, rd.TooManyWorkers = false, false, forHealth
	}
	return rd
}

// growingPool reports a deployment with fewer replicas than the spec's
// ceiling, or none yet.
func growingPool(md *clusterv1.MachineDeployment, ceiling int32) bool {
	return md == nil || (md.Spec.Replicas != nil && *md.Spec.Replicas < ceiling)
}

// WorkerDisks bounds a pool's worker disks, one per Machine: the most of the
// deployment's reported Machines, its desired count and the spec's ceiling,
// so a deployment that has not reported is bounded by the spec. A rollout
// can surge to twice this before the next call (docs/performance.md).
func WorkerDisks(md *clusterv1.MachineDeployment, ceiling int32) int32 {
	n := max(ceiling, 0)
	if md != nil {
		n = max(n, md.Status.Replicas)
		if md.Spec.Replicas != nil {
			n = max(n, *md.Spec.Replicas)
		}
	}
	return n
}

// Settled reports a deployment that observed its latest spec and has as
// many Machines as it wants, all up to date, ready and available: CAPI's
// v1beta1 counters, which CAPI v1.11 still maintains on v1beta2.
func Settled(cs Composed) bool {
	md := cs.Deployment
	if md == nil || cs.DeploymentUnreadable() {
		return false
	}
	st := md.Status
	if st.ObservedGeneration < md.Generation {
		return false
	}
	if md.Spec.Replicas != nil && *md.Spec.Replicas != st.Replicas {
		return false
	}
	return st.UpdatedReplicas == st.Replicas && st.ReadyReplicas == st.Replicas && st.AvailableReplicas == st.Replicas
}

// Ceiling is the most workers a pool's spec asks for.
func Ceiling(s pool.Shape) int32 {
	if s.Scaling.Autoscaled {
		return max(s.Scaling.Max, s.Scaling.Min)
	}
	return s.Replicas
}
