package nodepool

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/compose/composetest"
	"github.com/cozystack/function-worker-image/internal/defaults"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
)

// deploymentStatus sets the observed MachineDeployment's generation and
// status, as Cluster API reports them.
func deploymentStatus(generation, observedGeneration, replicas, updated, ready, available int64) func(resource.Name, *composed.Unstructured) {
	return func(n resource.Name, u *composed.Unstructured) {
		if n != read.ResourceMachineDeployment {
			return
		}
		u.SetGeneration(generation)
		_ = u.SetValue("status", map[string]any{
			"observedGeneration": observedGeneration, "replicas": replicas, "updatedReplicas": updated,
			"readyReplicas": ready, "availableReplicas": available,
		})
	}
}

func TestSettled(t *testing.T) {
	spec := map[string]any{"replicas": int64(3)}
	cases := map[string]struct {
		reason string
		status func(resource.Name, *composed.Unstructured)
		drop   bool
		want   bool
	}{
		"Converged":           {reason: "Every replica up to date, ready and available, the latest generation observed.", status: deploymentStatus(2, 2, 3, 3, 3, 3), want: true},
		"NewGenerationUnseen": {reason: "A spec Cluster API has not observed yet is a change in flight.", status: deploymentStatus(3, 2, 3, 3, 3, 3)},
		"RollingOut":          {reason: "Replicas not yet on the latest template are a rollout.", status: deploymentStatus(2, 2, 3, 1, 3, 3)},
		"Surged":              {reason: "More Machines than wanted is a surge.", status: deploymentStatus(2, 2, 4, 3, 4, 4)},
		"ScalingUp":           {reason: "Fewer Machines than the spec asks for is a scale-up.", status: deploymentStatus(2, 2, 2, 2, 2, 2)},
		"MachineNotReady":     {reason: "A Machine that is not ready (a replaced one booting) is not settled.", status: deploymentStatus(2, 2, 3, 3, 2, 2)},
		"NoStatusYet":         {reason: "A deployment Cluster API has not reported on is not settled.", status: func(resource.Name, *composed.Unstructured) {}},
		"NoDeployment":        {reason: "A pool without a deployment is not settled.", drop: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obs := composeOnce(t, spec, missing, tc.status)
			if tc.drop {
				delete(obs, read.ResourceMachineDeployment)
			}
			if diff := cmp.Diff(tc.want, read.Settled(read.ReadComposed(obs, ""))); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestPlanReads(t *testing.T) {
	builtinSpec := map[string]any{"osImage": builtin(), "replicas": int64(3)}
	settledMD := deploymentStatus(1, 1, 3, 3, 3, 3)
	rollingMD := deploymentStatus(1, 1, 3, 0, 3, 3)
	healthy := compose.ObservedCondition{Type: decide.ConditionCloneHealthy, Status: "True", Reason: "NoCloneProblems"}
	unhealthy := compose.ObservedCondition{Type: decide.ConditionCloneHealthy, Status: "False", Reason: "HostAssistedClone"}
	// A pool that runs its current clone template: what prepare renders.
	running := composeOnce(t, builtinSpec, succeeded, settledMD)
	kmt, _ := names(t, builtinSpec, succeeded)
	img := resolveOSImage(mustSpec(t, builtinSpec), testConfig(t))

	cases := map[string]struct {
		reason   string
		in       read.ReadsInput
		observed map[resource.Name]resource.ObservedComposed
		want     read.Reads
	}{
		"SettledHealthyCloneRunningItsTemplate": {
			reason:   "A settled pool on its current template, healthy when last read, reads nothing that grows or gates.",
			in:       read.ReadsInput{Image: img, Desired: kmt, PreviousHealth: healthy, HasPrevious: true, WaitForGrant: true, MaxWorkerDisks: 256, Ceiling: 3},
			observed: running,
			want:     read.Reads{WorkerDisks: 3},
		},
		"FirstCall": {
			reason: "A pool's first call gates its first template, waits for the grant and reads its disks (it has none).",
			in:     read.ReadsInput{Image: img, Desired: kmt, WaitForGrant: true, MaxWorkerDisks: 256, Ceiling: 3},
			want:   read.Reads{Clone: true, Grant: true, Workers: true, Budget: true, WorkerDisks: 3},
		},
		"ClassNotKnownWithoutTheCluster": {
			reason:   "When the class is not declared and not the running template's, the template is gated, and the claims of the pool's disks of this golden say which class a finished clone was bound on.",
			in:       read.ReadsInput{Image: img, PreviousHealth: healthy, HasPrevious: true, WaitForGrant: true, MaxWorkerDisks: 256, Ceiling: 3},
			observed: running,
			want:     read.Reads{Clone: true, Grant: true, Workers: true, DiskClass: true, Budget: true, WorkerDisks: 3},
		},
		"AskedAnewReadsWhatANewTemplateIsMadeOf": {
			reason:   "A request the running template was not rendered for, whose rendering is that very template (a templateRevision bump), reads what decides a new template's disk source (snapshot goldens); nothing else changes.",
			in:       read.ReadsInput{Image: img, Desired: kmt, Asked: true, PreviousHealth: healthy, HasPrevious: true, WaitForGrant: true, MaxWorkerDisks: 256, Ceiling: 3},
			observed: running,
			want:     read.Reads{Clone: true, WorkerDisks: 3},
		},
		"ChangedTemplateIsGated": {
			reason:   "A template not composed yet is gated (its disks say whether the pool already cloned) and the deployment waits for the grant.",
			in:       read.ReadsInput{Image: img, Desired: "demo-md0-0123456789", PreviousHealth: healthy, HasPrevious: true, WaitForGrant: true, MaxWorkerDisks: 256, Ceiling: 3},
			observed: running,
			want:     read.Reads{Clone: true, Grant: true, Workers: true, Budget: true, WorkerDisks: 3},
		},
		"GrantNotAwaited": {
			reason:   "With the grant not awaited, no clone RBAC is read.",
			in:       read.ReadsInput{Image: img, Desired: "demo-md0-0123456789", PreviousHealth: healthy, HasPrevious: true, MaxWorkerDisks: 256, Ceiling: 3},
			observed: running,
			want:     read.Reads{Clone: true, Workers: true, Budget: true, WorkerDisks: 3},
		},
		"TooLargeToReadWhileGating": {
			reason:   "A settled, healthy pool above the bound gates on its MachineSets alone and keeps its clone health.",
			in:       read.ReadsInput{Image: img, Desired: "demo-md0-0123456789", PreviousHealth: healthy, HasPrevious: true, WaitForGrant: true, MaxWorkerDisks: 2, Ceiling: 3},
			observed: running,
			want:     read.Reads{Clone: true, Grant: true, Budget: true, WorkerDisks: 3},
		},
		"RollingPoolReadsItsDisks": {
			reason:   "A rollout makes new disks: they are read for clone health, and the grant is checked (an unbound namespace asks again).",
			in:       read.ReadsInput{Image: img, Desired: kmt, PreviousHealth: healthy, HasPrevious: true, WaitForGrant: true, MaxWorkerDisks: 256, Ceiling: 3},
			observed: composeOnce(t, builtinSpec, succeeded, rollingMD),
			want:     read.Reads{Grant: true, Workers: true, Budget: true, WorkerDisks: 3},
		},
		"UnhealthyPoolReadsItsDisksUntilTheyClear": {
			reason:   "A pool reported unhealthy reads its disks, settled or not, so that the condition clears; settled, it starts no clone and reads nothing for the budget.",
			in:       read.ReadsInput{Image: img, Desired: kmt, PreviousHealth: unhealthy, HasPrevious: true, WaitForGrant: true, MaxWorkerDisks: 256, Ceiling: 3},
			observed: running,
			want:     read.Reads{Workers: true, WorkerDisks: 3},
		},
		"GrowingPoolReadsWhatItsClonesAreBoundedBy": {
			reason:   "A settled, healthy pool asked for more workers starts clones: its disks, the golden's running clones and the published capacity are read.",
			in:       read.ReadsInput{Image: img, Desired: kmt, PreviousHealth: healthy, HasPrevious: true, WaitForGrant: true, MaxWorkerDisks: 256, Ceiling: 5},
			observed: running,
			want:     read.Reads{Grant: true, Workers: true, Budget: true, WorkerDisks: 5},
		},
		"TooLargeToRead": {
			reason: "Above maxWorkerDisks the disks are never read: the request would not fit.",
			in:     read.ReadsInput{Image: img, Desired: kmt, WaitForGrant: true, MaxWorkerDisks: 256, Ceiling: 1000},
			want:   read.Reads{Clone: true, Grant: true, Budget: true, WorkerDisks: 1000, TooManyWorkers: true},
		},
		"HTTPPoolGatesNothing": {
			reason:   "An HTTP pool has no golden to gate on; its disks are read on its first call.",
			in:       read.ReadsInput{Image: pool.Image{Source: pool.SourceHTTP}, MaxWorkerDisks: 256, Ceiling: 3},
			observed: composeOnce(t, map[string]any{"replicas": int64(3)}, missing, settledMD),
			want:     read.Reads{Workers: true, WorkerDisks: 3},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.in.Composed = read.ReadComposed(tc.observed, "")
			if diff := cmp.Diff(tc.want, read.PlanReads(tc.in)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestWorkerDisksBound(t *testing.T) {
	if got := read.WorkerDisks(nil, 5); got != 5 {
		t.Errorf("without a deployment the spec's ceiling bounds the disks: got %d, want 5", got)
	}
	if got := defaults.MaxWorkerDisks; got != 256 {
		t.Errorf("cloneHealth.maxWorkerDisks defaults to %d; docs/performance.md sizes 256", got)
	}
}

// mustSpec is the validated spec of an XNodePool with spec.
func mustSpec(t *testing.T, spec map[string]any) v1alpha1.NodePoolSpec {
	t.Helper()
	_, s, _, err := pool.ReadPool(nodePoolXR(spec), testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A pool that declares no class, runs no template of its golden yet (its
// deployment was lost, say) and has a finished clone of the golden stays on
// the class that clone was bound on when the default moves (docs/platform.md:
// "the class of its own disks"), read off the claims of its
// disks of this golden, which the call asks for only then.
func TestPoolStaysOnItsClonedDiskClass(t *testing.T) {
	spec := map[string]any{"osImage": builtin()}
	w := succeeded // golden on replicated
	w.classes = []*unstructuredT{
		expandable(storageClassObj("replicated", "2025-01-01T00:00:00Z", nil)),
		expandable(storageClassObj("fast", "2026-06-01T00:00:00Z", map[string]any{"storageclass.kubevirt.io/is-default-virt-class": "true"})),
	}
	w.dvs = []*unstructuredT{workerDV("demo-md0-a-disk-system", "Succeeded", true)}
	w.pvcs = []*unstructuredT{workerPVC("demo-md0-a-disk-system", "replicated")}
	got := summarize(composetest.Run(Mode{}, request(t, nodePoolXR(spec), w, nil)).Output)
	if got.Gate != "Open/TemplateComposed" {
		t.Errorf("the pool should stay on its cloned disk's class and compose; gate %s", got.Gate)
	}

	// Without the disk, today's default (fast) is the pool's class, which
	// is not the golden's: held.
	w.dvs, w.pvcs = nil, nil
	if got := summarize(composetest.Run(Mode{}, request(t, nodePoolXR(spec), w, nil)).Output); got.Gate != "Held/StorageClassMismatch" {
		t.Errorf("without a cloned disk the pool lands on today's default and is held; gate %s", got.Gate)
	}
}
