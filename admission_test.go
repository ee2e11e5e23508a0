package main

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/mem"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

func wire(t *testing.T, v any) mem.BufferSlice {
	t.Helper()
	b, err := encoding.GetCodecV2(proto.Name).Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAdmission(t *testing.T) {
	run := func(a *admission, ctx context.Context, ran *bool) error {
		_, err := a.release(ctx, &fnv1.RunFunctionRequest{}, &grpc.UnaryServerInfo{}, func(context.Context, any) (any, error) {
			*ran = true
			return nil, nil
		})
		return err
	}

	t.Run("SlotIsHeldFromDecodeToTheEndOfTheCall", func(t *testing.T) {
		a := newAdmission(1)
		if err := a.Unmarshal(wire(t, &fnv1.RunFunctionRequest{}), &fnv1.RunFunctionRequest{}); err != nil {
			t.Fatal(err)
		}
		if len(a.slots) != 1 {
			t.Fatalf("a decoded request must hold a slot until its call ends; %d held", len(a.slots))
		}
		var ran bool
		if err := run(a, context.Background(), &ran); err != nil || !ran {
			t.Fatalf("the call must run: ran=%v err=%v", ran, err)
		}
		if len(a.slots) != 0 {
			t.Fatalf("the call's end must free its slot; %d held", len(a.slots))
		}
	})

	t.Run("SecondRequestWaitsForTheFirstCall", func(t *testing.T) {
		a := newAdmission(1)
		if err := a.Unmarshal(wire(t, &fnv1.RunFunctionRequest{}), &fnv1.RunFunctionRequest{}); err != nil {
			t.Fatal(err)
		}
		decoded := make(chan error)
		go func() { decoded <- a.Unmarshal(wire(t, &fnv1.RunFunctionRequest{}), &fnv1.RunFunctionRequest{}) }()
		select {
		case err := <-decoded:
			t.Fatalf("a second request was decoded (err %v) while the only slot was taken", err)
		default:
		}
		var ran bool
		if err := run(a, context.Background(), &ran); err != nil {
			t.Fatal(err)
		}
		if err := <-decoded; err != nil { // admitted once the first call ended
			t.Fatal(err)
		}
		if err := run(a, context.Background(), &ran); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("OtherMessagesNeverWait", func(t *testing.T) {
		a := newAdmission(1)
		a.slots <- struct{}{} // every slot taken
		if err := a.Unmarshal(wire(t, &grpc_health_v1.HealthCheckRequest{}), &grpc_health_v1.HealthCheckRequest{}); err != nil {
			t.Fatalf("a health check must not queue behind function calls: %v", err)
		}
	})

	t.Run("UndecodableRequestGivesItsSlotBack", func(t *testing.T) {
		a := newAdmission(1)
		bad := mem.BufferSlice{mem.SliceBuffer([]byte{0xff, 0xff, 0xff})}
		if err := a.Unmarshal(bad, &fnv1.RunFunctionRequest{}); err == nil {
			t.Fatal("garbage decoded")
		}
		if len(a.slots) != 0 {
			t.Fatalf("no handler runs after a decode error, so the slot must be freed there; %d held", len(a.slots))
		}
	})

	t.Run("CallWhoseCallerGaveUpIsNotRun", func(t *testing.T) {
		a := newAdmission(1)
		a.slots <- struct{}{} // taken by its decode
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var ran bool
		if err := run(a, ctx, &ran); err == nil || ran {
			t.Fatalf("a call cancelled while it waited must not run: ran=%v err=%v", ran, err)
		}
		if len(a.slots) != 0 {
			t.Fatal("its slot must be freed")
		}
	})
}
