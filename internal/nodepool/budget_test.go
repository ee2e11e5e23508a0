package nodepool

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; CAPI v1.11 still serves it.

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/clonebudget"
	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/defaults"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/emit"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/required"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// otherPoolHash is the pool label of another pool cloning the same golden.
var otherPoolHash = labels.PoolHash("tenant-b", "acme", "md0")

// scaledTo is the observed MachineDeployment asking for replicas Machines,
// all made on its templates (the latest generation observed), ready of
// them ready.
func scaledTo(replicas, ready int64) func(resource.Name, *composed.Unstructured) {
	return func(n resource.Name, u *composed.Unstructured) {
		if n != read.ResourceMachineDeployment {
			return
		}
		_ = u.SetValue("spec.replicas", replicas)
		u.SetGeneration(2)
		_ = u.SetValue("status", map[string]any{
			"observedGeneration": int64(2), "replicas": replicas, "updatedReplicas": replicas,
			"readyReplicas": ready, "availableReplicas": ready,
		})
	}
}

// budgetSet is a MachineSet of the pool asking for replicas Machines on
// kmt and tct, ready of them ready.
func budgetSet(name, kmt, tct string, replicas, ready int32) clusterv1.MachineSet {
	ms := clusterv1.MachineSet{}
	ms.Name, ms.Namespace = name, fxNamespace
	ms.Spec.Replicas = ptr.To(replicas)
	ms.Spec.Template.Spec.InfrastructureRef = corev1.ObjectReference{Kind: pool.KindKubevirtMachineTmpl, Name: kmt}
	ms.Spec.Template.Spec.Bootstrap.ConfigRef = &corev1.ObjectReference{Kind: talosconfig.KindTalosConfigTemplate, Name: tct}
	ms.Status.Replicas, ms.Status.ReadyReplicas, ms.Status.AvailableReplicas = replicas, ready, ready
	return ms
}

// budgetSetObj is budgetSet as Crossplane sends it.
func budgetSetObj(name, kmt, tct string, replicas, ready int64) *unstructuredT {
	ms := machineSet(name, kmt, tct)
	_ = unstructured.SetNestedField(ms.Object, replicas, "spec", "replicas")
	ms.Object["status"] = map[string]any{"replicas": replicas, "readyReplicas": ready, "availableReplicas": ready}
	return ms
}

// budgetDisk is a worker disk of the pool of the golden whose label is
// golden, in phase.
func budgetDisk(name string, phase cdiv1.DataVolumePhase, golden string) cdiv1.DataVolume {
	d := cdiv1.DataVolume{Status: cdiv1.DataVolumeStatus{Phase: phase}}
	d.Name, d.Namespace = name, fxNamespace
	d.Labels = map[string]string{labels.Pool: fxPoolHash, labels.Golden: golden}
	return d
}

// budgetDisks are n disks of the fixture golden in phase, named from prefix.
func budgetDisks(prefix string, n int, phase cdiv1.DataVolumePhase) []cdiv1.DataVolume {
	out := make([]cdiv1.DataVolume, 0, n)
	for i := range n {
		out = append(out, budgetDisk(fmt.Sprintf("%s-%d-disk-system", prefix, i), phase, fxGoldenHash))
	}
	return out
}

// cloneClaim is a claim in namespace with the fixture golden's label, the
// pool label poolHash (none when empty) and class, as CDI's clone planner
// makes one in the golden's namespace for a clone it runs (the target's
// labels copied).
func cloneClaim(namespace, name, poolHash, class string) *unstructuredT {
	l := map[string]any{labels.Golden: fxGoldenHash}
	if poolHash != "" {
		l[labels.Pool] = poolHash
	}
	spec := map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": "20Gi"}}}
	if class != "" {
		spec["storageClassName"] = class
	}
	return obj("v1", "PersistentVolumeClaim", namespace, name, map[string]any{"labels": l, "spec": spec, "status": map[string]any{"phase": "Pending"}})
}

// budgetNow is when the budget tests decide.
var budgetNow = time.Date(2026, time.January, 1, 12, 0, 0, 0, time.UTC)

// leftClaim is another pool's cloneClaim on class replicated in phase,
// made at created and, when deleted is not empty, deleted then (RFC 3339),
// as CDI leaves one behind.
func leftClaim(name, phase, created, deleted string) *unstructuredT {
	u := cloneClaim(defaults.GoldenNamespace, name, otherPoolHash, "replicated")
	u.Object["metadata"].(map[string]any)["creationTimestamp"] = created
	if deleted != "" {
		u.Object["metadata"].(map[string]any)["deletionTimestamp"] = deleted
	}
	u.Object["status"] = map[string]any{"phase": phase}
	return u
}

func TestOwnClones(t *testing.T) {
	spec := map[string]any{"osImage": builtin(), "replicas": int64(5)}
	kmt, tct := names(t, spec, succeeded)
	img := resolveOSImage(mustSpec(t, spec), testConfig(t))
	// The pool runs kmt, a clone template of the fixture golden, its
	// deployment asking for 5.
	running := composeOnce(t, spec, succeeded, scaledTo(5, 0))
	other := labels.GoldenHash(defaults.GoldenNamespace, "talos-worker-other-v1.12.0")

	cases := map[string]struct {
		reason   string
		observed map[resource.Name]resource.ObservedComposed
		sets     []clusterv1.MachineSet
		disks    []cdiv1.DataVolume
		// withoutDisks: the call did not read the worker disks.
		withoutDisks bool
		want         int32
	}{
		"DisksCloningCount": {
			reason:   "Each disk of the golden that is neither Succeeded nor Failed is a clone in flight.",
			observed: running,
			sets:     []clusterv1.MachineSet{budgetSet("ms", kmt, tct, 5, 0)},
			disks:    budgetDisks("a", 5, cdiv1.CloneInProgress),
			want:     5,
		},
		"PendingAndScheduledDisksCount": {
			reason:   "A disk CDI has not started cloning yet will clone: it counts.",
			observed: running,
			sets:     []clusterv1.MachineSet{budgetSet("ms", kmt, tct, 5, 0)},
			disks:    slices.Concat(budgetDisks("a", 2, cdiv1.Pending), budgetDisks("b", 3, cdiv1.CloneScheduled)),
			want:     5,
		},
		"SucceededDisksDoNotCount": {
			reason:   "A finished clone frees its part of the budget.",
			observed: running,
			sets:     []clusterv1.MachineSet{budgetSet("ms", kmt, tct, 5, 2)},
			disks:    slices.Concat(budgetDisks("a", 2, cdiv1.Succeeded), budgetDisks("b", 3, cdiv1.CloneInProgress)),
			want:     3,
		},
		"FailedDisksDoNotCount": {
			reason:   "A failed clone runs no more: it does not hold the budget (clone health reports it).",
			observed: running,
			sets:     []clusterv1.MachineSet{budgetSet("ms", kmt, tct, 5, 3)},
			disks:    slices.Concat(budgetDisks("a", 3, cdiv1.Succeeded), budgetDisks("b", 2, cdiv1.Failed)),
			want:     0,
		},
		"DisksOfAnotherGoldenDoNotCount": {
			reason:   "The budget is per golden: the pool's disks of another golden (an earlier one it moved off) are not this golden's clones.",
			observed: running,
			sets:     []clusterv1.MachineSet{budgetSet("ms", kmt, tct, 5, 5)},
			disks: slices.Concat(budgetDisks("a", 5, cdiv1.Succeeded),
				[]cdiv1.DataVolume{budgetDisk("old-0-disk-system", cdiv1.CloneInProgress, other), budgetDisk("old-1-disk-system", cdiv1.CloneInProgress, other)}),
			want: 0,
		},
		"MachinesWithoutADiskCount": {
			reason:   "A Machine on a template of the golden whose disk KubeVirt has not made yet will clone.",
			observed: running,
			sets:     []clusterv1.MachineSet{budgetSet("ms", kmt, tct, 5, 2)},
			disks:    budgetDisks("a", 2, cdiv1.Succeeded),
			want:     3,
		},
		"MachinesOnATemplateNotOfTheGoldenDoNotCount": {
			reason:   "Machines on a template that is not observed as a clone of the golden (an HTTP one, another tool's) clone nothing of it.",
			observed: running,
			sets:     []clusterv1.MachineSet{budgetSet("ms", kmt, tct, 5, 5), budgetSet("old", "demo-md0-http", tct, 3, 3)},
			disks:    budgetDisks("a", 5, cdiv1.Succeeded),
			want:     0,
		},
		"ScaleNotYetOnTheMachineSetsCounts": {
			reason:   "A deployment asking for more Machines than its MachineSets do has clones coming that nothing else shows yet.",
			observed: composeOnce(t, spec, succeeded, scaledTo(7, 0)),
			sets:     []clusterv1.MachineSet{budgetSet("ms", kmt, tct, 5, 5)},
			disks:    budgetDisks("a", 5, cdiv1.Succeeded),
			want:     2,
		},
		"WithoutDisksMachinesNotReadyCount": {
			reason:       "Without the disks read, a Machine not ready stands for its clone: a disk clones before its Node is Ready.",
			observed:     running,
			sets:         []clusterv1.MachineSet{budgetSet("ms", kmt, tct, 5, 2)},
			withoutDisks: true,
			want:         3,
		},
		"WithoutDisksAScaleNotYetOnTheMachineSetsCounts": {
			reason:       "Without the disks read, the Machines a deployment asks for beyond its MachineSets' count as well.",
			observed:     composeOnce(t, spec, succeeded, scaledTo(7, 0)),
			sets:         []clusterv1.MachineSet{budgetSet("ms", kmt, tct, 5, 4)},
			withoutDisks: true,
			want:         3,
		},
		"NewPoolHasNone": {
			reason: "Before its deployment exists a pool clones nothing.",
			want:   0,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pl := decide.Plan{Image: img, Composed: read.ReadComposed(tc.observed, ""), Required: read.Required{MachineSets: tc.sets, WorkerDVs: tc.disks}}
			if diff := cmp.Diff(tc.want, decide.OwnClones(pl, read.Reads{Workers: !tc.withoutDisks})); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestOthersClones(t *testing.T) {
	spec := map[string]any{"osImage": builtin()}
	img := resolveOSImage(mustSpec(t, spec), testConfig(t))
	ns := defaults.GoldenNamespace
	cases := map[string]struct {
		reason string
		claims []*unstructuredT
		class  string
		want   clonebudget.Claims
	}{
		"OtherPoolsClaimsOnTheClassCount": {
			reason: "Each claim CDI runs another pool's clone of the golden through, on the pool's class, is a clone in flight.",
			claims: []*unstructuredT{cloneClaim(ns, "tmp-pvc-1", otherPoolHash, "replicated"), cloneClaim(ns, "tmp-pvc-2", otherPoolHash, "replicated")},
			class:  "replicated",
			want:   clonebudget.Claims{Live: []string{"tmp-pvc-1", "tmp-pvc-2"}},
		},
		"OwnPoolsClaimIsNotCounted": {
			reason: "The pool's own clones are counted from its disks and Machines; its claims in the golden's namespace would count them twice.",
			claims: []*unstructuredT{cloneClaim(ns, "tmp-pvc-own", fxPoolHash, "replicated"), cloneClaim(ns, "tmp-pvc-1", otherPoolHash, "replicated")},
			class:  "replicated",
			want:   clonebudget.Claims{Live: []string{"tmp-pvc-1"}},
		},
		"GoldensOwnClaimIsNotCounted": {
			reason: "The golden's own claim carries no pool label: it is the source, not a clone.",
			claims: []*unstructuredT{cloneClaim(ns, fxGolden, "", "replicated")},
			class:  "replicated",
		},
		"ClaimOutsideTheGoldenNamespaceIsNotCounted": {
			reason: "A worker disk's claim in a tenant namespace is its pool's disk, not a clone in the golden's namespace (crossplane render ignores a requirement's namespace).",
			claims: []*unstructuredT{cloneClaim("tenant-b", "acme-md0-x-disk-system", otherPoolHash, "replicated")},
			class:  "replicated",
		},
		"ClaimOnAnotherClassIsNotCounted": {
			reason: "The budget is per class: a clone onto another class counts against that class's budget.",
			claims: []*unstructuredT{cloneClaim(ns, "tmp-pvc-1", otherPoolHash, "local"), cloneClaim(ns, "tmp-pvc-2", otherPoolHash, "replicated")},
			class:  "replicated",
			want:   clonebudget.Claims{Live: []string{"tmp-pvc-2"}},
		},
		"EveryClassWhenTheClassIsUnknown": {
			reason: "When the pool's class is unknown every clone of the golden counts, the budget erring on the safe side.",
			claims: []*unstructuredT{cloneClaim(ns, "tmp-pvc-1", otherPoolHash, "local"), cloneClaim(ns, "tmp-pvc-2", otherPoolHash, "replicated")},
			want:   clonebudget.Claims{Live: []string{"tmp-pvc-1", "tmp-pvc-2"}},
		},
		"ClaimsLeftBehindAreReadWithTheirTimes": {
			reason: "A claim's phase, creation and deletion come off the wire: Lost and Pending past the bound are leaked, one terminating past it stuck, a fresh Lost one counts.",
			claims: []*unstructuredT{
				leftClaim("tmp-pvc-lost", "Lost", "2025-06-01T00:00:00Z", ""),
				leftClaim("tmp-pvc-pending", "Pending", "2025-06-01T00:00:00Z", ""),
				leftClaim("tmp-pvc-terminating", "Lost", "2025-06-01T00:00:00Z", "2025-06-01T00:10:00Z"),
				leftClaim("tmp-pvc-rebinding", "Lost", "2026-01-01T11:58:00Z", ""),
			},
			class: "replicated",
			want:  clonebudget.Claims{Live: []string{"tmp-pvc-rebinding"}, Leaked: []string{"tmp-pvc-lost", "tmp-pvc-pending"}, Stuck: []string{"tmp-pvc-terminating"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := read.Input{Pool: fxPoolID, Image: img, Reads: read.Reads{Budget: true}}
			w := read.Read(&in, required.Resolved{}, required.Raw{read.ReqCloneClaims: wire(t, tc.claims...)}).Required
			got := clonebudget.CountClaims(w.CloneClaims, tc.class, budgetNow, defaults.LeakedClaimAfter)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestIsCloneClaim(t *testing.T) {
	claim := func(namespace string, l map[string]string) corev1.PersistentVolumeClaim {
		pvc := corev1.PersistentVolumeClaim{}
		pvc.Namespace, pvc.Labels = namespace, l
		return pvc
	}
	ns := defaults.GoldenNamespace
	cases := map[string]struct {
		reason string
		pvc    corev1.PersistentVolumeClaim
		want   bool
	}{
		"AnotherPoolsClaimInTheGoldenNamespace": {reason: "CDI's claim of another pool's clone is one.", pvc: claim(ns, map[string]string{labels.Pool: otherPoolHash}), want: true},
		"ThisPoolsClaim":                        {reason: "The pool's own clones are counted from its disks.", pvc: claim(ns, map[string]string{labels.Pool: fxPoolHash})},
		"NoPoolLabel":                           {reason: "The golden's own claim (or anything else) without a pool label is no clone of a pool's disk.", pvc: claim(ns, map[string]string{labels.Golden: fxGoldenHash})},
		"OtherNamespace":                        {reason: "A claim outside the golden's namespace is a worker disk, not CDI's claim of a clone.", pvc: claim("tenant-b", map[string]string{labels.Pool: otherPoolHash})},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, read.IsCloneClaim(tc.pvc, ns, fxPoolHash)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestPlanReadsForTheBudget: the budget's claims (and the disks it counts
// the pool's own clones from) are read while the pool may start clones, not
// by a pool that settled at its count.
func TestPlanReadsForTheBudget(t *testing.T) {
	spec := map[string]any{"osImage": builtin(), "replicas": int64(3)}
	kmt, _ := names(t, spec, succeeded)
	img := resolveOSImage(mustSpec(t, spec), testConfig(t))
	healthy := compose.ObservedCondition{Type: decide.ConditionCloneHealthy, Status: "True", Reason: "NoCloneProblems"}
	settledAt3 := composeOnce(t, spec, succeeded, scaledTo(3, 3))
	in := func(ceiling int32) read.ReadsInput {
		return read.ReadsInput{Image: img, Desired: kmt, PreviousHealth: healthy, HasPrevious: true, WaitForGrant: true, MaxWorkerDisks: 256, Ceiling: ceiling}
	}
	cases := map[string]struct {
		reason   string
		in       read.ReadsInput
		observed map[resource.Name]resource.ObservedComposed
		want     read.Reads
	}{
		"SettledPoolAtItsCount": {
			reason:   "A settled, healthy pool at the count its spec asks for starts no clone: nothing is read for the budget.",
			in:       in(3),
			observed: settledAt3,
			want:     read.Reads{WorkerDisks: 3},
		},
		"SettledPoolAskedToGrow": {
			reason:   "A settled, healthy pool whose spec asks for more workers starts clones: its disks and the golden's clone claims are read.",
			in:       in(5),
			observed: settledAt3,
			want:     read.Reads{Grant: true, Workers: true, Budget: true, WorkerDisks: 5},
		},
		"SettledPoolAskedToShrink": {
			reason:   "A scale-down starts no clone: nothing is read for the budget.",
			in:       in(2),
			observed: settledAt3,
			want:     read.Reads{WorkerDisks: 3},
		},
		"PoolWhoseMachinesAreNotReady": {
			reason:   "A deployment not settled (its last clones finishing) is read: its Machines may still be cloning.",
			in:       in(3),
			observed: composeOnce(t, spec, succeeded, scaledTo(3, 1)),
			want:     read.Reads{Grant: true, Workers: true, Budget: true, WorkerDisks: 3},
		},
		"NewPool": {
			reason: "A pool without a deployment grows from nothing.",
			in:     in(3),
			want:   read.Reads{Clone: true, Grant: true, Workers: true, Budget: true, WorkerDisks: 3},
		},
		"GrowingPoolTooLargeToReadItsDisks": {
			reason:   "Above maxWorkerDisks the disks are not read, but the golden's clone claims still are: the own clones are counted from the Machines not ready.",
			in:       func() read.ReadsInput { i := in(5); i.MaxWorkerDisks = 2; return i }(),
			observed: settledAt3,
			want:     read.Reads{Grant: true, Budget: true, WorkerDisks: 5},
		},
		"HTTPPoolAskedToGrow": {
			reason:   "An HTTP pool clones nothing: no clone claims are read for it.",
			in:       read.ReadsInput{Image: pool.Image{Source: pool.SourceHTTP}, PreviousHealth: healthy, HasPrevious: true, MaxWorkerDisks: 256, Ceiling: 5},
			observed: composeOnce(t, map[string]any{"replicas": int64(3)}, missing, scaledTo(3, 3)),
			want:     read.Reads{WorkerDisks: 5},
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

// budgetOutcome is what decideBudget decided and wrote on the deployment.
type budgetOutcome struct {
	Applies  bool
	InFlight clonebudget.InFlight
	Rolling  bool
	// Replicas, MaxSurge and MaxSize are what the emitted deployment says.
	Replicas *int32
	MaxSurge string
	MaxSize  string
	Waiting  int32
	// Reason is CloneCapacity's.
	Reason string
}

func outcomeOf(pl decide.Plan) budgetOutcome {
	o := budgetOutcome{
		Applies: pl.Budget.Applies, InFlight: pl.Budget.InFlight, Rolling: pl.Budget.Pool.Rolling, Waiting: pl.Budget.Waiting,
		Reason: emit.CloneCapacityCondition(pl).Reason,
	}
	if md := pl.MachineDeployment; md != nil {
		o.Replicas = md.Spec.Replicas
		if s := md.Spec.Strategy; s != nil && s.RollingUpdate != nil && s.RollingUpdate.MaxSurge != nil {
			o.MaxSurge = s.RollingUpdate.MaxSurge.String()
		}
		o.MaxSize = md.Annotations[clusterapi.AnnAutoscalerMaxSize]
	}
	return o
}

// budgetWorld is what a call of the pool is answered with: the fixture
// world (its worker disks among it) and CDI's clone claims in the golden
// namespace.
type budgetWorld struct {
	worldFixture
	claims []*unstructuredT
}

// decideWith runs prepare and decide for spec in w, against observed, with
// a clone budget of budget on every class.
func decideWith(t *testing.T, spec map[string]any, w budgetWorld, observed map[resource.Name]resource.ObservedComposed, budget int32) decide.Plan {
	t.Helper()
	return decideWithCapacity(t, spec, w, observed, budget, nil)
}

// cloningDisks are n worker disks of the fixture golden in phase, as
// Crossplane sends them.
func cloningDisks(prefix string, n int, phase string) []*unstructuredT {
	out := make([]*unstructuredT, 0, n)
	for i := range n {
		out = append(out, workerDV(fmt.Sprintf("%s-%d-disk-system", prefix, i), phase, true))
	}
	return out
}

func TestDecideBudget(t *testing.T) {
	fixed := func(n int64) map[string]any { return map[string]any{"osImage": builtin(), "replicas": n} }
	kmt, tct := names(t, fixed(30), succeeded)
	// The same pool on a bigger disk: another template of the same golden.
	oldSpec := map[string]any{"osImage": builtin(), "replicas": int64(30), "diskSize": "30Gi"}
	oldKmt, _ := names(t, oldSpec, succeeded)
	ns := defaults.GoldenNamespace
	twoOthers := []*unstructuredT{cloneClaim(ns, "tmp-pvc-1", otherPoolHash, "replicated"), cloneClaim(ns, "tmp-pvc-2", otherPoolHash, "replicated")}
	with := func(sets []*unstructuredT, disks []*unstructuredT, claims []*unstructuredT) budgetWorld {
		w := budgetWorld{worldFixture: succeeded, claims: claims}
		w.sets, w.dvs = sets, disks
		return w
	}
	autoscaled := map[string]any{"osImage": builtin(), "minReplicas": int64(2), "maxReplicas": int64(20)}
	akmt, atct := names(t, autoscaled, succeeded)

	cases := map[string]struct {
		reason   string
		spec     map[string]any
		world    budgetWorld
		observed map[resource.Name]resource.ObservedComposed
		budget   int32
		want     budgetOutcome
	}{
		"NewPoolGrowsByTheBudget": {
			reason: "A new pool of 30 with a budget of 5 asks for 5 Machines; its maxSurge goes to the budget less maxUnavailable.",
			spec:   fixed(30), world: with(nil, nil, nil), budget: 5,
			want: budgetOutcome{Applies: true, Replicas: ptr.To[int32](5), MaxSurge: "4", Waiting: 25, Reason: emit.ReasonWaitingForCloneBudget},
		},
		"OtherPoolsClonesShareTheBudget": {
			reason: "Two clones of another pool on the class leave 3 of the 5.",
			spec:   fixed(30), world: with(nil, nil, twoOthers), budget: 5,
			want: budgetOutcome{Applies: true, InFlight: clonebudget.InFlight{Others: 2}, Replicas: ptr.To[int32](3), MaxSurge: "4", Waiting: 27, Reason: emit.ReasonWaitingForCloneBudget},
		},
		"GrowingPoolIsNoRoll": {
			reason: "A pool growing on its template, Machines not ready yet, replaces none: it grows by what its own and the others' clones leave, and the others do not lower its surge.",
			spec:   fixed(30),
			world: with([]*unstructuredT{budgetSetObj("ms", kmt, tct, 5, 2)},
				slices.Concat(cloningDisks("a", 2, "Succeeded"), cloningDisks("b", 3, "CloneInProgress")), twoOthers[:1]),
			observed: composeOnce(t, fixed(30), succeeded, scaledTo(5, 2)),
			budget:   5,
			want:     budgetOutcome{Applies: true, InFlight: clonebudget.InFlight{Own: 3, Others: 1}, Replicas: ptr.To[int32](6), MaxSurge: "4", Waiting: 24, Reason: emit.ReasonWaitingForCloneBudget},
		},
		"PoolAtItsCountFinishingItsClonesIsNoRoll": {
			reason: "A pool at its count whose last disks still clone replaces none: nothing waits.",
			spec:   fixed(30),
			world: with([]*unstructuredT{budgetSetObj("ms", kmt, tct, 30, 25)},
				slices.Concat(cloningDisks("a", 25, "Succeeded"), cloningDisks("b", 5, "CloneInProgress")), nil),
			observed: composeOnce(t, fixed(30), succeeded, scaledTo(30, 25)),
			budget:   5,
			want:     budgetOutcome{Applies: true, InFlight: clonebudget.InFlight{Own: 5}, Replicas: ptr.To[int32](30), MaxSurge: "4", Reason: emit.ReasonWithinCloneBudget},
		},
		"RollToANewTemplate": {
			reason: "A deployment moved onto a new template rolls: maxSurge goes to the budget less the others' clones and maxUnavailable (10 - 2 - 1).",
			spec:   fixed(30),
			world: with([]*unstructuredT{budgetSetObj("old", oldKmt, tct, 30, 30)},
				cloningDisks("a", 30, "Succeeded"), twoOthers),
			observed: composeOnce(t, oldSpec, succeeded, scaledTo(30, 30)),
			budget:   10,
			want:     budgetOutcome{Applies: true, InFlight: clonebudget.InFlight{Others: 2}, Rolling: true, Replicas: ptr.To[int32](30), MaxSurge: "7", Reason: emit.ReasonWaitingForCloneBudget},
		},
		"RollUnderWay": {
			reason: "Once the deployment runs the new template, a MachineSet still asking for Machines on the old one is the roll going on.",
			spec:   fixed(30),
			world: with([]*unstructuredT{budgetSetObj("new", kmt, tct, 5, 0), budgetSetObj("old", oldKmt, tct, 26, 26)},
				slices.Concat(cloningDisks("a", 26, "Succeeded"), cloningDisks("b", 5, "CloneInProgress")), twoOthers),
			observed: composeOnce(t, fixed(30), succeeded, scaledTo(30, 26)),
			budget:   10,
			want:     budgetOutcome{Applies: true, InFlight: clonebudget.InFlight{Own: 5, Others: 2}, Rolling: true, Replicas: ptr.To[int32](30), MaxSurge: "7", Reason: emit.ReasonWaitingForCloneBudget},
		},
		"OldMachineSetScaledToZeroIsNoRoll": {
			reason: "A MachineSet on the old template scaled to zero has nothing left to replace.",
			spec:   fixed(30),
			world: with([]*unstructuredT{budgetSetObj("new", kmt, tct, 30, 28), budgetSetObj("old", oldKmt, tct, 0, 0)},
				slices.Concat(cloningDisks("a", 28, "Succeeded"), cloningDisks("b", 2, "CloneInProgress")), twoOthers),
			observed: composeOnce(t, fixed(30), succeeded, scaledTo(30, 28)),
			budget:   10,
			want:     budgetOutcome{Applies: true, InFlight: clonebudget.InFlight{Own: 2, Others: 2}, Replicas: ptr.To[int32](30), MaxSurge: "9", Reason: emit.ReasonWithinCloneBudget},
		},
		"PercentagesScaledAsClusterAPIDoes": {
			reason: "A rollout in percentages is scaled on the replicas as Cluster API does (surge 50% of 30 rounded up, 15; unavailable 25% rounded down, 7): maxSurge goes to 10 - 7.",
			spec:   map[string]any{"osImage": builtin(), "replicas": int64(30), "rollout": map[string]any{"maxSurge": "50%", "maxUnavailable": "25%"}},
			world:  with(nil, nil, nil), budget: 10,
			want: budgetOutcome{Applies: true, Replicas: ptr.To[int32](10), MaxSurge: "3", Waiting: 20, Reason: emit.ReasonWaitingForCloneBudget},
		},
		"MaxUnavailableAboveTheBudgetLeavesNoSurge": {
			reason: "maxUnavailable is the owner's and never lowered: at or above the budget, the roll surges by nothing and replaces by taking workers away.",
			spec:   map[string]any{"osImage": builtin(), "replicas": int64(30), "rollout": map[string]any{"maxUnavailable": "6"}},
			world:  with(nil, nil, nil), budget: 5,
			want: budgetOutcome{Applies: true, Replicas: ptr.To[int32](5), MaxSurge: "0", Waiting: 25, Reason: emit.ReasonWaitingForCloneBudget},
		},
		"ScaleDownIsTakenAtOnce": {
			reason: "The budget never holds back a scale-down, full or not.",
			spec:   fixed(4),
			world: with([]*unstructuredT{budgetSetObj("ms", kmt, tct, 10, 5)},
				slices.Concat(cloningDisks("a", 5, "Succeeded"), cloningDisks("b", 5, "CloneInProgress")), nil),
			observed: composeOnce(t, fixed(30), succeeded, scaledTo(10, 5)),
			budget:   5,
			want:     budgetOutcome{Applies: true, InFlight: clonebudget.InFlight{Own: 5}, Replicas: ptr.To[int32](4), MaxSurge: "4", Reason: emit.ReasonWithinCloneBudget},
		},
		"UnboundedClassKeepsTheSpec": {
			reason: "A budget of 0 bounds nothing: the deployment says what the spec says.",
			spec:   fixed(30), world: with(nil, nil, twoOthers), budget: 0,
			want: budgetOutcome{Applies: true, InFlight: clonebudget.InFlight{Others: 2}, Replicas: ptr.To[int32](30), MaxSurge: "30", Reason: emit.ReasonCloneBudgetUnbounded},
		},
		"AutoscaledMaxBounded": {
			reason: "An autoscaled pool keeps the autoscaler's replicas; its node-group max goes to current + room (6 + 5 - 3).",
			spec:   autoscaled,
			world: with([]*unstructuredT{budgetSetObj("ms", akmt, atct, 6, 3)},
				slices.Concat(cloningDisks("a", 3, "Succeeded"), cloningDisks("b", 3, "CloneInProgress")), nil),
			observed: composeOnce(t, autoscaled, succeeded, scaledTo(6, 3)),
			budget:   5,
			want:     budgetOutcome{Applies: true, InFlight: clonebudget.InFlight{Own: 3}, MaxSurge: "4", MaxSize: "8", Waiting: 12, Reason: emit.ReasonWithinCloneBudget},
		},
		"AutoscaledPoolWithAFullBudgetStaysWhereItIs": {
			reason: "With no room the node-group max is the current count: the autoscaler may not grow the pool.",
			spec:   autoscaled,
			world: with([]*unstructuredT{budgetSetObj("ms", akmt, atct, 6, 1)},
				slices.Concat(cloningDisks("a", 1, "Succeeded"), cloningDisks("b", 5, "CloneInProgress")), nil),
			observed: composeOnce(t, autoscaled, succeeded, scaledTo(6, 1)),
			budget:   5,
			want:     budgetOutcome{Applies: true, InFlight: clonebudget.InFlight{Own: 5}, MaxSurge: "4", MaxSize: "6", Waiting: 14, Reason: emit.ReasonWaitingForCloneBudget},
		},
		"ClaimsLeftBehindDoNotHoldANewPool": {
			reason: "Five claims another pool's clones left behind (Lost or Pending for hours, or stuck terminating) fill no budget of 5: a new pool of 30 starts 5, not 0.",
			spec:   fixed(30),
			world: with(nil, nil, []*unstructuredT{
				leftClaim("tmp-pvc-1", "Lost", "2025-06-01T00:00:00Z", ""),
				leftClaim("tmp-pvc-2", "Lost", "2025-06-01T00:00:00Z", ""),
				leftClaim("tmp-pvc-3", "Pending", "2025-06-01T00:00:00Z", ""),
				leftClaim("tmp-pvc-4", "Lost", "2025-06-01T00:00:00Z", "2025-06-01T00:05:00Z"),
				leftClaim("tmp-pvc-5", "Bound", "2025-06-01T00:00:00Z", "2026-01-01T11:59:00Z"),
			}),
			budget: 5,
			want:   budgetOutcome{Applies: true, Replicas: ptr.To[int32](5), MaxSurge: "4", Waiting: 25, Reason: emit.ReasonWaitingForCloneBudget},
		},
		"ClaimOfARunningCloneStillCounts": {
			reason: "A claim Lost a moment ago is a clone between its rebind and its cleanup: it counts, beside one left behind that does not.",
			spec:   fixed(30),
			world: with(nil, nil, []*unstructuredT{
				leftClaim("tmp-pvc-1", "Lost", "2026-01-01T11:55:00Z", ""),
				leftClaim("tmp-pvc-2", "Lost", "2025-06-01T00:00:00Z", ""),
			}),
			budget: 5,
			want:   budgetOutcome{Applies: true, InFlight: clonebudget.InFlight{Others: 1}, Replicas: ptr.To[int32](4), MaxSurge: "4", Waiting: 26, Reason: emit.ReasonWaitingForCloneBudget},
		},
		"HeldPoolStartsNoClone": {
			reason: "A pool held for its golden composes no deployment change: the budget does not apply.",
			spec:   fixed(30), world: budgetWorld{worldFixture: importing}, budget: 5,
			want: budgetOutcome{Replicas: ptr.To[int32](30), MaxSurge: "30", Reason: emit.ReasonNotCloning},
		},
		"HTTPPoolIsNotBudgeted": {
			reason: "An HTTP pool imports its disks: no clone budget applies.",
			spec:   map[string]any{"replicas": int64(30)}, world: budgetWorld{worldFixture: missing}, budget: 5,
			want: budgetOutcome{Replicas: ptr.To[int32](30), MaxSurge: "30", Reason: emit.ReasonNotCloning},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pl := decideWith(t, tc.spec, tc.world, tc.observed, tc.budget)
			if diff := cmp.Diff(tc.want, outcomeOf(pl)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCloneCapacityCondition(t *testing.T) {
	img := resolveOSImage(mustSpec(t, map[string]any{"osImage": builtin()}), testConfig(t))
	golden := img.GoldenRef()
	who := `Node pool "tenant-a/demo-md0"`
	fix := ` They start as clones finish; to start more at once, raise cloneBudget.storageClasses[replicated] (or cloneBudget.default) in the Function's Input, within what the storage takes (docs/platform.md, "Clone budget and capacity").`
	unknown := "the free capacity of class replicated is unknown: its driver publishes no CSIStorageCapacity for it"
	budgeted := func(budget int32, in clonebudget.InFlight, p clonebudget.Pool) decide.BudgetPlan {
		return decide.BudgetPlan{Applies: true, Class: "replicated", Golden: golden, Pool: p, Decision: clonebudget.Decide(budget, in, p), OthersRead: true}
	}
	cases := map[string]struct {
		reason string
		image  pool.Image
		budget decide.BudgetPlan
		// claims, when set, are the other pools' claims the budget sorted.
		claims *clonebudget.Claims
		want   compose.Condition
	}{
		"HTTPPool": {
			reason: "An HTTP pool clones nothing.",
			image:  pool.Image{Source: pool.SourceHTTP},
			want: compose.Condition{Type: emit.ConditionCloneCapacity, Status: compose.StatusTrue, Reason: emit.ReasonNotCloning,
				Message: who + " imports its worker disks over HTTP; no clone budget applies."},
		},
		"HeldPool": {
			reason: "A held clone pool starts no clone on this call.",
			image:  img,
			want: compose.Condition{Type: emit.ConditionCloneCapacity, Status: compose.StatusTrue, Reason: emit.ReasonNotCloning,
				Message: who + " starts no clone on this reconcile."},
		},
		"OtherPoolsNotRead": {
			reason: "A settled pool starts no clone and reads no other pool's: the message says so instead of a count it did not take.",
			image:  img,
			budget: decide.BudgetPlan{Applies: true, Class: "replicated", Golden: golden, Pool: clonebudget.Pool{Wanted: 3, Current: ptr.To[int32](3), Surge: 3, Unavailable: 1}, Decision: clonebudget.Decide(10, clonebudget.InFlight{}, clonebudget.Pool{Wanted: 3, Current: ptr.To[int32](3), Surge: 3, Unavailable: 1})},
			want: compose.Condition{Type: emit.ConditionCloneCapacity, Status: compose.StatusTrue, Reason: emit.ReasonWithinCloneBudget,
				Message: who + ": 0 clone(s) of golden " + golden + " of this pool run on class replicated (other pools' are read only while the pool may start clones), of a budget of 10; no worker waits for it; " + unknown + "."},
		},
		"Unbounded": {
			reason: "A class without a budget says so, with what runs.",
			image:  img,
			budget: budgeted(0, clonebudget.InFlight{Own: 3, Others: 2}, clonebudget.Pool{Wanted: 30, Surge: 30, Unavailable: 1}),
			want: compose.Condition{Type: emit.ConditionCloneCapacity, Status: compose.StatusTrue, Reason: emit.ReasonCloneBudgetUnbounded,
				Message: who + ": 5 clone(s) of golden " + golden + " run on class replicated (3 of this pool's, 2 of other pools'), no clone budget bounds them (cloneBudget 0 in the Function's Input); no worker waits for it; " + unknown + "."},
		},
		"WithinBudget": {
			reason: "A pool at its count waits for nothing; its lowered surge is said.",
			image:  img,
			budget: budgeted(5, clonebudget.InFlight{Own: 2}, clonebudget.Pool{Wanted: 30, Current: ptr.To[int32](30), Surge: 30, Unavailable: 1}),
			want: compose.Condition{Type: emit.ConditionCloneCapacity, Status: compose.StatusTrue, Reason: emit.ReasonWithinCloneBudget,
				Message: who + ": 2 clone(s) of golden " + golden + " run on class replicated (2 of this pool's, 0 of other pools'), of a budget of 5; no worker waits for it; " + unknown + "; a roll replaces at most 5 worker(s) at once (maxSurge 4, lowered from 30, plus maxUnavailable 1)."},
		},
		"WithinBudgetAutoscaledWithRoom": {
			reason: "An autoscaled pool that may still grow waits for nothing; its bounded max is said.",
			image:  img,
			budget: budgeted(5, clonebudget.InFlight{Own: 3}, clonebudget.Pool{Autoscaled: true, Current: ptr.To[int32](6), Min: 2, Max: 20, Surge: 4, Unavailable: 1}),
			want: compose.Condition{Type: emit.ConditionCloneCapacity, Status: compose.StatusTrue, Reason: emit.ReasonWithinCloneBudget,
				Message: who + ": 3 clone(s) of golden " + golden + " run on class replicated (3 of this pool's, 0 of other pools'), of a budget of 5; no worker waits for it; " + unknown + "; the autoscaler may grow the pool to 8 of its maxReplicas 20 for now."},
		},
		"WaitingFixedPool": {
			reason: "A fixed pool held below its count says how many wait and the fix.",
			image:  img,
			budget: budgeted(5, clonebudget.InFlight{Own: 3, Others: 1}, clonebudget.Pool{Wanted: 30, Current: ptr.To[int32](5), Surge: 30, Unavailable: 1}),
			want: compose.Condition{Type: emit.ConditionCloneCapacity, Status: compose.StatusFalse, Reason: emit.ReasonWaitingForCloneBudget,
				Message: who + ": 4 clone(s) of golden " + golden + " run on class replicated (3 of this pool's, 1 of other pools'), of a budget of 5; 24 of 30 worker(s) wait: replicas are 6 for now; a roll replaces at most 5 worker(s) at once (maxSurge 4, lowered from 30, plus maxUnavailable 1); " + unknown + "." + fix},
		},
		"WaitingAutoscaledPool": {
			reason: "An autoscaled pool whose max is its current count may not grow: it waits.",
			image:  img,
			budget: budgeted(5, clonebudget.InFlight{Own: 5}, clonebudget.Pool{Autoscaled: true, Current: ptr.To[int32](6), Min: 2, Max: 20, Surge: 4, Unavailable: 1}),
			want: compose.Condition{Type: emit.ConditionCloneCapacity, Status: compose.StatusFalse, Reason: emit.ReasonWaitingForCloneBudget,
				Message: who + ": 5 clone(s) of golden " + golden + " run on class replicated (5 of this pool's, 0 of other pools'), of a budget of 5; the autoscaler may grow the pool to 6 of its maxReplicas 20 for now; " + unknown + "." + fix},
		},
		"OtherPoolsClaimsNamed": {
			reason: "The claims counted as other pools' clones are named, so an operator can tell them from what CDI left behind.",
			image:  img,
			budget: budgeted(5, clonebudget.InFlight{Own: 1, Others: 2}, clonebudget.Pool{Wanted: 3, Current: ptr.To[int32](3), Surge: 3, Unavailable: 1}),
			claims: &clonebudget.Claims{Live: []string{"tmp-pvc-a", "tmp-pvc-b"}},
			want: compose.Condition{Type: emit.ConditionCloneCapacity, Status: compose.StatusTrue, Reason: emit.ReasonWithinCloneBudget,
				Message: who + ": 3 clone(s) of golden " + golden + " run on class replicated (1 of this pool's, 2 of other pools': claim(s) tmp-pvc-a, tmp-pvc-b in cozy-public), of a budget of 5; no worker waits for it; " + unknown + "."},
		},
		"LeakedClaimsNamedWithTheirRemoval": {
			reason: "Claims CDI left behind are said not to count, and named in the command that removes them.",
			image:  img,
			budget: budgeted(5, clonebudget.InFlight{}, clonebudget.Pool{Wanted: 30, Surge: 30, Unavailable: 1}),
			claims: &clonebudget.Claims{Leaked: []string{"tmp-pvc-a", "tmp-pvc-b"}},
			want: compose.Condition{Type: emit.ConditionCloneCapacity, Status: compose.StatusFalse, Reason: emit.ReasonWaitingForCloneBudget,
				Message: who + ": 0 clone(s) of golden " + golden + " run on class replicated (0 of this pool's, 0 of other pools'), of a budget of 5; not counted: 2 claim(s) CDI left behind in cozy-public, Pending or Lost for over 10m0s (cloneBudget.leakedClaimAfter), which no clone runs through; remove them with kubectl delete pvc -n cozy-public tmp-pvc-a tmp-pvc-b; 25 of 30 worker(s) wait: replicas are 5 for now; a roll replaces at most 5 worker(s) at once (maxSurge 4, lowered from 30, plus maxUnavailable 1); " + unknown + "." + fix},
		},
		"ManyClaimsNamedUpToFive": {
			reason: "Past five, a message names five of each kind and says how many more, and how to list them all.",
			image:  img,
			budget: budgeted(20, clonebudget.InFlight{Others: 7}, clonebudget.Pool{Wanted: 3, Current: ptr.To[int32](3), Surge: 3, Unavailable: 1}),
			claims: &clonebudget.Claims{
				Live:   []string{"tmp-pvc-1", "tmp-pvc-2", "tmp-pvc-3", "tmp-pvc-4", "tmp-pvc-5", "tmp-pvc-6", "tmp-pvc-7"},
				Leaked: []string{"tmp-pvc-a", "tmp-pvc-b", "tmp-pvc-c", "tmp-pvc-d", "tmp-pvc-e", "tmp-pvc-f"},
				Stuck:  []string{"tmp-pvc-s", "tmp-pvc-t", "tmp-pvc-u", "tmp-pvc-v", "tmp-pvc-w", "tmp-pvc-x", "tmp-pvc-y", "tmp-pvc-z"},
			},
			want: compose.Condition{Type: emit.ConditionCloneCapacity, Status: compose.StatusTrue, Reason: emit.ReasonWithinCloneBudget,
				Message: who + ": 7 clone(s) of golden " + golden + " run on class replicated (0 of this pool's, 7 of other pools': claim(s) tmp-pvc-1, tmp-pvc-2, tmp-pvc-3, tmp-pvc-4, tmp-pvc-5 and 2 more in cozy-public), of a budget of 20" +
					"; not counted: 6 claim(s) CDI left behind in cozy-public, Pending or Lost for over 10m0s (cloneBudget.leakedClaimAfter), which no clone runs through; remove them with kubectl delete pvc -n cozy-public tmp-pvc-a tmp-pvc-b tmp-pvc-c tmp-pvc-d tmp-pvc-e (and 1 more: kubectl get pvc -n cozy-public -l workerimage.cozystack.io/golden=" + fxGoldenHash + " lists every clone claim of the golden with its status)" +
					"; not counted: 8 claim(s) in cozy-public terminating for over 10m0s, held by a finalizer (tmp-pvc-s, tmp-pvc-t, tmp-pvc-u, tmp-pvc-v, tmp-pvc-w and 3 more): kubectl describe pvc -n cozy-public tmp-pvc-s shows under Used By the pod that still mounts it, whose deletion lets it go" +
					"; no worker waits for it; " + unknown + "."},
		},
		"WaitingRoll": {
			reason: "A roll whose surge the budget lowers waits for it.",
			image:  img,
			budget: budgeted(5, clonebudget.InFlight{Others: 1}, clonebudget.Pool{Wanted: 30, Current: ptr.To[int32](30), Surge: 30, Unavailable: 1, Rolling: true}),
			want: compose.Condition{Type: emit.ConditionCloneCapacity, Status: compose.StatusFalse, Reason: emit.ReasonWaitingForCloneBudget,
				Message: who + ": 1 clone(s) of golden " + golden + " run on class replicated (0 of this pool's, 1 of other pools'), of a budget of 5; a roll replaces at most 4 worker(s) at once (maxSurge 3, lowered from 30, plus maxUnavailable 1); " + unknown + "." + fix},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.claims != nil {
				tc.budget.Claims, tc.budget.LeakedAfter = *tc.claims, defaults.LeakedClaimAfter
			}
			pl := decide.Plan{Pool: fxPoolID, Image: tc.image, Budget: tc.budget}
			if diff := cmp.Diff(tc.want, emit.CloneCapacityCondition(pl)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
