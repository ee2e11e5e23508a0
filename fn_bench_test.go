package main

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/cozystack/function-worker-image/internal/fixture"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/observed"
	"github.com/cozystack/function-worker-image/internal/storageclass"
)

// Benchmarks of the front door: RunFunction on the steady-state request of
// each mode at growing sizes, built by internal/fixture and settled by
// playing Crossplane's loop against the function itself. `make bench` runs
// them and prints the table and scaling ratios (hack/benchtable).

// benchCase is one mode at one size.
type benchCase struct {
	Mode, Size string
	// Scale is the count that grows with Size (catalog entries, classes and
	// MachineSets, pools), for tests that pick cases by how big they are.
	Scale    int
	Scenario func() *fixture.Scenario
	Status   fixture.StatusFunc
}

func benchCases() []benchCase {
	var cs []benchCase
	for _, n := range []int{1, 10, 100, 1000} {
		cs = append(cs, benchCase{Mode: "Catalog", Size: fmt.Sprintf("entries=%d", n), Scale: n,
			Scenario: func() *fixture.Scenario { return fixture.CatalogScenario(n) }, Status: fixture.CatalogStatus})
	}
	for _, s := range []struct{ dvs, classes int }{{0, 1}, {50, 10}, {500, 100}} {
		cs = append(cs, benchCase{Mode: "NodePool", Size: fmt.Sprintf("dvs=%d,classes=%d,machinesets=%d", s.dvs, s.classes, s.classes), Scale: s.classes,
			Scenario: func() *fixture.Scenario { return fixture.NodePoolScenario(s.dvs, s.classes, s.classes) }, Status: fixture.NodePoolStatus})
	}
	// Workers shaped like real CDI's (internal/fixture/cdishape.go), the
	// sizes issue 14 measures at: what a production pool sends.
	// Settled: the deployment converged, so the disks are not read
	// (internal/nodepool/reads.go). Rolling: a rollout in flight, so they
	// are, up to the Input's cloneHealth.maxWorkerDisks (256).
	for _, w := range []int{0, 50, 500, 2000} {
		cs = append(cs, benchCase{Mode: "NodePool", Size: fmt.Sprintf("cdi-workers=%d,classes=10,machinesets=3", w), Scale: max(w, 11),
			Scenario: func() *fixture.Scenario { return fixture.CDINodePoolScenario(w, 10, 3) }, Status: fixture.NodePoolStatus})
	}
	for _, w := range []int{0, 50, 250, 2000} {
		cs = append(cs, benchCase{Mode: "NodePool", Size: fmt.Sprintf("cdi-workers=%d,rolling", w), Scale: max(w, 11),
			Scenario: func() *fixture.Scenario { return fixture.CDINodePoolScenario(w, 10, 3) }, Status: fixture.NodePoolRollingStatus})
	}
	for _, n := range []int{1, 10, 100} {
		cs = append(cs, benchCase{Mode: "TenantCluster", Size: fmt.Sprintf("pools=%d", n), Scale: n,
			Scenario: func() *fixture.Scenario { return fixture.TenantClusterScenario(n) }, Status: fixture.TenantClusterStatus})
	}
	return cs
}

func benchFunction() *Function { return NewFunction(logging.NewNopLogger(), time.Minute) }

// settle returns the calls of one steady-state reconcile of c.
func settle(tb testing.TB, c benchCase) []fixture.Call {
	tb.Helper()
	calls, err := fixture.Settle(tb.Context(), benchFunction().RunFunction, c.Scenario(), c.Status, 4)
	if err != nil {
		tb.Fatalf("%s %s: %v", c.Mode, c.Size, err)
	}
	return calls
}

// observedObjects counts what a request hands the function: observed
// composed resources and required resources.
func observedObjects(req *fnv1.RunFunctionRequest) int {
	n := len(req.GetObserved().GetResources())
	for _, rs := range req.GetRequiredResources() {
		n += len(rs.GetItems())
	}
	return n
}

// BenchmarkRunFunction measures the call that does the work: the last call
// of a steady-state reconcile, with every requirement resolved.
func BenchmarkRunFunction(b *testing.B) {
	for _, c := range benchCases() {
		// Settled inside b.Run, so that -bench selects what is set up.
		b.Run(c.Mode+"/"+c.Size, func(b *testing.B) {
			calls := settle(b, c)
			req, n := calls[len(calls)-1].Request, len(calls)
			runtime.GC() // the setup's garbage is not this benchmark's cost
			f := benchFunction()
			b.ResetTimer()
			var rsp *fnv1.RunFunctionResponse
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if rsp, err = f.RunFunction(b.Context(), req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(observedObjects(req)), "objects")
			b.ReportMetric(float64(proto.Size(req)), "req-bytes")
			b.ReportMetric(float64(proto.Size(rsp)), "rsp-bytes")
			b.ReportMetric(float64(n), "calls")
		})
	}
}

// BenchmarkReconcile measures every call of one steady-state reconcile, what
// Crossplane pays per poll of one composite.
func BenchmarkReconcile(b *testing.B) {
	for _, c := range benchCases() {
		b.Run(c.Mode+"/"+c.Size, func(b *testing.B) {
			calls := settle(b, c)
			runtime.GC()
			f := benchFunction()
			b.ResetTimer()
			b.ReportAllocs()
			for b.Loop() {
				for _, call := range calls {
					if _, err := f.RunFunction(b.Context(), call.Request); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(len(calls)), "calls")
		})
	}
}

// steadyStateMaxScale bounds the cases TestSteadyStateReconcileCalls
// settles: the call count does not depend on size, and the larger cases are
// the benchmarks' to pay for.
const steadyStateMaxScale = 10

// TestSteadyStateReconcileCalls pins how many calls one reconcile takes per
// mode: requirements are a function of the spec and observed composed
// resources, so Crossplane fetches them once and the second call settles.
// Cases are picked by scale, not by name, and every mode must have run at
// least one: a renamed or resized case cannot silently leave a mode
// unchecked, and a mode without a pinned count fails.
func TestSteadyStateReconcileCalls(t *testing.T) {
	want := map[string]int{"Catalog": 2, "NodePool": 2, "TenantCluster": 1}
	ran := map[string]int{}
	for _, c := range benchCases() {
		if c.Scale > steadyStateMaxScale {
			continue
		}
		ran[c.Mode]++
		t.Run(c.Mode+"/"+c.Size, func(t *testing.T) {
			n, ok := want[c.Mode]
			if !ok {
				t.Fatalf("mode %s has no pinned call count; add it to want", c.Mode)
			}
			calls := settle(t, c)
			if len(calls) != n {
				t.Errorf("one steady-state reconcile of %s should take %d calls, took %d", c.Mode, n, len(calls))
			}
			if size := proto.Size(calls[len(calls)-1].Response); size >= 4<<20 {
				t.Errorf("response of %d bytes exceeds gRPC's default 4 MiB limit", size)
			}
		})
	}
	for mode := range want {
		if ran[mode] == 0 {
			t.Errorf("no %s case has scale <= %d: the mode's call count went unchecked", mode, steadyStateMaxScale)
		}
	}
}

// TestChainedRequirementCallCount: a chained requirement (compose.Chained)
// costs one call more, and only where it is asked for. The node pool asks
// for the golden's PersistentVolume, by the name its PVC gives, only for a
// golden PVC that names no StorageClass; every other reconcile keeps its
// two calls.
func TestChainedRequirementCallCount(t *testing.T) {
	cases := map[string]struct {
		reason string
		calls  int
		pv     bool
	}{
		"nodepool/builtin-golden-succeeded":      {reason: "The golden PVC's class says its driver: no PV, two calls.", calls: 2},
		"nodepool/golden-pvc-only-without-class": {reason: "A golden PVC naming no class: its PV is asked for once the PVC is known, a third call.", calls: 3, pv: true},
	}
	f := newTestFunction()
	seen := 0
	for _, sc := range loadExampleScenarios(t) {
		tc, ok := cases[sc.Name]
		if !ok {
			continue
		}
		seen++
		t.Run(sc.Name, func(t *testing.T) {
			calls, err := fixture.Loop(t.Context(), f.RunFunction, sc.firstRequest(), fixture.FromStructs(sc.Pool))
			if err != nil {
				t.Fatal(err)
			}
			_, pv := calls[len(calls)-1].Response.GetRequirements().GetResources()["golden-pv"]
			if diff := cmp.Diff(struct {
				Calls int
				PV    bool
			}{tc.calls, tc.pv}, struct {
				Calls int
				PV    bool
			}{len(calls), pv}); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
	if seen != len(cases) {
		t.Errorf("found %d of the %d scenarios", seen, len(cases))
	}
}

// Micro-benchmarks of the rules that run per observed object.

func BenchmarkDefaultStorageClass(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		classes := make([]storagev1.StorageClass, n)
		for i := range classes {
			classes[i].Name = fmt.Sprintf("class-%03d", i)
			classes[i].CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC))
			classes[i].Annotations = map[string]string{storageclass.AnnDefault: map[bool]string{true: "true", false: "false"}[i%7 == 0]}
		}
		b.Run(fmt.Sprintf("classes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if storageclass.Default(classes).Name == "" {
					b.Fatal("no default")
				}
			}
		})
	}
}

func BenchmarkLabelHash(b *testing.B) {
	b.Run("PoolHash", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = labels.PoolHash(fixture.NodePoolNamespace, fixture.NodePoolCluster, fixture.NodePoolName)
		}
	})
	b.Run("GoldenHash", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = labels.GoldenHash("cozy-public", "talos-worker-ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515-v1.13.6")
		}
	})
}

// BenchmarkWorkerDataVolume is the per-object cost of reading one worker
// DataVolume, shaped like real CDI's, from the request's Struct: what a
// rolling pool pays per worker (observed.WorkerDataVolume).
func BenchmarkWorkerDataVolume(b *testing.B) {
	s := fixture.CDINodePoolScenario(1, 0, 0)
	var dv *structpb.Struct
	for _, o := range s.Objects {
		if o.GetKind() == observed.KindDataVolume && o.GetNamespace() == fixture.NodePoolNamespace {
			var err error
			if dv, err = structpb.NewStruct(o.Object); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := observed.WorkerDataVolume(dv, labels.AnnCDICloneType); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCDIShapedWorkersDecideAsMinimalOnes pins that the CDI-shaped fixture
// changes what a request weighs, not what the function decides: the same
// rolling pool (whose disks are read) with minimal and with CDI-shaped
// workers composes the same desired state. It also checks that no name of
// the e2e recording leaks into the fixture, and that the fixture's workers
// weigh what real CDI's do.
func TestCDIShapedWorkersDecideAsMinimalOnes(t *testing.T) {
	const workers = 5
	minimal := settle(t, benchCase{Mode: "NodePool", Scenario: func() *fixture.Scenario { return fixture.NodePoolScenario(workers, 3, 3) }, Status: fixture.NodePoolRollingStatus})
	cdi := settle(t, benchCase{Mode: "NodePool", Scenario: func() *fixture.Scenario { return fixture.CDINodePoolScenario(workers, 3, 3) }, Status: fixture.NodePoolRollingStatus})
	a, b := minimal[len(minimal)-1], cdi[len(cdi)-1]
	if got := len(b.Request.GetRequiredResources()["worker-datavolumes"].GetItems()); got != workers {
		t.Fatalf("a rolling pool should read its %d worker disks, read %d", workers, got)
	}
	if diff := cmp.Diff(a.Response.GetDesired(), b.Response.GetDesired(), protocmp.Transform()); diff != "" {
		t.Errorf("CDI-shaped workers change the desired state:\n%s", diff)
	}
	if diff := cmp.Diff(a.Response.GetConditions(), b.Response.GetConditions(), protocmp.Transform()); diff != "" {
		t.Errorf("CDI-shaped workers change the conditions:\n%s", diff)
	}
	raw, err := protojson.Marshal(b.Request)
	if err != nil {
		t.Fatal(err)
	}
	for _, leaked := range []string{"e2e-cdi-csi-clone", "c13-workers", "e2e-replicated", "0b179d791f7fdf43"} {
		// The clone tokens are opaque JWTs signed over the recorded names;
		// only their size matters, so they are the one place a recorded
		// name may stay (base64, never in clear).
		if strings.Contains(string(raw), leaked) {
			t.Errorf("the CDI-shaped fixture still carries the recording's %q", leaked)
		}
	}
	// What a worker weighs in the cluster, whether or not it is asked for:
	// its DataVolume and PVC as protobuf Structs.
	weight := 0
	for _, o := range fixture.CDINodePoolScenario(1, 0, 0).Objects {
		if o.GetNamespace() != fixture.NodePoolNamespace {
			continue
		}
		st, err := structpb.NewStruct(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		weight += proto.Size(st)
	}
	t.Logf("a CDI-shaped worker (DataVolume and PVC) weighs %d bytes", weight)
	if weight < 8000 {
		t.Errorf("a CDI-shaped worker weighs %d bytes; real CDI's DataVolume and PVC weigh over 8 KB", weight)
	}
}

// TestRequestBytesPerWorker holds the node pool's request to issue 14's
// budget with workers shaped like real CDI's: a settled pool's request does
// not grow with its workers (at most 2 KiB each, 0 to 2,000), and no call
// of a 2,000-disk pool, settled or rolling, reaches gRPC's default 4 MiB.
func TestRequestBytesPerWorker(t *testing.T) {
	last := func(w int, status fixture.StatusFunc) *fnv1.RunFunctionRequest {
		calls := settle(t, benchCase{Mode: "NodePool", Scenario: func() *fixture.Scenario { return fixture.CDINodePoolScenario(w, 10, 3) }, Status: status})
		return calls[len(calls)-1].Request
	}
	empty := proto.Size(last(0, fixture.NodePoolStatus))
	for _, w := range []int{50, 2000} {
		for name, status := range map[string]fixture.StatusFunc{"settled": fixture.NodePoolStatus, "rolling": fixture.NodePoolRollingStatus} {
			size := proto.Size(last(w, status))
			perWorker := float64(size-empty) / float64(w)
			t.Logf("%s pool of %d disks: %d request bytes, %.0f per worker", name, w, size, perWorker)
			if size >= 4<<20 {
				t.Errorf("%s pool of %d disks: the request of %d bytes reaches the 4 MiB default", name, w, size)
			}
			if name == "settled" && perWorker > 2048 {
				t.Errorf("settled pool of %d disks: %.0f request bytes per worker, over the 2 KiB budget", w, perWorker)
			}
		}
	}
}
