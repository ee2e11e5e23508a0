package e2e

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// TestMeasureReconcileRates measures what a pool and a catalog cost
// Crossplane on this core (CROSSPLANE_VERSION, v2.4.2 by default), with the
// TTLs a platform runs (the Input's polling: steady 1m or
// E2E_MEASURE_STEADY, in progress 15s, the function's defaults) instead of
// the suite's 5 s: function calls per
// pool while it scales from 0 to E2E_MEASURE_WORKERS (50) and while all of
// them roll, per settled pool and per catalog over E2E_MEASURE_WINDOW
// (10m), scaled to an hour; then Crossplane's RSS before and after 5,000
// PVCs and 2,000 Services are created (kinds the function requires: a
// pool's golden PVC, a Join pool's Services). It asserts nothing about the
// figures (they are read, not pinned: docs/performance.md) beyond the pool
// settling, and runs only with E2E_MEASURE=1 (make e2e-measure): a roll of
// 50 workers takes longer than CI can spend.
func TestMeasureReconcileRates(t *testing.T) {
	if os.Getenv("E2E_MEASURE") == "" {
		t.Skip("a measurement, not a check: run it with make e2e-measure")
	}
	workers := int64(envInt(t, "E2E_MEASURE_WORKERS", 50))
	window := envDuration(t, "E2E_MEASURE_WINDOW", 10*time.Minute)
	steady := envDuration(t, "E2E_MEASURE_STEADY", time.Minute)
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	const ns, cluster, catalog = "e2e-measure", "measure", "e2e-measure"
	inNamespace(t, ns)
	capiCluster(t, ns, cluster)
	sid := schematicID("measure")

	production := func(input map[string]any) error {
		return unstructured.SetNestedMap(input, map[string]any{"steady": steady.String(), "inProgress": "15s"}, "polling")
	}
	catComp := compositionWith(t, harness.WorkerImageCatalog, "e2e-measure-catalog", production)
	poolComp := compositionWith(t, harness.NodePool, "e2e-measure-pool", production)

	readyGoldenOn(t, catComp, catalog, sid)

	pool := func(labels map[string]any) *unstructured.Unstructured {
		xr := sizedPool(ns, cluster, sid, workers, "20Gi")
		_ = unstructured.SetNestedField(xr.Object, poolComp, "spec", "crossplane", "compositionRef", "name")
		if labels != nil {
			_ = unstructured.SetNestedMap(xr.Object, labels, "spec", "labels")
		}
		return xr
	}
	md := cluster + "-" + poolName
	xr := pool(nil)
	calls := func(from int64, kind, ns, name string) (int, int) {
		t.Helper()
		c, r, err := cp.FunctionCalls(from, kind, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		return c, r
	}
	offset := func() int64 {
		t.Helper()
		o, err := cp.FunctionLogOffset()
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	long := time.Duration(workers)*time.Minute + 10*time.Minute

	// Scale from 0 to workers.
	from, start := offset(), time.Now()
	events, mapped := countEvents(t, ns, poolEventKinds...), breakerEvents(t)
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	kmt := poolTemplate(t, reconcileTimeout, ns, xr.GetName()).GetName()
	waitSettledWithin(t, long, ns, md, kmt, workers)
	c, r := calls(from, harness.NodePool.Kind, ns, xr.GetName())
	t.Logf("MEASURE create 0->%d workers: %s, %d calls (%d composed, %d requirements only); Crossplane mapped %.0f watch events to the pool; in its namespace: %s", workers, time.Since(start).Round(time.Second), c+r, c, r, breakerEvents(t)-mapped, events.stop())

	// Roll every worker: a Talos label is in the bootstrap template.
	before := bootstrapTemplateOf(t, ns, md)
	uctx, ucancel := context.WithTimeout(context.Background(), 30*time.Second)
	uids, err := machineUIDs(uctx, ns, md)
	ucancel()
	if err != nil || int64(len(uids)) != workers {
		t.Fatalf("Machines of the pool: %v, %v", uids, err)
	}
	from, start = offset(), time.Now()
	events, mapped = countEvents(t, ns, poolEventKinds...), breakerEvents(t)
	// Crossplane v2.4 drops the watch events of a composite whose circuit
	// breaker opened (internal/circuit, core.go: burst 100, refill 1/s) and
	// says so in its Responsive condition.
	unresponsive := 0
	cp.MustApply(t, pool(map[string]any{"workload": "measure"}))
	cp.Eventually(t, long, fmt.Sprintf("Cluster API to roll all %d workers of %s onto a new TalosConfigTemplate", workers, md), func(ctx context.Context) error {
		s, err := readDeployment(ctx, ns, md)
		if err != nil {
			return err
		}
		u, err := cp.Existing(ctx, harness.MachineDeployment, ns, md)
		if err != nil {
			return err
		}
		boot, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "bootstrap", "configRef", "name")
		if x, err := cp.Existing(ctx, harness.NodePool, ns, xr.GetName()); err == nil && harness.ConditionStatus(x, "Responsive") == "False" {
			unresponsive++
		}
		if boot == before || !s.settledOn(kmt, workers) || len(s.Sets) != 1 {
			return fmt.Errorf("bootstrap %s; %s", boot, s)
		}
		got, err := machineUIDs(ctx, ns, md)
		if err != nil {
			return err
		}
		for m, uid := range got {
			if uids[m] == uid {
				return fmt.Errorf("Machine %s not replaced yet", m)
			}
		}
		return nil
	})
	c, r = calls(from, harness.NodePool.Kind, ns, xr.GetName())
	t.Logf("MEASURE roll %d workers: %s, %d calls (%d composed, %d requirements only); Responsive=False in %d samples; Crossplane mapped %.0f watch events to the pool; in its namespace: %s", workers, time.Since(start).Round(time.Second), c+r, c, r, unresponsive, breakerEvents(t)-mapped, events.stop())

	// Settled: the pool and the catalog over the window.
	from, start = offset(), time.Now()
	events, mapped = countEvents(t, ns, poolEventKinds...), breakerEvents(t)
	time.Sleep(window)
	elapsed := time.Since(start)
	pc, pr := calls(from, harness.NodePool.Kind, ns, xr.GetName())
	cc, cr := calls(from, harness.WorkerImageCatalog.Kind, "", catalog)
	perHour := func(n int) float64 { return float64(n) * float64(time.Hour) / float64(elapsed) }
	t.Logf("MEASURE steady TTL %s", steady)
	t.Logf("MEASURE settled pool over %s: %d calls (%d composed, %d requirements only), %.0f per hour; Crossplane mapped %.0f watch events to the pool; in its namespace: %s", elapsed.Round(time.Second), pc+pr, pc, pr, perHour(pc+pr), breakerEvents(t)-mapped, events.stop())
	t.Logf("MEASURE settled catalog over %s: %d calls (%d composed, %d requirements only), %.0f per hour", elapsed.Round(time.Second), cc+cr, cc, cr, perHour(cc+cr))

	// Crossplane's memory with many objects of kinds the function requires.
	measureCrossplaneRSS(t)
}

// measureCrossplaneRSS creates 5,000 PVCs, then 2,000 Services, in a
// namespace of their own and logs what each adds to Crossplane's RSS and
// heap half a minute later (an informer of the kind, if Crossplane runs one,
// has them by then).
func measureCrossplaneRSS(t *testing.T) {
	t.Helper()
	const ns = "e2e-measure-load"
	inNamespace(t, ns)
	rssNow := func() int64 {
		t.Helper()
		v, err := cp.CrossplaneRSS()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	heapNow := func() int64 {
		t.Helper()
		hctx, hcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer hcancel()
		v, err := cp.CrossplaneHeapInUse(hctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	mib := func(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
	before, heapBefore := rssNow(), heapNow()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	// No such class: the claims stay Pending, as many claims of a real
	// cluster are; the object is what Crossplane caches.
	createMany(ctx, t, harness.PVC, ns, 5000, func(i int) string {
		return fmt.Sprintf(`
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: load-%d, namespace: %s, labels: {app.kubernetes.io/name: load}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: e2e-measure-none
  resources: {requests: {storage: 1Gi}}
`, i, ns)
	})
	time.Sleep(30 * time.Second)
	rssPVCs, heapPVCs := rssNow(), heapNow()
	createMany(ctx, t, harness.Service, ns, 2000, func(i int) string {
		return fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: load-%d, namespace: %s, labels: {app.kubernetes.io/name: load}}
spec:
  clusterIP: None
  ports: [{name: https, port: 6443}]
  selector: {app: load-%d}
`, i, ns, i)
	})
	time.Sleep(30 * time.Second)
	rssAll, heapAll := rssNow(), heapNow()
	delta := func(a, b int64) string { return fmt.Sprintf("%+.1f MiB", float64(b-a)/(1<<20)) }
	t.Logf("MEASURE Crossplane RSS %s, heap in use %s; 5,000 PVCs: RSS %s, heap %s; 2,000 Services: RSS %s, heap %s",
		mib(before), mib(heapBefore), delta(before, rssPVCs), delta(heapBefore, heapPVCs), delta(rssPVCs, rssAll), delta(heapPVCs, heapAll))
}

// breakerEvents is how many watch events Crossplane's circuit breaker has
// counted for XNodePools so far, allowed or not: the events Crossplane
// mapped to a pool (internal/circuit/mapfunc.go). The measurement runs one
// pool, so they are its own.
func breakerEvents(t *testing.T) float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := cp.CrossplaneMetric(ctx, "circuit_breaker_events_total", `controller="composite/xnodepools.workerimage.cozystack.io"`)
	if err != nil {
		// No event counted yet: the series appears with the first.
		return 0
	}
	return v
}

// createMany creates n objects of gvk in ns, the i-th from manifest(i).
func createMany(ctx context.Context, t *testing.T, gvk schema.GroupVersionKind, ns string, n int, manifest func(i int) string) {
	t.Helper()
	ri, err := cp.Resource(gvk, ns)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := ri.Create(ctx, harness.MustObject(manifest(i)), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s %d of %d: %v", gvk.Kind, i+1, n, err)
		}
	}
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a positive duration", name, v)
	}
	return d
}

// eventCounter counts the watch events of the kinds a pool composes or
// requires in its namespace: each is an event Crossplane v2.4 maps to the
// pool (composed resources and required ones alike), which its circuit
// breaker counts.
type eventCounter struct {
	mu     sync.Mutex
	counts map[string]int
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// poolEventKinds are what a node pool composes or requires in its own
// namespace (internal/nodepool/world.go, emit.go).
var poolEventKinds = []schema.GroupVersionKind{
	harness.MachineDeployment, harness.MachineSet, harness.MachineHealthCheck, harness.KubevirtMachineTemplate,
	harness.TalosConfigTemplate, harness.DataVolume, harness.PVC, harness.Usage,
}

// countEvents starts counting events of kinds in ns from now on.
func countEvents(t *testing.T, ns string, kinds ...schema.GroupVersionKind) *eventCounter {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	e := &eventCounter{counts: map[string]int{}, cancel: cancel}
	for _, gvk := range kinds {
		ri, err := cp.Resource(gvk, ns)
		if err != nil {
			t.Fatal(err)
		}
		list, err := ri.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			// The API server ends a watch after a while (its
			// --min-request-timeout); watch again from the last event seen.
			rv := list.GetResourceVersion()
			for ctx.Err() == nil {
				w, err := ri.Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
				if err != nil {
					return
				}
				for ev := range w.ResultChan() {
					if ev.Type == watch.Error {
						// Too old a version (410): start again from now.
						if l, err := ri.List(ctx, metav1.ListOptions{}); err == nil {
							rv = l.GetResourceVersion()
						}
						break
					}
					if o, ok := ev.Object.(*unstructured.Unstructured); ok {
						rv = o.GetResourceVersion()
					}
					e.mu.Lock()
					e.counts[gvk.Kind]++
					e.mu.Unlock()
				}
				w.Stop()
			}
		}()
	}
	return e
}

// stop ends the count and returns it as "Kind n" pairs, largest first.
func (e *eventCounter) stop() string {
	e.cancel()
	e.wg.Wait()
	e.mu.Lock()
	defer e.mu.Unlock()
	kinds := make([]string, 0, len(e.counts))
	total := 0
	for k, n := range e.counts {
		kinds = append(kinds, k)
		total += n
	}
	sort.Slice(kinds, func(i, j int) bool { return e.counts[kinds[i]] > e.counts[kinds[j]] })
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, e.counts[k]))
	}
	return fmt.Sprintf("%d events (%s)", total, strings.Join(parts, ", "))
}
