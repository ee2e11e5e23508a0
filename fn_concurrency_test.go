package main

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"google.golang.org/grpc/credentials/insecure"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// concurrentCallers is how many clients call one server at once.
const concurrentCallers = 64

// TestConcurrentCallersGetTheirOwnAnswers serves the real function over gRPC
// on loopback and lets 64 callers send every example scenario of every mode
// at once, each starting at a different scenario. Every answer must be
// byte-identical to the one the same request gets alone: a shared mutable
// cache or map would show up here, and under -race as a data race.
func TestConcurrentCallersGetTheirOwnAnswers(t *testing.T) {
	f := newTestFunction()
	type call struct {
		name string
		req  *fnv1.RunFunctionRequest
		want []byte
	}
	var calls []call
	for _, sc := range loadExampleScenarios(t) {
		final, rsp := settleRequest(t, f, sc.firstRequest(), sc.Pool)
		calls = append(calls, call{sc.Name, final, deterministicBytes(t, rsp)})
	}
	addr, _, _ := startServer(t, f, CLI{Insecure: true})
	c := dial(t, addr, insecure.NewCredentials())

	var wg sync.WaitGroup
	errs := make(chan string, concurrentCallers*len(calls))
	for i := range concurrentCallers {
		wg.Go(func() {
			for j := range calls {
				cl := calls[(i+j)%len(calls)]
				rsp, err := c.RunFunction(context.Background(), cl.req)
				if err != nil {
					errs <- cl.name + ": " + err.Error()
					continue
				}
				b, err := deterministicMarshal(rsp)
				if err != nil || !bytes.Equal(b, cl.want) {
					errs <- cl.name + ": the answer differs from the one the request gets alone"
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
