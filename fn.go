package main

import (
	"context"
	"maps"
	"time"

	"github.com/pkg/errors"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/capability"
	"github.com/cozystack/function-worker-image/internal/catalog"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/nodepool"
	"github.com/cozystack/function-worker-image/internal/required"
	"github.com/cozystack/function-worker-image/internal/tenantcluster"
)

// Function boots Talos worker disks from shared golden images. It holds no
// mutable state: every call decides from its request alone.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log   logging.Logger
	ttl   time.Duration
	modes map[v1beta1.Mode]compose.Mode
}

// NewFunction returns the function with every mode registered. ttl is the
// steady-state response TTL when the Input sets none.
func NewFunction(log logging.Logger, ttl time.Duration) *Function {
	if ttl <= 0 {
		ttl = response.DefaultTTL
	}
	return &Function{
		log: log,
		ttl: ttl,
		modes: map[v1beta1.Mode]compose.Mode{
			v1beta1.ModeCatalog:       catalog.Mode{},
			v1beta1.ModeTenantCluster: tenantcluster.Mode{},
			v1beta1.ModeNodePool:      nodepool.Mode{},
		},
	}
}

// RunFunction hands the request to the composite's mode and writes what it
// decided. Problems are results; an error return is for a broken transport.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	log := f.log.WithValues("tag", req.GetMeta().GetTag())
	rsp := response.To(req, f.ttl)

	v := capability.Check(req.GetMeta())
	if v.Fatal != nil {
		response.Fatal(rsp, v.Fatal)
		return rsp, nil
	}
	if v.Warning != "" {
		response.Warning(rsp, errors.New(v.Warning))
	}

	in, err := config.DecodeInput(req.GetInput())
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	cfg, err := config.FromInput(in, f.ttl)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	rsp.Meta.Ttl = durationpb.New(cfg.SteadyTTL)

	oxr, err := compose.ObservedComposite(req)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	log = log.WithValues("xr-apiversion", oxr.Resource.GetAPIVersion(), "xr-kind", oxr.Resource.GetKind(), "xr-name", oxr.Resource.GetName())

	mode, err := config.ModeFor(cfg, oxr.Resource.GetKind())
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	m, ok := f.modes[mode]
	if !ok {
		response.Fatal(rsp, errors.Errorf("mode %s is not implemented by this version of function-worker-image", mode))
		return rsp, nil
	}

	observed, err := request.GetObservedComposedResources(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot read the observed composed resources"))
		return rsp, nil
	}
	r := compose.Request{Config: cfg, Composite: oxr.Resource, Observed: observed}

	call := m.Prepare(r)
	sel, err := call.Requirements()
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	rsp.Requirements = required.Requirements(sel)
	got, raw, complete, err := required.Fetch(req, sel, call.Raw())
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	if ch, ok := call.(compose.Chained); ok && complete {
		if more := ch.ChainedRequirements(got); len(more) > 0 {
			maps.Copy(sel, more)
			rsp.Requirements = required.Requirements(sel)
			if got, raw, complete, err = required.Fetch(req, sel, call.Raw()); err != nil {
				response.Fatal(rsp, err)
				return rsp, nil
			}
		}
	}
	if !complete {
		// Deciding before Crossplane fetches them would act on nothing.
		log.Debug("Returning requirements", "count", len(sel))
		return rsp, nil
	}
	out := call.Compose(got, raw)
	dxr, err := compose.DesiredComposite(req)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	if err := compose.Write(rsp, dxr, out); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	log.Debug("Composed", "mode", mode, "resources", len(out.Resources), "fatal", out.Fatal != nil)
	return rsp, nil
}
