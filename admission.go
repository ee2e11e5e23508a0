package main

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	fnv1beta1 "github.com/crossplane/function-sdk-go/proto/v1beta1"
)

// admission runs at most n RunFunction calls at once and admits the others in
// arrival order.
//
// Why not grpc.MaxConcurrentStreams: it bounds memory the same way, but the
// calls it turns away wait in the caller's HTTP/2 stream quota, which wakes
// them in no particular order, so a burst of callers gets a long, unfair tail
// (docs/performance.md). Why not an interceptor alone: gRPC decodes a request
// before any interceptor runs, and a decoded request is about ten times its
// wire size, so the queue itself would cost the memory the bound is for. The
// slot is therefore taken in the codec, before the request is decoded (only
// its wire bytes wait), and given back by an interceptor when the call ends.
// Waiting senders on a Go channel are served first in, first out.
type admission struct {
	slots chan struct{}
	base  encoding.CodecV2
}

func newAdmission(n uint32) *admission {
	return &admission{slots: make(chan struct{}, n), base: encoding.GetCodecV2(proto.Name)}
}

// serverOptions install the admission on a server.
func (a *admission) serverOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.ForceServerCodecV2(a), grpc.ChainUnaryInterceptor(a.release)}
}

func isRunRequest(v any) bool {
	switch v.(type) {
	case *fnv1.RunFunctionRequest, *fnv1beta1.RunFunctionRequest:
		return true
	}
	return false
}

// Name implements encoding.CodecV2: it stands in for the proto codec.
func (a *admission) Name() string { return a.base.Name() }

// Marshal implements encoding.CodecV2.
func (a *admission) Marshal(v any) (mem.BufferSlice, error) { return a.base.Marshal(v) }

// Unmarshal implements encoding.CodecV2. A RunFunction request waits for a
// slot before it is decoded; the slot is held until release, or given back
// here when the request does not decode (then no handler runs).
func (a *admission) Unmarshal(data mem.BufferSlice, v any) error {
	if !isRunRequest(v) {
		return a.base.Unmarshal(data, v)
	}
	a.slots <- struct{}{}
	if err := a.base.Unmarshal(data, v); err != nil {
		<-a.slots
		return err
	}
	return nil
}

// release runs the call, unless its caller gave up while it waited, and then
// frees its slot.
func (a *admission) release(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if !isRunRequest(req) {
		return handler(ctx, req)
	}
	defer func() { <-a.slots }()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return handler(ctx, req)
}
