package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// TestMeasureControlPlaneLoad measures the control plane with many pools
// and tenants at once (make e2e-load; E2E_LOAD=1): E2E_LOAD_POOLS (200)
// pools of 0 or 1 worker (one in E2E_LOAD_WORKER_EVERY, 10, has one, so the
// machine measures the control plane, not the stand-ins) in E2E_LOAD_TENANTS (20) namespaces against one catalog,
// with two function replicas that Crossplane really spreads its calls over
// (harness.StartFunctionReplica: one name, two loopback addresses, gRPC's
// round_robin); then E2E_LOAD_ROLL (50) of them rolled and E2E_LOAD_DELETE
// (50) deleted; then the same number of pools created twice, once alone and
// once while E2E_LOAD_HOSTILE (10) tenants rewrite invalid pools in a loop,
// as their own users (E2E_LOAD_HOSTILE_AS=admin: as the suite's admin),
// in API Priority and Fairness's global-default or, with
// E2E_LOAD_TENANT_SHARES=N, a priority level of N shares of their own.
// Each step reports its settle time, the function calls and CPU per pool
// (both replicas, and each replica's share of the calls), the p99 of
// Crossplane's RunFunction latency (crossplane_function_run_function_seconds,
// the bucket it falls in) against Crossplane's 2-minute reconcile timeout
// (internal/controller/apiextensions/composite/reconciler.go, v2.4.2), and
// Crossplane's and the kube-apiserver's RSS; E2E_LOAD_RUNS (3) runs. It
// asserts that every pool ends as asked, nothing about the figures
// (docs/performance.md records them).
func TestMeasureControlPlaneLoad(t *testing.T) {
	if os.Getenv("E2E_LOAD") == "" {
		t.Skip("a measurement, not a check: run it with make e2e-load")
	}
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	l := loadShape{
		Pools:   envInt(t, "E2E_LOAD_POOLS", 200),
		Tenants: envInt(t, "E2E_LOAD_TENANTS", 20),
		Roll:    envInt(t, "E2E_LOAD_ROLL", 50),
		Delete:  envInt(t, "E2E_LOAD_DELETE", 50),
		Hostile: envInt(t, "E2E_LOAD_HOSTILE", 10),
		// 0: the tenants' writes fall to global-default (tenantFlow).
		TenantShares: envInt(t, "E2E_LOAD_TENANT_SHARES", 0),
		// The hostile tenants write as the suite's admin, exempt from API
		// Priority and Fairness, rather than as users of their own.
		HostileAsAdmin: os.Getenv("E2E_LOAD_HOSTILE_AS") == "admin",
		// One pool in ten has a worker: with one in two, the first 200-pool
		// run spent over 17 minutes on the 100 workers' chain (Cluster
		// API, CABPT, CAPK, the VM and kubelet stand-ins, CDI's clones: 22
		// ready, 27 disks made) after every MachineDeployment was composed,
		// measuring the stand-ins rather than the control plane.
		WorkerEvery: max(envInt(t, "E2E_LOAD_WORKER_EVERY", 10), 1),
	}
	runs := envInt(t, "E2E_LOAD_RUNS", 3)
	if _, err := cp.StartFunctionReplica(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.StopFunctionReplicas(context.Background()); err != nil {
			t.Errorf("cannot point the functions back at one replica: %v", err)
		}
	})
	l.SID = schematicID("load")
	readyGolden(t, "e2e-load", l.SID)
	for run := 1; run <= runs; run++ {
		t.Run(fmt.Sprintf("run%d", run), func(t *testing.T) { l.run(t, run) })
	}
}

// loadShape is what one load run creates.
type loadShape struct {
	Pools, Tenants, Roll, Delete, Hostile, WorkerEvery, TenantShares int
	SID                                                              string
	HostileAsAdmin                                                   bool
}

// loadPool is one pool of a load run.
type loadPool struct {
	NS, Name, MD string
	Replicas     int64
	DiskSize     string
}

func (p loadPool) xr(sid string) *unstructured.Unstructured {
	xr := sizedPool(p.NS, loadCluster, sid, p.Replicas, p.DiskSize)
	pool := strings.TrimPrefix(p.Name, loadCluster+"-")
	xr.SetName(p.Name)
	_ = unstructured.SetNestedField(xr.Object, pool, "spec", "poolName")
	return xr
}

const loadCluster = "load"

func (l loadShape) namespace(run, tenant int) string {
	return fmt.Sprintf("e2e-load-%d-%02d", run, tenant)
}

// pools returns n pools named prefix<k>, spread over the tenants, one in
// every l.WorkerEvery with one worker and the rest with none.
func (l loadShape) pools(run int, prefix string, n int) []loadPool {
	out := make([]loadPool, 0, n)
	for k := range n {
		name := fmt.Sprintf("%s-%s%03d", loadCluster, prefix, k)
		var replicas int64
		if k%l.WorkerEvery == 0 {
			replicas = 1
		}
		out = append(out, loadPool{NS: l.namespace(run, k%l.Tenants), Name: name, MD: name, Replicas: replicas, DiskSize: "20Gi"})
	}
	return out
}

// loadFigures are one step's measurements.
type loadFigures struct {
	Settle     time.Duration
	Calls      float64
	PerReplica []float64
	// Fatal is the calls (both replicas) that ended in a fatal result: in
	// the hostile step, the invalid pools' share of the calls.
	Fatal       float64
	CPU         time.Duration
	P99, Bucket float64
	RunCalls    float64
	XPRSS, API  int64
	// APICPU and XPCPU are the kube-apiserver's and Crossplane's CPU time
	// over the step; Requests the apiserver's requests over it, per
	// "VERB resource" (harness.APIServerRequests).
	APICPU, XPCPU time.Duration
	Requests      map[string]float64
}

// measure runs act, waits (up to timeout) until settled returns nil, and
// returns what it cost.
func measure(t *testing.T, what string, pools int, timeout time.Duration, act func(), settled func(context.Context) error) loadFigures {
	t.Helper()
	ctx := context.Background()
	replicas := cp.FunctionReplicas()
	calls := func(labels ...string) []float64 {
		out := make([]float64, len(replicas))
		for i, p := range replicas {
			v, err := p.Metric(ctx, "function_worker_image_calls_total", labels...)
			if errors.Is(err, harness.ErrNoSeries) && len(labels) > 0 {
				continue // no call of that outcome yet
			}
			if err != nil {
				t.Fatalf("%s: %v", p.Name, err)
			}
			out[i] = v
		}
		return out
	}
	const fatal = `outcome="fatal"`
	cpu := func() time.Duration {
		var sum time.Duration
		for _, p := range replicas {
			c, err := p.CPU()
			if err != nil {
				t.Fatal(err)
			}
			sum += c
		}
		return sum
	}
	hist := func() harness.Histogram {
		h, err := cp.CrossplaneHistogram(ctx, "function_run_function_seconds")
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	procCPU := func(of func() (time.Duration, error)) time.Duration {
		c, err := of()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	requests := func() map[string]float64 {
		r, err := cp.APIServerRequests(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	c0, fatal0, cpu0, h0 := calls(), calls(fatal), cpu(), hist()
	api0, xp0, r0 := procCPU(cp.APIServerCPU), procCPU(cp.CrossplaneCPU), requests()
	start := time.Now()
	act()
	cp.Eventually(t, timeout, what, settled)
	var f loadFigures
	f.Settle = time.Since(start)
	c1, fatal1 := calls(), calls(fatal)
	for i := range c1 {
		f.PerReplica = append(f.PerReplica, c1[i]-c0[i])
		f.Calls += c1[i] - c0[i]
		f.Fatal += fatal1[i] - fatal0[i]
	}
	f.CPU = cpu() - cpu0
	f.APICPU, f.XPCPU = procCPU(cp.APIServerCPU)-api0, procCPU(cp.CrossplaneCPU)-xp0
	f.Requests = map[string]float64{}
	for k, v := range requests() {
		if d := v - r0[k]; d > 0 {
			f.Requests[k] = d
		}
	}
	f.P99, f.RunCalls = hist().Since(h0).Quantile(0.99)
	var err error
	if f.XPRSS, err = cp.CrossplaneRSS(); err != nil {
		t.Fatal(err)
	}
	if f.API, err = cp.APIServerRSS(); err != nil {
		t.Fatal(err)
	}
	t.Logf("LOAD step=%q pools=%d settle=%s calls=%.0f (per replica %v; fatal %.0f) calls/pool=%.1f cpu=%s cpu/pool=%s run_function p99<=%gs of %.0f (timeout 120s) crossplaneRSS=%dMiB apiserverRSS=%dMiB",
		what, pools, f.Settle.Round(time.Second), f.Calls, f.PerReplica, f.Fatal, f.Calls/float64(max(pools, 1)), f.CPU.Round(10*time.Millisecond),
		(f.CPU / time.Duration(max(pools, 1))).Round(time.Millisecond), f.P99, f.RunCalls, f.XPRSS>>20, f.API>>20)
	total, top := topRequests(f.Requests, 5)
	t.Logf("LOAD step=%q apiserverCPU=%s crossplaneCPU=%s apiserver requests=%.0f (%.0f per pool; most: %s)",
		what, f.APICPU.Round(time.Second), f.XPCPU.Round(time.Second), total, total/float64(max(pools, 1)), top)
	return f
}

// byKey lists every object of kind in all namespaces in one request and
// indexes it by namespace/name. One list per check keeps a check's cost flat
// in the number of pools: under load a request takes up to a second on this
// 2-core machine, so a check of one GET per pool (or one list per
// namespace) outlived its 10 s deadline and could never see a settled fleet.
func byKey(ctx context.Context, kind schema.GroupVersionKind) (map[string]*unstructured.Unstructured, error) {
	items, err := cp.List(ctx, kind, "", "")
	if err != nil {
		return nil, err
	}
	out := make(map[string]*unstructured.Unstructured, len(items))
	for i := range items {
		out[items[i].GetNamespace()+"/"+items[i].GetName()] = &items[i]
	}
	return out, nil
}

// asAsked returns a check that every pool's MachineDeployment exists, was
// observed at its generation, has the pool's replicas ready and updated,
// and (when templates is not nil) points at another template than the one
// recorded there.
func asAsked(pools []loadPool, templates map[string]string) func(context.Context) error {
	return func(ctx context.Context) error {
		mds, err := byKey(ctx, harness.MachineDeployment)
		if err != nil {
			return err
		}
		var pending []string
		for _, p := range pools {
			md := mds[p.NS+"/"+p.MD]
			if md == nil {
				pending = append(pending, p.NS+"/"+p.MD+": no MachineDeployment")
				continue
			}
			tmpl, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "infrastructureRef", "name")
			replicas, _, _ := unstructured.NestedInt64(md.Object, "spec", "replicas")
			ready, _, _ := unstructured.NestedInt64(md.Object, "status", "readyReplicas")
			updated, _, _ := unstructured.NestedInt64(md.Object, "status", "updatedReplicas")
			observed, _, _ := unstructured.NestedInt64(md.Object, "status", "observedGeneration")
			switch {
			case templates != nil && tmpl == templates[p.NS+"/"+p.MD]:
				pending = append(pending, p.NS+"/"+p.MD+": not rolled")
			case replicas != p.Replicas || ready != p.Replicas || updated != p.Replicas || observed < md.GetGeneration():
				pending = append(pending, fmt.Sprintf("%s/%s: replicas %d ready %d updated %d, want %d", p.NS, p.MD, replicas, ready, updated, p.Replicas))
			}
		}
		if len(pending) > 0 {
			return fmt.Errorf("%d of %d pools not as asked, e.g. %s", len(pending), len(pools), pending[0])
		}
		return nil
	}
}

// gone returns a check that every pool and its MachineDeployment are gone.
func gone(pools []loadPool) func(context.Context) error {
	return func(ctx context.Context) error {
		xrs, err := byKey(ctx, harness.NodePool)
		if err != nil {
			return err
		}
		mds, err := byKey(ctx, harness.MachineDeployment)
		if err != nil {
			return err
		}
		left := 0
		for _, p := range pools {
			if xrs[p.NS+"/"+p.Name] != nil {
				left++
			}
			if mds[p.NS+"/"+p.MD] != nil {
				left++
			}
		}
		if left > 0 {
			return fmt.Errorf("%d objects of %d deleted pools left", left, len(pools))
		}
		return nil
	}
}

// perTenant runs do for every pool, the tenants side by side and each
// tenant's pools in turn, as tenants acting at once do, and fails the test
// (on its own goroutine) with the first error. Sequential, the 200 applies
// alone took minutes under load and were counted as settle time.
func perTenant(t *testing.T, pools []loadPool, do func(context.Context, loadPool) error) {
	t.Helper()
	byNS := map[string][]loadPool{}
	for _, p := range pools {
		byNS[p.NS] = append(byNS[p.NS], p)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(byNS))
	for _, ps := range byNS {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, p := range ps {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				err := do(ctx, p)
				cancel()
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

func (l loadShape) run(t *testing.T, run int) {
	for i := range l.Tenants {
		inNamespace(t, l.namespace(run, i))
		capiCluster(t, l.namespace(run, i), loadCluster)
	}
	apply := func(pools []loadPool) func() {
		return func() {
			for _, p := range pools {
				deleteOnCleanup(t, p.xr(l.SID))
			}
			perTenant(t, pools, func(ctx context.Context, p loadPool) error {
				if err := cp.Apply(ctx, p.xr(l.SID)); err != nil {
					return fmt.Errorf("applying XNodePool %s/%s: %w", p.NS, p.Name, err)
				}
				return nil
			})
		}
	}
	all := l.pools(run, "p", l.Pools)
	measure(t, "create", len(all), 20*time.Minute, apply(all), asAsked(all, nil))

	rolled := all[:min(l.Roll, len(all))]
	before := map[string]string{}
	for _, p := range rolled {
		tmpl, err := machineDeploymentTemplate(context.Background(), p.NS, p.MD)
		if err != nil {
			t.Fatal(err)
		}
		before[p.NS+"/"+p.MD] = tmpl
	}
	for i := range rolled {
		rolled[i].DiskSize = "25Gi"
	}
	measure(t, "roll", len(rolled), 20*time.Minute, apply(rolled), asAsked(rolled, before))

	deleted := all[len(all)-min(l.Delete, len(all)):]
	measure(t, "delete", len(deleted), 20*time.Minute, func() {
		perTenant(t, deleted, func(ctx context.Context, p loadPool) error {
			return tryDeletePool(ctx, p.NS, p.Name, p.MD)
		})
	}, gone(deleted))

	// Valid tenants' settle time alone, then while hostile tenants rewrite
	// invalid pools (a schematic path on a cloning pool: a fatal result
	// every call) as fast as the API server takes them.
	alone := l.pools(run, "a", l.Delete)
	quiet := measure(t, "create beside nobody", len(alone), 20*time.Minute, apply(alone), asAsked(alone, nil))
	flow := l.tenantFlow(t)
	fc0 := readFlowControl(t, flow)
	stop := l.hostile(t, run, flow == tenantGroup)
	loud := l.pools(run, "b", l.Delete)
	noisy := measure(t, fmt.Sprintf("create beside %d hostile tenants", l.Hostile), len(loud), 20*time.Minute, apply(loud), asAsked(loud, nil))
	writes := stop()
	fc1 := readFlowControl(t, flow)
	waited := fc1.Waited - fc0.Waited
	t.Logf("LOAD hostile flow control (FlowSchema %s, E2E_LOAD_HOSTILE_AS=%q): %.0f seats, %.0f dispatched, %.0f rejected, mean queue wait %s",
		flow, os.Getenv("E2E_LOAD_HOSTILE_AS"), fc1.Seats, fc1.Dispatched-fc0.Dispatched, fc1.Rejected-fc0.Rejected,
		time.Duration(float64(time.Second)*(fc1.WaitSeconds-fc0.WaitSeconds)/max(waited, 1)).Round(time.Microsecond))
	t.Logf("LOAD hostile tenants=%d writes=%d: valid settle %s alone, %s beside them (%+.0f%%)",
		l.Hostile, writes, quiet.Settle.Round(time.Second), noisy.Settle.Round(time.Second), 100*(noisy.Settle.Seconds()/quiet.Settle.Seconds()-1))
}

// hostile starts l.Hostile tenants, each rewriting an invalid pool in its
// own namespace in a loop (10 writes a second each), and returns a func that stops them and returns
// how many writes they made. Unless E2E_LOAD_HOSTILE_AS=admin, each tenant
// writes as a user of its own (tenantWriter), so API Priority and Fairness
// classifies and queues its requests as a platform's would; as the suite's
// admin (system:masters) they are exempt from it.
// grouped puts its users in tenantGroup (tenantFlow's priority level).
func (l loadShape) hostile(t *testing.T, run int, grouped bool) func() int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	writes := 0
	ctx, cancel := context.WithCancel(context.Background())
	for i := range l.Hostile {
		ns := fmt.Sprintf("e2e-load-%d-h%02d", run, i)
		inNamespace(t, ns)
		xr := poolXR(ns, loadCluster, "gpu/nvidia-open", "{builtin: {}}")
		deleteOnCleanup(t, xr)
		write := func(ctx context.Context) error { return cp.Apply(ctx, xr) }
		if !l.HostileAsAdmin {
			write = tenantWriter(t, ns, xr, grouped)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ctx.Err() == nil; n++ {
				_ = unstructured.SetNestedField(xr.Object, int64(n%1000), "spec", "replicas")
				if err := write(ctx); err == nil {
					mu.Lock()
					writes++
					mu.Unlock()
				}
				// Ten writes a second per tenant: a tenant's controller
				// in a hot loop, and still leaving the suite's client its
				// share of its rate limit.
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
	}
	return func() int {
		cancel()
		wg.Wait()
		return writes
	}
}

// tenantWriter returns a func that server-side applies xr as the user
// e2e-tenant-<ns> (group system:authenticated, and tenantGroup if grouped;
// impersonated by the suite's admin), allowed by a Role to write XNodePools
// in ns and nothing else.
// The apiserver authorizes and classifies an impersonated request as the
// user it names (the impersonation filter runs before priority and
// fairness in k8s.io/apiserver's DefaultBuildHandlerChain), so such a
// user's requests fall to the FlowSchema global-default and its priority
// level, as a platform's tenant writing through kubectl would.
func tenantWriter(t *testing.T, ns string, xr *unstructured.Unstructured, grouped bool) func(context.Context) error {
	t.Helper()
	user := "e2e-tenant-" + ns
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cp.Apply(ctx, harness.MustObject(fmt.Sprintf(`
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: e2e-tenant-writes-pools
  namespace: %[1]s
rules:
- apiGroups: [%[2]s]
  resources: [xnodepools]
  verbs: [get, create, update, patch]
`, ns, xr.GroupVersionKind().Group)), harness.MustObject(fmt.Sprintf(`
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: e2e-tenant-writes-pools
  namespace: %[1]s
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: e2e-tenant-writes-pools
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: %[2]s
`, ns, user))); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(cp.Config)
	groups := []string{"system:authenticated"}
	if grouped {
		groups = append(groups, tenantGroup)
	}
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ri := dc.Resource(harness.NodePool.GroupVersion().WithResource("xnodepools")).Namespace(ns)
	return func(ctx context.Context) error {
		_, err := ri.Apply(ctx, xr.GetName(), xr, metav1.ApplyOptions{FieldManager: harness.FieldManager, Force: true})
		return err
	}
}

// tenantGroup is the group of the hostile tenants' users when
// E2E_LOAD_TENANT_SHARES gives them a priority level of their own.
const tenantGroup = "e2e-tenants"

// tenantFlow returns the FlowSchema, named as its priority level, that API
// Priority and Fairness classifies the hostile tenants' writes by. By
// default that is global-default, where a platform's users fall unless it
// says otherwise. With E2E_LOAD_TENANT_SHARES=N it is e2e-tenants: a
// FlowSchema matching tenantGroup, one flow per user, and a priority level
// of N nominal concurrency shares that neither lends nor borrows seats, so
// the tenants together hold at most ceil(600*N/(245+N)) of the apiserver's
// 600 seats (245 being the bootstrap levels' shares) and queue, each
// tenant fairly, beyond that: what a platform would configure to bound what
// its tenants' writes may take of the apiserver.
func (l loadShape) tenantFlow(t *testing.T) string {
	t.Helper()
	if l.TenantShares == 0 || l.HostileAsAdmin {
		return "global-default"
	}
	level := harness.MustObject(fmt.Sprintf(`
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata:
  name: %[1]s
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: %[2]d
    lendablePercent: 0
    borrowingLimitPercent: 0
    limitResponse:
      type: Queue
      queuing: {queues: 64, handSize: 6, queueLengthLimit: 50}
`, tenantGroup, l.TenantShares))
	schema := harness.MustObject(fmt.Sprintf(`
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata:
  name: %[1]s
spec:
  priorityLevelConfiguration: {name: %[1]s}
  matchingPrecedence: 5000
  distinguisherMethod: {type: ByUser}
  rules:
  - subjects:
    - kind: Group
      group: {name: %[1]s}
    resourceRules:
    - verbs: ["*"]
      apiGroups: ["*"]
      resources: ["*"]
      namespaces: ["*"]
      clusterScope: true
`, tenantGroup))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cp.Apply(ctx, level, schema); err != nil {
		t.Fatal(err)
	}
	deleteOnCleanup(t, schema)
	deleteOnCleanup(t, level)
	return tenantGroup
}

// flowControl is what API Priority and Fairness did with the requests of
// a FlowSchema (the tenants' users): the seats of its priority level (named
// as the schema), and the requests it dispatched and rejected and their
// time in its queues, counted since the process started.
type flowControl struct {
	Seats, Dispatched, Rejected, Waited, WaitSeconds float64
}

func readFlowControl(t *testing.T, flow string) flowControl {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	read := func(name string, labels ...string) float64 {
		v, err := cp.APIServerMetric(ctx, name, labels...)
		if errors.Is(err, harness.ErrNoSeries) {
			return 0 // a counter not yet counted is absent
		}
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	pl, fs := fmt.Sprintf("priority_level=%q", flow), fmt.Sprintf("flow_schema=%q", flow)
	return flowControl{
		Seats:       read("apiserver_flowcontrol_nominal_limit_seats", pl),
		Dispatched:  read("apiserver_flowcontrol_dispatched_requests_total", fs),
		Rejected:    read("apiserver_flowcontrol_rejected_requests_total", fs),
		Waited:      read("apiserver_flowcontrol_request_wait_duration_seconds_count", fs),
		WaitSeconds: read("apiserver_flowcontrol_request_wait_duration_seconds_sum", fs),
	}
}

// topRequests returns the sum of requests and its n largest entries,
// largest first ("PUT datavolumes 15278, ..."), ties by name.
func topRequests(requests map[string]float64, n int) (float64, string) {
	keys := make([]string, 0, len(requests))
	total := 0.0
	for k, v := range requests {
		keys = append(keys, k)
		total += v
	}
	sort.Slice(keys, func(i, j int) bool {
		if requests[keys[i]] != requests[keys[j]] {
			return requests[keys[i]] > requests[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, 0, n)
	for _, k := range keys[:min(n, len(keys))] {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, requests[k]))
	}
	return total, strings.Join(parts, ", ")
}
