package nodepool

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; CAPI v1.11 still serves it.

	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/labels"
)

// What one call of a pool reads, and why (issue 14: ask for less).
//
// Crossplane v2.2.0 sends every required resource whole, managedFields
// included (its cached client has no transform; cmd/crossplane/core/core.go),
// and the function refuses a request above --max-recv-message-size. A worker
// DataVolume as CDI v1.65.0 leaves it weighs ~6 KB (two clone tokens,
// managedFields; internal/fixture/testdata/cdi), so reading every worker on
// every call stopped a pool of ~340 workers from reconciling at all. Each
// requirement is therefore asked for only when a decision of this call
// reads it, and that is decided from the composite's spec, its previous
// status and the observed composed resources alone: requirements are the
// same on the first and the second call of a reconcile, which therefore
// settles in two calls.

// reads is what this call asks Crossplane for beyond what every call reads
// (the pool's MachineSets, its instance type, a Join pool's facts).
type reads struct {
	// Clone: the golden DataVolume and PVC, the StorageClasses, CDI's
	// StorageProfiles, VolumeSnapshotClasses, CDI and CDIConfig: what the
	// clone gates and the pre-flight decide a new clone template from, and
	// where today's default StorageClass comes from. With them, once the
	// golden PVC is known and only when its class does not say its CSI
	// driver, the PV it is bound to (goldenVolumeToRead, a chained
	// requirement).
	Clone bool
	// Grant: the catalogs' clone RBAC, for a deployment that does not run
	// the current clone template yet.
	Grant bool
	// Workers: the pool's worker DataVolumes, for clone health and for
	// whether the pool already cloned its golden (the gates).
	Workers bool
	// DiskClass: the claims of the pool's disks of this golden, for the
	// class its finished clone was bound on, when the class is not known
	// without the cluster.
	DiskClass bool
	// WorkerDisks is how many workers, one system disk each, the pool runs
	// or is about to (workerDisks), and TooManyWorkers says that their
	// disks were not read because that is more than
	// cloneHealth.maxWorkerDisks.
	WorkerDisks    int32
	TooManyWorkers bool
}

// readsInput is what planReads decides from.
type readsInput struct {
	Image image
	// DeclaredClass is spec.storageClass.
	DeclaredClass string
	// Observed is the pool's observed composed state.
	Observed composedState
	// Ceiling is how many workers the spec asks for at most: replicas, or
	// an autoscaled pool's maxReplicas.
	Ceiling int32
	// Desired is the machine template this call would compose, rendered
	// with the class known without reading the cluster; empty when that
	// class is today's default, which only the StorageClasses tell.
	Desired string
	// PreviousHealth is the CloneHealthy condition of the previous status.
	PreviousHealth compose.ObservedCondition
	HasPrevious    bool
	WaitForGrant   bool
	MaxWorkerDisks int32
}

// planReads decides what a call reads.
//   - A new clone template (one not composed yet, or one whose class is
//     today's default) is gated: Clone. A deployment that does not run the
//     current clone template yet waits for the grant: Grant.
//   - Worker disks are read while a clone template is gated or waits for
//     the grant (whether the pool already cloned its golden; and, when the
//     class is not known without the cluster, their claims, for the class
//     a finished clone was bound on: docs/platform.md's "class of its own
//     disks"), while the deployment is not settled (a
//     rollout, a scale, a replaced Machine: new disks are being cloned),
//     while the previous status does not report them healthy (so that a
//     problem clears), and on a pool's first call. A settled pool whose
//     disks were healthy when last read has no new disk to read: no disk is
//     made without a new Machine, and a new Machine unsettles the
//     deployment. Above MaxWorkerDisks they are never read: the request
//     would not fit.
func planReads(in readsInput) reads {
	rd := reads{WorkerDisks: workerDisks(in.Observed.Deployment, in.Ceiling)}
	if in.Image.Source == SourceClone {
		_, newTemplate := in.Observed.Resources[machineTemplateResource(in.Desired)]
		newTemplate = in.Desired == "" || !newTemplate
		rd.Clone = newTemplate
		running, _ := in.Observed.inEffect()
		rd.Grant = in.WaitForGrant && (newTemplate || running != in.Desired)
		rd.DiskClass = in.Desired == ""
	}
	healthy := in.HasPrevious && in.PreviousHealth.Status == string(compose.StatusTrue)
	forHealth := !healthy || !settled(in.Observed)
	rd.Workers = forHealth || rd.Clone || rd.Grant
	if rd.WorkerDisks > in.MaxWorkerDisks {
		// Whatever would read them does without: clone health reports
		// Unknown, the gates rely on the MachineSets alone.
		rd.Workers, rd.DiskClass, rd.TooManyWorkers = false, false, forHealth
	}
	return rd
}

// workerDisks bounds how many worker disks a pool has, one per Machine: the
// most of the Machines its deployment reports, the count it asks for and
// the spec's ceiling. It is known before the disks are read, so a pool
// whose deployment is missing or has not reported yet (a first call, a
// status lost) is bounded by its spec. A rollout can surge to twice this
// before the next call; the default cloneHealth.maxWorkerDisks leaves room
// for that under 4 MiB (docs/performance.md).
func workerDisks(md *clusterv1.MachineDeployment, ceiling int32) int32 {
	n := max(ceiling, 0)
	if md != nil {
		n = max(n, md.Status.Replicas)
		if md.Spec.Replicas != nil {
			n = max(n, *md.Spec.Replicas)
		}
	}
	return n
}

// settled reports a deployment that has converged: it observed its latest
// spec, and every Machine it has is up to date, ready and available, as
// many as it wants. The counters are CAPI's MachineDeployment status
// (v1beta1 view; on v1beta2 the deprecated v1beta1 counters CAPI v1.11
// still maintains). An unreadable or missing deployment is not settled.
func settled(cs composedState) bool {
	md := cs.Deployment
	if md == nil || cs.deploymentUnreadable() {
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

// templateClone is what a composed clone template says of its disks.
type templateClone struct {
	// Golden is "namespace/name" of the golden it clones.
	Golden string
	// Class is the StorageClass its disk template names; empty when none.
	Class string
}

// observedClone reads the clone source and class of the observed machine
// template named name; ok is false when it is not composed or not a clone
// template.
func (cs composedState) observedClone(name string) (templateClone, bool) {
	u, found := cs.Resources[machineTemplateResource(name)]
	if !found || name == "" {
		return templateClone{}, false
	}
	ns, golden, ok := cloneSource(u)
	if !ok {
		return templateClone{}, false
	}
	tc := templateClone{Golden: labels.GoldenRef(ns, golden)}
	dvts, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates")
	for _, d := range dvts {
		m, isMap := d.(map[string]any)
		if !isMap {
			continue
		}
		if n, _, _ := unstructured.NestedString(m, "metadata", "name"); n != diskTemplateName {
			continue
		}
		tc.Class, _, _ = unstructured.NestedString(m, "spec", "storage", "storageClassName")
	}
	return tc, true
}

// runningClass is the class of the clone template the deployment runs,
// when it clones img's golden: the class the pool's disks of this golden
// are made on. The pool stays on it when it declares none, so that moving
// the default StorageClass never rolls a pool that changed nothing.
func (cs composedState) runningClass(img image) (class, bool) {
	running, _ := cs.inEffect()
	tc, ok := cs.observedClone(running)
	if !ok || tc.Golden != img.GoldenNamespace+"/"+img.GoldenName || tc.Class == "" {
		return class{}, false
	}
	return class{Name: tc.Class, From: fmt.Sprintf("the class template %s, which the pool runs, clones onto", running)}, true
}

// clonedByMachineSets reports a pool that already has a finished clone of
// img's golden: one of its MachineSets runs a template that clones it and
// has a ready Machine. KubeVirt's VM controller starts a VM only once
// handleDataVolumes reports its DataVolumes ready, else it logs "Waiting on
// DataVolumes to be ready" (kubevirt pkg/virt-controller/watch/vm/vm.go);
// a WaitForFirstConsumer disk counts as ready there, but its Node cannot be
// ready before the disk is populated and the VM boots from it. So a ready
// Machine booted from a finished clone. This replaces reading every worker
// DataVolume for a Succeeded one (issue 14), which a large pool cannot
// afford on every call.
func (cs composedState) clonedByMachineSets(img image, sets []clusterv1.MachineSet) bool {
	golden := img.GoldenRef()
	for _, ms := range sets {
		if ms.Status.ReadyReplicas < 1 {
			continue
		}
		if tc, ok := cs.observedClone(ms.Spec.Template.Spec.InfrastructureRef.Name); ok && tc.Golden == golden {
			return true
		}
	}
	return false
}

// ceiling is the most workers a pool's spec asks for.
func ceiling(s shape) int32 {
	if s.Scaling.Autoscaled {
		return max(s.Scaling.Max, s.Scaling.Min)
	}
	return s.Replicas
}
