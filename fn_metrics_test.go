package main

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/crossplane/function-sdk-go/logging"

	"github.com/cozystack/function-worker-image/internal/fixture"
	"github.com/cozystack/function-worker-image/internal/metrics"
)

// TestMetricsFollowTheResponse: every example scenario answers byte for
// byte the same with the metrics on, and what they record is what the
// response says: one call by its outcome, the pool's gate as a held
// composite, the catalog's goldens by state, and one decision per
// condition.
func TestMetricsFollowTheResponse(t *testing.T) {
	for _, sc := range loadExampleScenarios(t) {
		t.Run(sc.Name, func(t *testing.T) {
			req, _ := settleRequest(t, newTestFunction(), sc.firstRequest(), sc.Pool)
			plain, err := newTestFunction().RunFunction(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			reg := prometheus.NewPedanticRegistry()
			rec, err := metrics.New(reg, time.Now)
			if err != nil {
				t.Fatal(err)
			}
			rsp, err := NewFunction(logging.NewNopLogger(), time.Minute, WithMetrics(rec), WithClock(fixture.Clock)).RunFunction(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(plain, rsp, protocmp.Transform()); diff != "" {
				t.Fatalf("metrics changed the response (-without, +with):\n%s", diff)
			}

			outcome := metrics.OutcomeComposed
			if fatal(rsp) {
				outcome = metrics.OutcomeFatal
			}
			if got := gauge(t, reg, "function_worker_image_calls_total", map[string]string{"outcome": string(outcome)}); got != 1 {
				t.Errorf("calls_total{outcome=%q} = %v, want 1", outcome, got)
			}
			status := rsp.GetDesired().GetComposite().GetResource().GetFields()["status"].GetStructValue().GetFields()
			gate := status["gate"].GetStructValue().GetFields()
			wantHeld := 0.0
			if gate["state"].GetStringValue() == "Held" {
				wantHeld = 1
			}
			if got := gauge(t, reg, "function_worker_image_held_composites", map[string]string{"reason": gate["reason"].GetStringValue()}); got != wantHeld {
				t.Errorf("held_composites{reason=%q} = %v, want %v (gate %v)", gate["reason"].GetStringValue(), got, wantHeld, gate)
			}
			if got, want := gauge(t, reg, "function_worker_image_goldens", nil), float64(len(status["goldens"].GetListValue().GetValues())); got != want {
				t.Errorf("goldens = %v, want %v (one per status.goldens entry)", got, want)
			}
			if outcome == metrics.OutcomeComposed {
				conds := len(rsp.GetConditions())
				if got := gauge(t, reg, "function_worker_image_decisions_total", nil); got != float64(conds) {
					t.Errorf("decisions_total = %v, want %d (one per condition)", got, conds)
				}
			}
			kind := sc.XR.GetFields()["kind"].GetStringValue()
			mode := map[string]string{"XWorkerImageCatalog": "Catalog", "XNodePool": "NodePool", "XTenantCluster": "TenantCluster"}[kind]
			if got := gauge(t, reg, "function_worker_image_request_bytes", map[string]string{"mode": mode}); got != 1 {
				t.Errorf("request_bytes{mode=%q} counts %v requests, want 1", mode, got)
			}
		})
	}
}

// gauge sums the samples of a family whose labels include match; for a
// histogram, its sample counts.
func gauge(t *testing.T, g prometheus.Gatherer, name string, match map[string]string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, m := range mf.GetMetric() {
			for k, v := range match {
				found := false
				for _, l := range m.GetLabel() {
					if l.GetName() == k && l.GetValue() == v {
						found = true
					}
				}
				if !found {
					continue metric
				}
			}
			switch {
			case m.GetGauge() != nil:
				sum += m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				sum += m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				sum += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum
}
