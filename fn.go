package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/capability"
	"github.com/cozystack/function-worker-image/internal/catalog"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/metrics"
	"github.com/cozystack/function-worker-image/internal/nodepool"
	"github.com/cozystack/function-worker-image/internal/required"
	"github.com/cozystack/function-worker-image/internal/tenantcluster"
)

// Function boots Talos worker disks from shared golden images. It holds no
// mutable state: every call decides from its request and the time it runs.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log     logging.Logger
	ttl     time.Duration
	modes   map[v1beta1.Mode]compose.Mode
	metrics *metrics.Recorder
	// now is the clock a call reads its compose.Request.Now from.
	now func() time.Time
}

// defaultClock is the clock of a Function without WithClock: the wall
// clock, except in a binary built for the render tests (clock_render.go).
var defaultClock = time.Now

// Option configures a Function.
type Option func(*Function)

// WithMetrics records every call on r.
func WithMetrics(r *metrics.Recorder) Option {
	return func(f *Function) { f.metrics = r }
}

// WithClock makes every call read its time from now: what a call decides
// from time (a stalled import or clone) is then reproducible.
func WithClock(now func() time.Time) Option {
	return func(f *Function) { f.now = now }
}

// NewFunction returns the function with every mode registered. ttl is the
// steady-state response TTL when the Input sets none.
func NewFunction(log logging.Logger, ttl time.Duration, opts ...Option) *Function {
	if ttl <= 0 {
		ttl = response.DefaultTTL
	}
	f := &Function{
		log: log,
		ttl: ttl,
		now: defaultClock,
		modes: map[v1beta1.Mode]compose.Mode{
			v1beta1.ModeCatalog:       catalog.Mode{},
			v1beta1.ModeTenantCluster: tenantcluster.Mode{},
			v1beta1.ModeNodePool:      nodepool.Mode{},
		},
	}
	for _, o := range opts {
		o(f)
	}
	return f
}

// RunFunction hands the request to the composite's mode and writes what it
// decided. Problems are results; an error return is for a broken transport.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, f.ttl)
	c := f.run(req, rsp)
	compose.Redact(rsp)
	if f.metrics != nil {
		if fatal(rsp) {
			c.Outcome = metrics.OutcomeFatal
		}
		c.RequestBytes, c.ResponseBytes = proto.Size(req), proto.Size(rsp)
		c.TTL = rsp.GetMeta().GetTtl().AsDuration()
		f.metrics.Observe(c)
	}
	return rsp, nil
}

// fatal reports a response that stops the pipeline.
func fatal(rsp *fnv1.RunFunctionResponse) bool {
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			return true
		}
	}
	return false
}

// run decides into rsp and says what it did, for the metrics.
func (f *Function) run(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) metrics.Call {
	log := f.log.WithValues("tag", req.GetMeta().GetTag())
	c := metrics.Call{Outcome: metrics.OutcomeFatal}

	v := capability.Check(req.GetMeta())
	if v.Fatal != nil {
		response.Fatal(rsp, v.Fatal)
		return c
	}
	if v.Warning != "" {
		response.Warning(rsp, errors.New(v.Warning))
	}

	in, err := config.DecodeInput(req.GetInput())
	if err != nil {
		response.Fatal(rsp, err)
		return c
	}
	cfg, err := config.FromInput(in, f.ttl)
	if err != nil {
		response.Fatal(rsp, err)
		return c
	}
	rsp.Meta.Ttl = durationpb.New(cfg.SteadyTTL)

	oxr, err := compose.ObservedComposite(req)
	if err != nil {
		response.Fatal(rsp, err)
		return c
	}
	log = log.WithValues("xr-apiversion", oxr.Resource.GetAPIVersion(), "xr-kind", oxr.Resource.GetKind(), "xr-namespace", oxr.Resource.GetNamespace(), "xr-name", oxr.Resource.GetName())
	c.Composite = oxr.Resource.GetKind() + "/" + oxr.Resource.GetNamespace() + "/" + oxr.Resource.GetName()

	mode, err := config.ModeFor(cfg, oxr.Resource.GetKind())
	if err != nil {
		response.Fatal(rsp, err)
		return c
	}
	c.Mode = string(mode)
	if mode == v1beta1.ModeCatalog {
		c.Catalog = oxr.Resource.GetName()
	}
	m, ok := f.modes[mode]
	if !ok {
		response.Fatal(rsp, fmt.Errorf("mode %s is not implemented by this version of function-worker-image", mode))
		return c
	}

	observed, err := request.GetObservedComposedResources(req)
	if err != nil {
		response.Fatal(rsp, fmt.Errorf("cannot read the observed composed resources: %w", err))
		return c
	}
	r := compose.Request{Config: cfg, Composite: oxr.Resource, Observed: observed, Now: f.now().UTC().Truncate(time.Second),
		Peek: func(name string) []*unstructured.Unstructured { return required.Peek(req, name) }}

	res := compose.Run(m, r, func(sel required.Selectors, raw map[string]bool) (required.Resolved, required.Raw, bool, error) {
		return required.Fetch(req, sel, raw)
	})
	rsp.Requirements = required.Requirements(res.Selectors)
	if res.Err != nil {
		response.Fatal(rsp, res.Err)
		return c
	}
	if !res.Composed {
		// Deciding before Crossplane fetches them would act on nothing.
		log.Debug("Returning requirements", "count", len(res.Selectors))
		c.Outcome = metrics.OutcomeRequirements
		return c
	}
	out := res.Output
	dxr, err := compose.DesiredComposite(req)
	if err != nil {
		response.Fatal(rsp, err)
		return c
	}
	if err := compose.Write(rsp, dxr, out); err != nil {
		response.Fatal(rsp, err)
		return c
	}
	log.Debug("Composed", "mode", mode, "resources", len(out.Resources), "fatal", out.Fatal != nil)
	c.Outcome, c.Conditions, c.Signals = metrics.OutcomeComposed, out.Conditions, out.Signals
	return c
}
