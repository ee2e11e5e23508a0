package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// Restarts in the middle. Each chaos scenario drives one lifecycle step on
// the real chain and, at a named point of it, kills one component with
// SIGKILL (a crash: no graceful shutdown, leases and watches cut) and starts
// it again with the same command line (harness.Process.Restart). A ledger
// (harness.Ledger) watches every object of the step's namespace and its
// goldens from before the fault to the end, and the scenario asserts what
// an undisturbed run would show: the same MachineSets and Machines created
// and deleted (no extra roll, no Machine replaced), no object dropped and
// made again under a new UID, no golden or worker disk deleted that the
// step does not delete, nothing left behind, and the step's end state.
//
// TestChaos runs one restart per component (chaosCI); E2E_CHAOS=all runs
// every scenario against every component (make e2e-chaos).

// chaosDown is how long a killed component stays down before it starts
// again: longer than the function's TTL and Crossplane's poll interval, so
// that a reconcile is due while it is down.
const chaosDown = 8 * time.Second

// chaosComponent is a component the chaos scenarios restart.
type chaosComponent struct {
	Name string
	// Short names it in namespaces and cluster names.
	Short   string
	Process func() *harness.Process
}

// chaosComponents are the components a fault restarts. Every one is the
// real process: the function (the only replica the suite runs), Crossplane
// core (its webhook server with it: the nousages webhook fails closed while
// it is down), the kube-apiserver (etcd kept: every watch of every
// component breaks and relists), CDI's controller (it re-plans every clone
// from its claims' annotations and waits for its leader lease to expire)
// and Cluster API's core manager (it re-reads MachineSets and Machines).
var chaosComponents = []chaosComponent{
	{"function", "fn", func() *harness.Process { return cp.FunctionProcess() }},
	{"crossplane", "xp", func() *harness.Process { return cp.CrossplaneProcess() }},
	{"kube-apiserver", "api", func() *harness.Process { return cp.APIServerProcess() }},
	{"cdi-controller", "cdi", func() *harness.Process { return cdi.Controller }},
	{"capi-manager", "capi", func() *harness.Process { return capi.Process }},
}

// chaosScenario is a lifecycle step and the point at which it is faulted.
type chaosScenario struct {
	Name  string
	Short string
	// Point names the restart point; Why says why it is the dangerous one.
	Point, Why string
	Run        func(t *testing.T, c chaosRun)
}

// chaosRun is one scenario against one component.
type chaosRun struct {
	NS, Cluster, Seed string
	Fault             *fault
}

var chaosScenarios = []chaosScenario{
	{
		Name: "PoolRoll", Short: "roll",
		Point: "two MachineSets",
		Why:   "the MachineDeployment points at the new template while the old MachineSet still has Machines: the old template must be kept (a desired state without it deletes it under a live MachineSet), the deployment must not flip back (a second roll), and Cluster API must not make a third MachineSet",
		Run:   chaosPoolRoll,
	},
	{
		Name: "ScaleUpUnderBudget", Short: "scale",
		Point: "clones in flight at the budget",
		Why:   "worker disks are cloning and the rest of the 30 wait for the clone budget of 5: the budget must still hold, the deployment's replicas must only grow, no Machine or disk may be made twice, and CDI must finish the clones it had started",
		Run:   chaosScaleUp,
	},
	{
		Name: "CatalogDeletionWithPinnedGolden", Short: "catdel",
		Point: "catalog deleted, goldens being collected",
		Why:   "the garbage collector is deleting the catalog's goldens while a pool's template pins one: the pinned golden must be refused and kept (Crossplane's webhook fails closed while it is down), the unpinned one must go, and the pool must stay open on its template",
		Run:   chaosCatalogDeletion,
	},
	{
		Name: "PoolDeletionWaitingOnMachines", Short: "pooldel",
		Point: "deletion recorded, MachineDeployment not yet gone",
		Why:   "the pool's delete was deferred by its guard and its MachineDeployment is being torn down while its Machines go: nothing may be made again (a desired state that forgets the teardown re-creates the deployment), and the pool, its templates, Usages and guard must all go in the end",
		Run:   chaosPoolDeletion,
	},
	{
		Name: "ChartPoolAdoption", Short: "adopt",
		Point: "XNodePool created over the chart's objects",
		Why:   "the pool's first reconciles decide that the chart's templates are the current ask and take the chart's MachineDeployment and templates over: a restart in between must not turn the adoption into a roll (a new template, a new MachineSet, a replaced Machine) or drop an adopted object",
		Run:   chaosAdoption,
	},
	{
		Name: "CatalogMirrorSwitch", Short: "mirror",
		Point: "mirror switched, stalled golden being replaced",
		Why:   "the catalog's factory moves to a mirror while one golden is in use and another's import stalls: the stalled one is deleted and must be imported again exactly once, the one in use must keep its UID and spec, the new image must be imported, and the pool on the golden in use must not move",
		Run:   chaosMirrorSwitch,
	},
}

// chaosCI pairs every component with one scenario: what TestChaos runs
// without E2E_CHAOS=all.
var chaosCI = map[string]string{
	"function":       "PoolRoll",
	"capi-manager":   "PoolRoll",
	"cdi-controller": "ScaleUpUnderBudget",
	"crossplane":     "CatalogDeletionWithPinnedGolden",
	"kube-apiserver": "PoolDeletionWaitingOnMachines",
}

// E2E_CHAOS=all runs every pair; E2E_CHAOS=<scenario>/<component>,... runs
// the pairs named.
func chaosSelected(scenario, component string) bool {
	switch v := os.Getenv("E2E_CHAOS"); v {
	case "":
		return chaosCI[component] == scenario
	case "all":
		return true
	default:
		return slices.Contains(strings.Split(v, ","), scenario+"/"+component)
	}
}

// chaosSeq makes every run's namespace its own, so that -count=3 runs
// three times without waiting for the last run's namespaces to go.
var chaosSeq atomic.Int32

func TestChaos(t *testing.T) {
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	seq := chaosSeq.Add(1)
	for _, s := range chaosScenarios {
		for _, c := range chaosComponents {
			if !chaosSelected(s.Name, c.Name) {
				continue
			}
			t.Run(s.Name+"/"+c.Name, func(t *testing.T) {
				id := fmt.Sprintf("%s-%s-%d", s.Short, c.Short, seq)
				run := chaosRun{NS: "e2e-chaos-" + id, Cluster: "ch-" + id, Seed: "chaos-" + id, Fault: newFault(c, s)}
				start := time.Now()
				crashed := superviseAll(t, start)
				// Logged last, whichever way the run ends (a t.Fatal too).
				t.Cleanup(func() {
					result := "PASS"
					if t.Failed() {
						result = "FAIL"
					}
					t.Logf("CHAOS scenario=%s component=%s point=%q fired=%s restart=%s total=%s crashes=%s result=%s",
						s.Name, c.Name, s.Point, run.Fault.firedAfter(start), run.Fault.restartTook(), time.Since(start).Round(time.Second), crashed(), result)
				})
				s.Run(t, run)
			})
		}
	}
}

// superviseAll restarts, for the rest of the test, every control-plane
// process that exits on its own, as the kubelet restarts a pod's container:
// some components exit by design when another is faulted (CDI's controller
// exits, "leader election lost", when the apiserver is away for longer than
// its lease's renew deadline; controller-runtime's manager returns and
// cmd/cdi-controller exits). The function must never crash: that fails the
// test. The returned func describes the crashes since start.
func superviseAll(t *testing.T, start time.Time) func() string {
	procs := cp.Processes()
	for _, p := range procs {
		p.Supervise(true)
	}
	describe := func() string {
		var out []string
		for _, p := range procs {
			for _, at := range p.Crashes() {
				if at.After(start) {
					out = append(out, fmt.Sprintf("%s@+%s", p.Name, at.Sub(start).Round(100*time.Millisecond)))
				}
			}
		}
		if len(out) == 0 {
			return "none"
		}
		return strings.Join(out, ",")
	}
	t.Cleanup(func() {
		for _, p := range procs {
			p.Supervise(false)
		}
		for _, at := range cp.FunctionProcess().Crashes() {
			if at.After(start) {
				t.Errorf("the function crashed at %s; last lines of %s:\n%s", at.Format("15:04:05.000"), cp.FunctionProcess().LogPath, cp.FunctionProcess().LogTail(40))
			}
		}
		if d := describe(); d != "none" {
			t.Logf("restarted as the kubelet would after exiting on their own: %s", d)
		}
	})
	return describe
}

// fault restarts one component once, when a scenario's point is reached.
type fault struct {
	component chaosComponent
	scenario  chaosScenario

	mu           sync.Mutex
	armed        bool
	firedAt      time.Time
	restartDone  time.Time
	err          error
	done, cancel chan struct{}
}

func newFault(c chaosComponent, s chaosScenario) *fault {
	return &fault{component: c, scenario: s, done: make(chan struct{}), cancel: make(chan struct{})}
}

// arm polls reached (every 100 ms, up to timeout) in the background and
// restarts the component the first time it returns nil. The scenario goes
// on meanwhile: its own waits tolerate errors, so they ride through the
// restart as its clients do.
func (f *fault) arm(t *testing.T, timeout time.Duration, reached func(context.Context) error) {
	t.Helper()
	f.mu.Lock()
	if f.armed {
		f.mu.Unlock()
		t.Fatal("a chaos scenario armed its fault twice")
	}
	f.armed = true
	f.mu.Unlock()
	t.Cleanup(func() {
		select {
		case <-f.done:
		default:
			close(f.cancel)
			<-f.done
		}
	})
	go func() {
		defer close(f.done)
		deadline := time.Now().Add(timeout)
		var last error
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			last = reached(ctx)
			cancel()
			if last == nil {
				break
			}
			if time.Now().After(deadline) {
				f.setErr(fmt.Errorf("restart point %q was not reached within %s; last observation: %v", f.scenario.Point, timeout, last))
				return
			}
			select {
			case <-f.cancel:
				f.setErr(fmt.Errorf("the scenario ended before restart point %q was reached; last observation: %v", f.scenario.Point, last))
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
		f.mu.Lock()
		f.firedAt = time.Now()
		f.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		err := f.component.Process().Restart(ctx, chaosDown)
		f.mu.Lock()
		f.restartDone = time.Now()
		f.mu.Unlock()
		if err != nil {
			f.setErr(fmt.Errorf("restarting %s at %q: %w", f.component.Name, f.scenario.Point, err))
		}
	}()
}

func (f *fault) setErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

// wait waits until the fault has fired and the component is back, and
// fails the test if the point was never reached or the restart failed: a
// chaos run without its fault proves nothing.
func (f *fault) wait(t *testing.T) {
	t.Helper()
	select {
	case <-f.done:
	case <-time.After(5 * time.Minute):
		t.Fatalf("the fault of %s at %q neither fired nor gave up within 5 minutes", f.component.Name, f.scenario.Point)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		t.Fatal(f.err)
	}
	t.Logf("restarted %s at %q (%s); back after %s", f.component.Name, f.scenario.Point, f.firedAt.Format("15:04:05.000"), f.restartDone.Sub(f.firedAt).Round(100*time.Millisecond))
}

func (f *fault) firedAfter(start time.Time) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.firedAt.IsZero() {
		return "never"
	}
	return f.firedAt.Sub(start).Round(100 * time.Millisecond).String()
}

func (f *fault) restartTook() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.restartDone.IsZero() {
		return "-"
	}
	return f.restartDone.Sub(f.firedAt).Round(100 * time.Millisecond).String()
}

// chaosKinds are what a chaos ledger records: everything a pool or a
// catalog composes in a namespace, what Cluster API makes of it, the
// worker disks and the goldens.
var chaosKinds = []schema.GroupVersionKind{
	harness.NodePool,
	harness.MachineDeployment, harness.MachineSet, harness.Machine, harness.MachineHealthCheck,
	harness.KubevirtMachineTemplate, harness.TalosConfigTemplate,
	harness.Usage, harness.DataVolume, harness.PVC, harness.RoleBinding,
	harness.ClusterRole, harness.Cluster,
}

// startChaosLedger records chaosKinds in ns and the golden namespace until
// the test ends, and logs it when the test fails.
func startChaosLedger(t *testing.T, ns string) *harness.Ledger {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Of cluster-scoped objects, the catalogs' clone ClusterRoles.
	l, err := cp.StartLedger(ctx, []string{ns, goldenNamespace}, "workerimage-", chaosKinds...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.Stop()
		if t.Failed() {
			t.Logf("ledger of %s and %s:\n%s", ns, goldenNamespace, l)
		}
	})
	return l
}

// ledgerWant is what an undisturbed run of a step shows in its ledger.
type ledgerWant struct {
	// Created is how many objects of each kind appear in the namespace.
	// A kind not listed must not appear.
	Created map[string]int
	// MayGo reports whether an object that existed before the step may go
	// during it. Nothing else may.
	MayGo func(e harness.Entry) bool
	// Replaced are objects the step deletes and makes again once, by
	// design: seen under exactly two UIDs.
	Replaced []harness.ObjectKey
	// Shared are the names of the step's objects outside its namespace
	// (its goldens and their claims in the golden namespace, a catalog's
	// clone RBAC there and cluster-wide): only those are the step's there,
	// as other scenarios' objects come and go meanwhile.
	Shared []string
}

// ours reports whether e is the step's: in its namespace, or shared and
// named in want.Shared.
func (w ledgerWant) ours(ns string, e harness.Entry) bool {
	if e.Namespace == ns {
		return true
	}
	return (e.Namespace == goldenNamespace || e.Namespace == "") && slices.Contains(w.Shared, e.Name)
}

// checkLedger asserts that the step showed exactly what want says: nothing
// made under a second UID, the expected number of new objects per kind in
// ns, and nothing gone but what may go (the goldens among it).
func checkLedger(t *testing.T, l *harness.Ledger, ns string, want ledgerWant) {
	t.Helper()
	var again []string
	for _, e := range l.Entries("", "") {
		n := len(l.Lives(e.ObjectKey))
		if slices.Contains(want.Replaced, e.ObjectKey) {
			if n != 2 && !slices.Contains(again, e.String()) {
				again = append(again, fmt.Sprintf("%s (%d lives, an undisturbed run replaces it once)", e, n))
			}
			continue
		}
		if want.ours(ns, e) && n > 1 && !slices.Contains(again, e.String()) {
			again = append(again, e.String())
		}
	}
	if len(again) > 0 {
		t.Errorf("dropped and made again under a new UID: %s", strings.Join(again, "; "))
	}
	surplus := l.Surplus(ns)
	if len(surplus.MachineSets)+len(surplus.Machines) > 0 {
		t.Logf("Cluster API's surplus from stale caches, removed again by it (not counted): MachineSets %v, Machines %v, their disks %v", surplus.MachineSets, surplus.Machines, surplus.Disks)
	}
	created := map[string][]string{}
	for _, e := range l.Created("", ns) {
		if surplus.Counts(e.Kind, e.Name) {
			created[e.Kind] = append(created[e.Kind], e.Name)
		}
	}
	for kind, names := range created {
		if n, ok := want.Created[kind]; ok && n < 0 {
			continue // not counted
		}
		if len(names) != want.Created[kind] {
			t.Errorf("%d %s(s) created in %s (%v), an undisturbed run creates %d", len(names), kind, ns, names, want.Created[kind])
		}
	}
	for kind, n := range want.Created {
		if n > 0 && len(created[kind]) == 0 {
			t.Errorf("no %s created in %s, an undisturbed run creates %d", kind, ns, n)
		}
	}
	var gone []string
	for _, e := range l.Deleted("", "") {
		if e.Baseline && want.ours(ns, e) && (want.MayGo == nil || !want.MayGo(e)) {
			gone = append(gone, e.String())
		}
	}
	if len(gone) > 0 {
		t.Errorf("gone during the step, which an undisturbed run keeps: %s", strings.Join(gone, "; "))
	}
}

// chaosPoolRoll: a pool of 2 settled workers rolls onto a bigger disk; the
// fault fires once Cluster API has two MachineSets.
func chaosPoolRoll(t *testing.T, c chaosRun) {
	sid := schematicID(c.Seed)
	xr := realCAPIPool(t, c.NS, c.Cluster, sid, 2, "20Gi")
	md := c.Cluster + "-" + poolName
	kmt := poolTemplate(t, reconcileTimeout, c.NS, xr.GetName())
	before := waitSettled(t, c.NS, md, kmt.GetName(), 2)
	waitLabelledInUse(t, harness.NodePool, c.NS, xr.GetName())
	l := startChaosLedger(t, c.NS)

	c.Fault.arm(t, capiTimeout, func(ctx context.Context) error {
		s, err := readDeployment(ctx, c.NS, md)
		if err != nil {
			return err
		}
		if s.Template == kmt.GetName() || len(s.Sets) < 2 {
			return fmt.Errorf("%s", s)
		}
		return nil
	})
	cp.MustApply(t, sizedPool(c.NS, c.Cluster, sid, 2, "25Gi"))
	newTmpl := waitNewTemplate(t, c.NS, md, kmt.GetName())
	waitRolledOff(t, c.NS, md, kmt.GetName(), newTmpl, 2)
	c.Fault.wait(t)
	// Settled again after the restart, and still on the new template: the
	// restart did not start a second roll.
	cp.Consistently(t, 2*functionTTL, "MachineDeployment "+md+" stays settled on "+newTmpl, func(ctx context.Context) error {
		s, err := readDeployment(ctx, c.NS, md)
		if err != nil {
			return err
		}
		if !s.settledOn(newTmpl, 2) {
			return fmt.Errorf("%s", s)
		}
		return nil
	})
	oldSets, oldMachines := map[string]bool{}, map[string]bool{}
	for ms := range before.Sets {
		oldSets[ms] = true
	}
	for _, m := range before.Machines {
		oldMachines[m] = true
	}
	retired := map[string]bool{kmt.GetName(): true}
	for _, u := range usageNames(kmt.GetName()) {
		retired[u] = true
	}
	checkLedger(t, l, c.NS, ledgerWant{
		// One new MachineSet and a Machine, a worker disk (and its claim)
		// per replica on it, and the new template with its Usages.
		Created: map[string]int{"MachineSet": 1, "Machine": 2, "DataVolume": 2, "PersistentVolumeClaim": 2, "KubevirtMachineTemplate": 1, "Usage": 2},
		Shared:  []string{goldenName(sid)},
		MayGo: func(e harness.Entry) bool {
			switch e.Kind {
			case "MachineSet":
				return oldSets[e.Name]
			case "Machine":
				return oldMachines[e.Name]
			case "DataVolume", "PersistentVolumeClaim":
				// The old Machines' worker disks.
				return e.Namespace == c.NS
			case "KubevirtMachineTemplate", "Usage":
				return retired[e.Name]
			}
			return false
		},
	})
	// A request the restart cut is not a refusal; an admission denial is.
	refusedIn(t, c.NS, unreachable)
}

// chaosScaleUp: a pool scales 0 → 30 under a clone budget of 5; the fault
// fires once three worker disks are cloning.
func chaosScaleUp(t *testing.T, c chaosRun) {
	const workers, budget = 30, 5
	var l *harness.Ledger
	run := scaleUpUnderBudgetWith(t, c.NS, c.Cluster, c.Seed, workers, budget, budgetCloneDuration, 10*time.Minute, budgetOptions{
		BeforeScale: func(t *testing.T, _ string) {
			l = startChaosLedger(t, c.NS)
			c.Fault.arm(t, capiTimeout, func(ctx context.Context) error {
				dvs, err := cp.List(ctx, harness.DataVolume, c.NS, "")
				if err != nil {
					return err
				}
				cloning := 0
				for _, dv := range dvs {
					if p, _, _ := unstructured.NestedString(dv.Object, "status", "phase"); p != phaseSucceeded && p != phaseFailed {
						cloning++
					}
				}
				if cloning < 3 {
					return fmt.Errorf("%d of %d worker disks cloning", cloning, len(dvs))
				}
				return nil
			})
		},
	})
	c.Fault.wait(t)
	var prev int64 = -1
	for _, s := range run.Samples {
		if s.Cloning > budget {
			t.Errorf("more than %d worker disks cloning at once: %s", budget, s)
		}
		if s.Replicas >= 0 {
			if s.Replicas < prev {
				t.Errorf("MachineDeployment replicas went down from %d to %d: %s", prev, s.Replicas, s)
			}
			prev = s.Replicas
		}
	}
	last := run.Samples[len(run.Samples)-1]
	if last.Succeeded != workers || last.Cloning != 0 || last.Failed != 0 || last.Replicas != workers || last.Machines != workers {
		t.Errorf("at the end: %s; want %d Succeeded worker disks, %d replicas and Machines", last, workers, workers)
	}
	checkLedger(t, l, c.NS, ledgerWant{
		// A Machine, a worker disk and its claim per worker; CDI's
		// temporary claims of a CSI clone are PVCs too, so claims are not
		// counted here but must not be made twice (Recreated).
		// Cluster API makes the deployment's one MachineSet when it first
		// has replicas or before (not counted); there must be only one.
		Created: map[string]int{"Machine": workers, "DataVolume": workers, "PersistentVolumeClaim": -1, "MachineSet": -1},
		Shared:  []string{goldenName(schematicID(c.Seed))},
		MayGo: func(e harness.Entry) bool {
			// CDI's temporary claims of a clone go when it is done.
			return e.Kind == "PersistentVolumeClaim" && e.Namespace == c.NS && !e.Baseline
		},
	})
	if sets := l.Entries("MachineSet", c.NS); len(sets) != 1 {
		t.Errorf("%d MachineSets during the scale-up (%v), an undisturbed run has 1", len(sets), sets)
	}
	// A request the restart cut is not a refusal; an admission denial is.
	refusedIn(t, c.NS, unreachable)
}

// chaosCatalogDeletion: the catalog of two goldens is deleted while a pool
// pins one; the fault fires as soon as the catalog is being deleted.
func chaosCatalogDeletion(t *testing.T, c chaosRun) {
	catalog := "e2e-chaos-" + strings.TrimPrefix(c.NS, "e2e-chaos-")
	inNamespace(t, c.NS)
	capiCluster(t, c.NS, c.Cluster)
	sidA, sidB := schematicID(c.Seed+"-a"), schematicID(c.Seed+"-b")
	goldenA, goldenB := goldenName(sidA), goldenName(sidB)
	readyGolden(t, catalog, sidA, sidB)
	xr, kmt := builtinPool(t, c.NS, c.Cluster, sidA)
	waitGoldenPinned(t, xr, kmt, goldenA)
	md := c.Cluster + "-" + poolName
	cp.WaitExists(t, reconcileTimeout, harness.MachineDeployment, c.NS, md)
	// The pool's worker cloned the golden before the step.
	disk := waitWorkerDisks(t, c.NS, md, kmt, 1)[0]
	waitDataVolumePhase(t, c.NS, disk, phaseSucceeded)
	l := startChaosLedger(t, c.NS)

	c.Fault.arm(t, reconcileTimeout, func(ctx context.Context) error {
		u, err := cp.Get(ctx, harness.WorkerImageCatalog, "", catalog)
		if err != nil {
			return err
		}
		if u != nil && u.GetDeletionTimestamp() == nil {
			return fmt.Errorf("catalog %s is not being deleted", catalog)
		}
		return nil
	})
	cp.MustDelete(t, harness.WorkerImageCatalog, "", catalog)
	c.Fault.wait(t)
	cp.WaitGone(t, gcTimeout, harness.WorkerImageCatalog, "", catalog)
	cp.WaitGone(t, gcTimeout, harness.DataVolume, goldenNamespace, goldenB)
	cp.Consistently(t, 3*functionTTL, fmt.Sprintf("golden %s is kept and pool %s stays open on %s", goldenA, xr.GetName(), kmt.GetName()), allOf(goldenKept(goldenA), func(ctx context.Context) error {
		p, err := cp.Existing(ctx, harness.NodePool, c.NS, xr.GetName())
		if err != nil {
			return err
		}
		if state, reason := gateOf(p); state != "Open" {
			return fmt.Errorf("pool gate is %s/%s", state, reason)
		}
		got, err := machineDeploymentTemplate(ctx, c.NS, md)
		if err != nil {
			return err
		}
		if got != kmt.GetName() {
			return fmt.Errorf("MachineDeployment %s points at %q", md, got)
		}
		return nil
	}))
	checkLedger(t, l, c.NS, ledgerWant{
		// The clone RBAC stays while a pool pins a golden
		// (TestDeletingTheCatalogKeepsClonePermissionWhilePinned).
		Shared: []string{goldenA, goldenB, "workerimage-clone-" + catalog},
		MayGo: func(e harness.Entry) bool {
			// The unpinned golden and its claim.
			return e.Namespace == goldenNamespace && e.Name == goldenB
		},
	})
	// A request the restart cut is not a refusal; an admission denial is.
	refusedIn(t, c.NS, unreachable)
}

// chaosPoolDeletion: a settled pool of one worker is deleted; the fault
// fires once its deletion is recorded and before its MachineDeployment is
// gone.
func chaosPoolDeletion(t *testing.T, c chaosRun) {
	sid := schematicID(c.Seed)
	xr := realCAPIPool(t, c.NS, c.Cluster, sid, 1, "20Gi")
	md := c.Cluster + "-" + poolName
	kmt := poolTemplate(t, reconcileTimeout, c.NS, xr.GetName())
	waitSettled(t, c.NS, md, kmt.GetName(), 1)
	waitLabelledInUse(t, harness.NodePool, c.NS, xr.GetName())
	l := startChaosLedger(t, c.NS)

	c.Fault.arm(t, reconcileTimeout, func(ctx context.Context) error {
		u, err := cp.Get(ctx, harness.MachineDeployment, c.NS, md)
		if err != nil {
			return err
		}
		if u == nil || u.GetDeletionTimestamp() != nil {
			return nil
		}
		p, err := cp.Get(ctx, harness.NodePool, c.NS, xr.GetName())
		if err != nil {
			return err
		}
		if p == nil || p.GetDeletionTimestamp() != nil || p.GetAnnotations()[harness.DeletionAttemptAnnotation] != "" {
			return nil
		}
		return fmt.Errorf("pool %s: no deletion recorded yet", xr.GetName())
	})
	deletePoolAgainIfCut(t, c.NS, xr.GetName(), md)
	c.Fault.wait(t)
	cp.Eventually(t, gcTimeout, "nothing of pool "+xr.GetName()+" to be left while Cluster "+c.Cluster+" lives", func(ctx context.Context) error {
		left, err := cp.PoolLeftovers(ctx, c.NS, xr.GetName(), md)
		if err != nil {
			return err
		}
		if len(left) > 0 {
			return fmt.Errorf("left: %v", left)
		}
		return nil
	})
	cp.WaitGone(t, gcTimeout, harness.NodePool, c.NS, xr.GetName())
	cp.MustGet(t, harness.Cluster, c.NS, c.Cluster)
	checkLedger(t, l, c.NS, ledgerWant{
		Shared: []string{goldenName(sid)},
		MayGo: func(e harness.Entry) bool {
			// Everything of the pool in its namespace; not the Cluster,
			// not the golden.
			return e.Namespace == c.NS && e.Kind != "Cluster"
		},
	})
	// The golden is kept: its catalog still lists it.
	cp.MustGet(t, harness.DataVolume, goldenNamespace, goldenName(sid))
	// A request the restart cut is not a refusal; an admission denial is.
	refusedIn(t, c.NS, unreachable)
}

// chaosAdoption: a pool the chart made is adopted by an XNodePool written
// for it; the fault fires as soon as the XNodePool exists.
func chaosAdoption(t *testing.T, c chaosRun) {
	sid := schematicID(c.Seed)
	chart := chartMadePool(t, c.NS+"-src", c.NS, c.Cluster, sid)
	// Step 4 of docs/platform.md's migration: the chart's objects named as
	// the pool composes them, so a first apply the restart cuts cannot
	// leave Crossplane an object it cannot read back (docs/reliability.md,
	// "adopting over a restart").
	for _, o := range []struct {
		ref  objectRef
		name string
	}{
		{objectRef{harness.MachineDeployment, chart.MD}, "machinedeployment"},
		{objectRef{harness.KubevirtMachineTemplate, chart.KMT}, "kubevirtmachinetemplate-" + chart.KMT},
		{objectRef{harness.TalosConfigTemplate, chart.TCT}, "talosconfigtemplate-" + chart.TCT},
	} {
		annotate(t, o.ref.gvk, c.NS, o.ref.name, harness.CompositionResourceNameAnnotation, o.name)
	}
	l := startChaosLedger(t, c.NS)
	xr := poolXR(c.NS, c.Cluster, sid, "{factory: {}}")
	c.Fault.arm(t, reconcileTimeout, func(ctx context.Context) error {
		u, err := cp.Get(ctx, harness.NodePool, c.NS, xr.GetName())
		if err != nil {
			return err
		}
		if u == nil {
			return fmt.Errorf("no XNodePool %s yet", xr.GetName())
		}
		return nil
	})
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	c.Fault.wait(t)
	waitControlledBy(t, xr, []objectRef{{harness.MachineDeployment, chart.MD}, {harness.KubevirtMachineTemplate, chart.KMT}, {harness.TalosConfigTemplate, chart.TCT}})
	rollsNothing(t, "adopting through a restart", c.NS, chart.MD, chart.KMT, chart.Before, chart.Machines, 30*time.Second)
	checkLedger(t, l, c.NS, ledgerWant{
		// The XNodePool, and what the chart did not make: the health
		// check and the pool's deletion guard.
		Created: map[string]int{"XNodePool": 1, "MachineHealthCheck": 1, "Usage": 1},
	})
	// A request the restart cut is not a refusal; an admission denial is.
	refusedIn(t, c.NS, unreachable)
}

// chaosMirrorSwitch: a catalog of a golden in use and one whose import
// stalls switches to a mirror and adds an image; the fault fires once the
// stalled golden is being deleted.
func chaosMirrorSwitch(t *testing.T, c chaosRun) {
	const mirror = "https://factory.mirror.e2e.internal/talos"
	catalog := "e2e-chaos-" + strings.TrimPrefix(c.NS, "e2e-chaos-")
	sidDone, sidStuck, sidNew := schematicID(c.Seed+"-done"), schematicID(c.Seed+"-stuck"), schematicID(c.Seed+"-new")
	done, stuck, added := goldenName(sidDone), goldenName(sidStuck), goldenName(sidNew)
	_, stuckBefore := stalledCatalog(t, catalog, sidDone, sidStuck)
	inNamespace(t, c.NS)
	pool, kmt := builtinPool(t, c.NS, c.Cluster, sidDone)
	waitGoldenPinned(t, pool, kmt, done)
	md := c.Cluster + "-" + poolName
	cp.WaitExists(t, reconcileTimeout, harness.MachineDeployment, c.NS, md)
	l := startChaosLedger(t, c.NS)

	c.Fault.arm(t, gcTimeout, func(ctx context.Context) error {
		dv, err := cp.Get(ctx, harness.DataVolume, goldenNamespace, stuck)
		if err != nil {
			return err
		}
		if dv != nil && dv.GetUID() == stuckBefore.GetUID() && dv.GetDeletionTimestamp() == nil {
			return fmt.Errorf("golden %s not being replaced yet", stuck)
		}
		return nil
	})
	cp.MustApply(t, factoryCatalog(catalog, mirror, "10Gi", sidDone, sidStuck, sidNew))
	c.Fault.wait(t)
	waitGoldenMadeAgain(t, stuckBefore, mirror+"/image/"+sidStuck+"/"+talosVersion+"/openstack-amd64.raw.xz", "10Gi")
	cp.WaitExists(t, reconcileTimeout, harness.DataVolume, goldenNamespace, added)
	completeGolden(t, stuck)
	completeGolden(t, added)
	waitDataVolumePhase(t, goldenNamespace, stuck, phaseSucceeded)
	waitDataVolumePhase(t, goldenNamespace, added, phaseSucceeded)
	cp.WaitCondition(t, reconcileTimeout, harness.WorkerImageCatalog, "", catalog, "GoldenImagesReady", "True")
	cp.WaitCondition(t, reconcileTimeout, harness.WorkerImageCatalog, "", catalog, "Synced", "True")
	if got, err := machineDeploymentTemplate(context.Background(), c.NS, md); err != nil || got != kmt.GetName() {
		t.Errorf("MachineDeployment %s/%s on %q (%v), want %s: the switch moved the pool", c.NS, md, got, err, kmt.GetName())
	}
	checkLedger(t, l, c.NS, ledgerWant{
		// The stalled golden and its claim, made again once; the new
		// golden and its claim.
		Replaced: []harness.ObjectKey{
			{Kind: "DataVolume", Namespace: goldenNamespace, Name: stuck},
			{Kind: "PersistentVolumeClaim", Namespace: goldenNamespace, Name: stuck},
		},
		Shared: []string{done, stuck, added, "workerimage-clone-" + catalog},
		MayGo: func(e harness.Entry) bool {
			return e.Namespace == goldenNamespace && e.Name == stuck
		},
	})
	// A request the restart cut is not a refusal; an admission denial is.
	refusedIn(t, c.NS, unreachable)
}
