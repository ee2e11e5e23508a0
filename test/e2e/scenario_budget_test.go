package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// The clone budget on the real CDI and Cluster API: a pool on a copy of the
// shipped Composition whose Input sets cloneBudget.storageClasses for the
// suite's default class is created with 0 replicas and scaled to many; the
// function raises its MachineDeployment's replicas in steps
// (internal/clonebudget Decide), so CDI never clones more of the pool's
// worker disks at once than the budget. Everything between the replicas
// and the disk is the real chain: Cluster API's MachineSet and Machines,
// CABPT, CAPK's VirtualMachines, the KubeVirt stand-in's DataVolumes, CDI's
// CSI clones (harness/standins.go).

// poolLabel is the function's label of a pool's templates and worker disks
// (internal/labels Pool); KubeVirt copies it from the dataVolumeTemplate
// onto the disk.
const poolLabel = "workerimage.cozystack.io/pool"

// budgetCloneDuration is how long the provisioner stand-in takes to make a
// CSI clone in the budget scenarios (harness.SetCSICloneDuration): at once,
// the clones of a 30-worker scale-up overlap little, as CDI's own steps
// take a few seconds and the chain makes the disks over half a minute; a
// storage backend's copy makes them overlap, which is what the budget
// bounds.
const budgetCloneDuration = 5 * time.Second

// budgetSampleEvery is how often a scale-up under a budget is sampled.
const budgetSampleEvery = 500 * time.Millisecond

// budgetSample is one look at a pool scaling up under a clone budget.
type budgetSample struct {
	// At is the time since the pool was asked for its workers.
	At time.Duration
	// Cloning are the pool's worker DataVolumes whose phase is neither
	// Succeeded nor Failed (a disk just created, with no phase yet,
	// included): clones in flight. Succeeded and Failed are the others.
	Cloning, Succeeded, Failed int
	// Counted is what the budget counts of the pool (internal/nodepool
	// budget.go ownClones), as the sample sees it: the disks cloning plus
	// the replicas that have no disk yet.
	Counted int
	// Phases counts the worker DataVolumes by phase ("" for none yet).
	Phases map[string]int
	// Replicas is the MachineDeployment's spec.replicas (-1 before it
	// exists); Machines are the deployment's Machines.
	Replicas int64
	Machines int
	// Capacity is the XNodePool's CloneCapacity as status/reason.
	Capacity, CapacityMessage string
	Err                       string
}

func (s budgetSample) String() string {
	if s.Err != "" {
		return fmt.Sprintf("t=%5.1fs error: %s", s.At.Seconds(), s.Err)
	}
	return fmt.Sprintf("t=%5.1fs cloning=%d succeeded=%d failed=%d replicas=%d machines=%d counted=%d CloneCapacity=%s phases=%v",
		s.At.Seconds(), s.Cloning, s.Succeeded, s.Failed, s.Replicas, s.Machines, s.Counted, s.Capacity, s.Phases)
}

// budgetRun is what a scale-up under a clone budget did.
type budgetRun struct {
	Workers, Budget int64
	Samples         []budgetSample
	// ToSucceeded is the time from the scale to every worker disk
	// Succeeded; ToSettled to the deployment settled (every Machine with a
	// Node, the counters).
	ToSucceeded, ToSettled time.Duration
	// MaxCloning is the most clones in flight in a sample, first seen at
	// MaxAt.
	MaxCloning int
	MaxAt      time.Duration
	// MaxCounted is the most the budget's own count reached in a sample.
	MaxCounted int
	XR         string
	NS         string
}

// timeline returns one line per step of the samples: the sample nearest
// each multiple of step.
func (r budgetRun) timeline(step time.Duration) []string {
	var out []string
	next := time.Duration(0)
	for i, s := range r.Samples {
		last := i == len(r.Samples)-1
		if s.At < next && !last {
			continue
		}
		out = append(out, s.String())
		for next <= s.At {
			next += step
		}
	}
	return out
}

// scaleUpUnderBudget creates, in a fresh namespace ns, a Cluster, a ready
// golden of its own and a pool of 0 workers on a copy of the shipped
// Composition whose Input sets cloneBudget.storageClasses[the default
// class] to budget (0: unbounded), then scales it to workers and samples
// it every budgetSampleEvery until every worker disk is Succeeded and Cluster
// API has settled the deployment, within timeout. The provisioner stand-in
// takes cloneDuration for each CSI clone meanwhile
// (harness.SetCSICloneDuration).
func scaleUpUnderBudget(t *testing.T, ns, cluster, seed string, workers, budget int64, cloneDuration, timeout time.Duration) budgetRun {
	t.Helper()
	return scaleUpUnderBudgetWith(t, ns, cluster, seed, workers, budget, cloneDuration, timeout, budgetOptions{})
}

// budgetOptions are what a scale-up under a budget adds to the plain one.
type budgetOptions struct {
	// Input edits the copy of the Composition's Input further, after the
	// budget is set.
	Input func(input map[string]any) error
	// BeforeScale runs once the pool's deployment exists with 0 replicas,
	// before the pool is scaled; it is given the golden's name.
	BeforeScale func(t *testing.T, golden string)
}

// scaleUpUnderBudgetWith is scaleUpUnderBudget with opts.
func scaleUpUnderBudgetWith(t *testing.T, ns, cluster, seed string, workers, budget int64, cloneDuration, timeout time.Duration, opts budgetOptions) budgetRun {
	t.Helper()
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	if err := cp.SetCSICloneDuration(cloneDuration); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.SetCSICloneDuration(0) })
	inNamespace(t, ns)
	capiCluster(t, ns, cluster)
	sid := schematicID(seed)
	readyGolden(t, ns, sid)
	comp := compositionWith(t, harness.NodePool, "e2e-budget-"+ns, func(input map[string]any) error {
		if err := unstructured.SetNestedField(input, budget, "cloneBudget", "storageClasses", harness.DefaultStorageClass); err != nil {
			return err
		}
		if opts.Input != nil {
			return opts.Input(input)
		}
		return nil
	})
	pool := func(replicas int64) *unstructured.Unstructured {
		xr := sizedPool(ns, cluster, sid, replicas, "20Gi")
		_ = unstructured.SetNestedField(xr.Object, comp, "spec", "crossplane", "compositionRef", "name")
		return xr
	}
	md := cluster + "-" + poolName
	xr := pool(0)
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	kmt := poolTemplate(t, reconcileTimeout, ns, xr.GetName())
	// The worker disks carry the pool's label from the template's
	// dataVolumeTemplate (KubeVirt copies it onto the disk).
	dvts, _, _ := unstructured.NestedSlice(kmt.Object, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates")
	var poolHash string
	if len(dvts) > 0 {
		dvt, _ := dvts[0].(map[string]any)
		poolHash, _, _ = unstructured.NestedString(dvt, "metadata", "labels", poolLabel)
	}
	if poolHash == "" {
		t.Fatalf("KubevirtMachineTemplate %s/%s: the first dataVolumeTemplate has no %s label; the pool's disks cannot be told apart", ns, kmt.GetName(), poolLabel)
	}
	disks := poolLabel + "=" + poolHash
	cp.Eventually(t, reconcileTimeout, fmt.Sprintf("MachineDeployment %s/%s to exist with 0 replicas", ns, md), func(ctx context.Context) error {
		s, err := readDeployment(ctx, ns, md)
		if err != nil {
			return err
		}
		if s.Replicas != 0 || s.Template != kmt.GetName() {
			return fmt.Errorf("%s", s)
		}
		return nil
	})

	if opts.BeforeScale != nil {
		opts.BeforeScale(t, goldenName(sid))
	}

	run := budgetRun{Workers: workers, Budget: budget, XR: xr.GetName(), NS: ns}
	var mu sync.Mutex
	sctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	start := time.Now()
	sample := func(parent context.Context) budgetSample {
		ctx, cancel := context.WithTimeout(parent, 10*time.Second)
		defer cancel()
		s := budgetSample{At: time.Since(start), Replicas: -1, Phases: map[string]int{}}
		var errs []string
		dvs, err := cp.List(ctx, harness.DataVolume, ns, disks)
		if err != nil {
			errs = append(errs, err.Error())
		} else {
			for _, dv := range dvs {
				p, _, _ := unstructured.NestedString(dv.Object, "status", "phase")
				s.Phases[p]++
				switch p {
				case phaseSucceeded:
					s.Succeeded++
				case phaseFailed:
					s.Failed++
				default:
					s.Cloning++
				}
			}
		}
		if u, err := cp.Get(ctx, harness.MachineDeployment, ns, md); err != nil {
			errs = append(errs, err.Error())
		} else if u != nil {
			s.Replicas, _, _ = unstructured.NestedInt64(u.Object, "spec", "replicas")
		}
		if err == nil {
			s.Counted = s.Cloning + max(int(s.Replicas)-len(dvs), 0)
		}
		if ms, err := cp.List(ctx, harness.Machine, ns, harness.DeploymentNameLabel+"="+md); err != nil {
			errs = append(errs, err.Error())
		} else {
			s.Machines = len(ms)
		}
		if u, err := cp.Get(ctx, harness.NodePool, ns, xr.GetName()); err != nil {
			errs = append(errs, err.Error())
		} else if c := harness.Condition(u, "CloneCapacity"); c != nil {
			s.Capacity = fmt.Sprintf("%v/%v", c["status"], c["reason"])
			s.CapacityMessage, _ = c["message"].(string)
		}
		s.Err = strings.Join(errs, "; ")
		return s
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			s := sample(sctx)
			if sctx.Err() != nil {
				return
			}
			mu.Lock()
			run.Samples = append(run.Samples, s)
			mu.Unlock()
			select {
			case <-sctx.Done():
				return
			case <-time.After(budgetSampleEvery):
			}
		}
	}()
	finish := func() {
		stop()
		wg.Wait()
		// One last sample, after the waits below.
		run.Samples = append(run.Samples, sample(context.Background()))
	}
	t.Cleanup(func() {
		if sctx.Err() == nil {
			stop()
			wg.Wait()
		}
		if t.Failed() {
			for _, l := range run.timeline(5 * time.Second) {
				t.Logf("timeline before the failure: %s", l)
			}
		}
	})

	cp.MustApply(t, pool(workers))
	deadline := start.Add(timeout)
	cp.Eventually(t, timeout, fmt.Sprintf("CDI to clone all %d worker disks of pool %s/%s (budget %d)", workers, ns, xr.GetName(), budget), func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if len(run.Samples) == 0 {
			return fmt.Errorf("no sample yet")
		}
		last := run.Samples[len(run.Samples)-1]
		if last.Err != "" || int64(last.Succeeded) != workers || last.Cloning+last.Failed != 0 {
			return fmt.Errorf("%s", last)
		}
		run.ToSucceeded = last.At
		return nil
	})
	waitSettledWithin(t, max(time.Until(deadline), capiTimeout), ns, md, kmt.GetName(), workers)
	run.ToSettled = time.Since(start)
	finish()
	for _, s := range run.Samples {
		if s.Cloning > run.MaxCloning {
			run.MaxCloning, run.MaxAt = s.Cloning, s.At
		}
		run.MaxCounted = max(run.MaxCounted, s.Counted)
	}
	return run
}

// On the real CDI, a pool scaled from 0 to 30 workers with a clone budget
// of 5 on its class never has more than 5 worker DataVolumes cloning in any
// sample, and ends with all 30 Succeeded, 30 Machines with Nodes and a
// MachineDeployment of 30 replicas. The pool reports CloneCapacity
// False/WaitingForCloneBudget while workers wait, and True at the end. Its
// deployment's replicas only grow (the budget never shrinks a pool) and
// never pass the spec's 30.
func TestCloneBudgetBoundsAScaleUp(t *testing.T) {
	const workers, budget = 30, 5
	run := scaleUpUnderBudget(t, "e2e-budget", "budget1", "clone-budget", workers, budget, budgetCloneDuration, 8*time.Minute)
	for _, l := range run.timeline(5 * time.Second) {
		t.Logf("timeline: %s", l)
	}
	t.Logf("budget %d, CSI clone %s: at most %d cloning (first at %s), at most %d counted by the budget; all %d Succeeded after %s, settled after %s; %d samples",
		budget, budgetCloneDuration, run.MaxCloning, run.MaxAt.Round(100*time.Millisecond), run.MaxCounted, workers, run.ToSucceeded.Round(100*time.Millisecond), run.ToSettled.Round(time.Second), len(run.Samples))
	seen := map[string]bool{}
	for _, s := range run.Samples {
		if m := s.Capacity + " " + s.CapacityMessage; !seen[m] {
			seen[m] = true
			t.Logf("CloneCapacity at t=%.1fs: %s", s.At.Seconds(), m)
		}
	}

	var over []string
	var waited bool
	var prev int64 = -1
	for _, s := range run.Samples {
		if s.Cloning > budget {
			over = append(over, s.String())
		}
		if s.Capacity == "False/WaitingForCloneBudget" {
			waited = true
		}
		if s.Replicas >= 0 {
			if s.Replicas < prev {
				t.Errorf("MachineDeployment replicas went down from %d to %d during the scale-up: %s", prev, s.Replicas, s)
			}
			if s.Replicas > workers {
				t.Errorf("MachineDeployment replicas %d above the spec's %d: %s", s.Replicas, workers, s)
			}
			prev = s.Replicas
		}
	}
	if len(over) > 0 {
		t.Errorf("more than %d worker DataVolumes cloning at once in %d sample(s):\n%s", budget, len(over), strings.Join(over, "\n"))
	}
	failed := 0
	for _, s := range run.Samples {
		if s.Err != "" {
			failed++
		}
	}
	if failed > len(run.Samples)/10 {
		t.Errorf("%d of %d samples could not read the pool: the bound was not watched throughout", failed, len(run.Samples))
	}
	if run.MaxCloning == 0 {
		t.Errorf("no sample saw a worker DataVolume cloning: the scenario cannot tell a bounded scale-up from an unbounded one")
	}
	if !waited {
		t.Errorf("no sample saw CloneCapacity False/WaitingForCloneBudget while the pool grew")
	}
	last := run.Samples[len(run.Samples)-1]
	if last.Succeeded != workers || last.Cloning != 0 || last.Failed != 0 || last.Replicas != workers || last.Machines != workers {
		t.Errorf("at the end: %s; want %d Succeeded worker disks, %d replicas and Machines", last, workers, workers)
	}
	got := cp.WaitCondition(t, reconcileTimeout, harness.NodePool, run.NS, run.XR, "CloneCapacity", "True")
	t.Logf("CloneCapacity at the end: %v", harness.Condition(got, "CloneCapacity"))
	nothingRefusedIn(t, run.NS)
}

// TestMeasureCloneBudget measures a 0 → E2E_MEASURE_BUDGET_WORKERS (30)
// scale-up with a clone budget of E2E_MEASURE_BUDGET_LIMIT (5) and without
// one (0, unbounded), each on a golden and namespace of its own, and logs
// the clones in flight every 5 s and the time to all Succeeded
// (docs/performance.md records them). It runs only with
// E2E_MEASURE_BUDGET=1: two large scale-ups take longer than CI spends.
func TestMeasureCloneBudget(t *testing.T) {
	if os.Getenv("E2E_MEASURE_BUDGET") == "" {
		t.Skip("a measurement, not a check: run it with E2E_MEASURE_BUDGET=1")
	}
	workers := int64(envInt(t, "E2E_MEASURE_BUDGET_WORKERS", 30))
	limit := int64(envInt(t, "E2E_MEASURE_BUDGET_LIMIT", 5))
	clone := budgetCloneDuration
	if v := os.Getenv("E2E_MEASURE_BUDGET_CLONE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			t.Fatalf("E2E_MEASURE_BUDGET_CLONE=%q: want a duration, 0s for none", v)
		}
		clone = d
	}
	for _, budget := range []int64{limit, 0} {
		t.Run(fmt.Sprintf("budget-%d", budget), func(t *testing.T) {
			ns := fmt.Sprintf("e2e-measure-budget-%d", budget)
			run := scaleUpUnderBudget(t, ns, fmt.Sprintf("mb%d", budget), ns, workers, budget, clone, time.Duration(workers)*time.Minute)
			for _, l := range run.timeline(5 * time.Second) {
				t.Logf("MEASURE budget=%d %s", budget, l)
			}
			t.Logf("MEASURE budget=%d workers=%d clone=%s: max cloning %d (first at %s), max counted by the budget %d; all Succeeded after %s; settled after %s; %d samples",
				budget, workers, clone, run.MaxCloning, run.MaxAt.Round(100*time.Millisecond), run.MaxCounted, run.ToSucceeded.Round(100*time.Millisecond), run.ToSettled.Round(time.Second), len(run.Samples))
			// Let the pool go before the next run, so that its teardown
			// does not load the next one.
			deletePool(t, ns, run.XR, fmt.Sprintf("mb%d-%s", budget, poolName))
			cp.Eventually(t, 10*time.Minute, "pool "+run.XR+" and its workers to be gone", func(ctx context.Context) error {
				ms, err := cp.List(ctx, harness.Machine, ns, "")
				if err != nil {
					return err
				}
				dvs, err := cp.List(ctx, harness.DataVolume, ns, "")
				if err != nil {
					return err
				}
				if len(ms)+len(dvs) > 0 {
					return fmt.Errorf("%d Machines, %d DataVolumes left", len(ms), len(dvs))
				}
				return nil
			})
		})
	}
}
