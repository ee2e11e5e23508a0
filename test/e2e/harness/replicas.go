package harness

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Two replicas of the function, as a Deployment of two Pods behind a
// headless Service: one name that resolves to both addresses. Crossplane
// dials a FunctionRevision's endpoint with gRPC's default (dns) resolver
// and the round_robin policy (internal/xfn/function_runner.go, svcConfig,
// v2.4.2), so it spreads calls over every address the name resolves to.
// Go's resolver reads /etc/hosts first, which is how the name resolves here.
const (
	// FunctionReplicasHost is the name both replicas answer to.
	FunctionReplicasHost = "function-worker-image.e2e.internal"
	// FunctionReplicaIP is the second replica's loopback address; the
	// first is 127.0.0.1.
	FunctionReplicaIP = "127.0.0.2"
)

// StartFunctionReplica starts a second function process on
// FunctionReplicaIP and the first one's port, makes FunctionReplicasHost
// resolve to both addresses (a line in /etc/hosts, which must be writable:
// root, as on CI), and points every FunctionRevision at the name. Stop it
// with StopFunctionReplicas.
func (cp *ControlPlane) StartFunctionReplica(ctx context.Context) (*Process, error) {
	_, port, err := net.SplitHostPort(cp.FunctionAddress)
	if err != nil {
		return nil, err
	}
	if err := ensureHosts(FunctionReplicasHost, "127.0.0.1", FunctionReplicaIP); err != nil {
		return nil, err
	}
	ports, err := FreeLoopbackPorts(1)
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort(FunctionReplicaIP, port)
	fn, err := StartProcess(cp.LogDir, fmt.Sprintf("function-worker-image-%d", len(cp.replicas)+2), cp.Bin.Function, []string{
		"--debug",
		"--tls-certs-dir=" + cp.PKI.FunctionCertsDir,
		"--address=" + addr,
		"--metrics-address=127.0.0.1:" + strconv.Itoa(ports[0]),
		"--ttl=" + cp.FunctionTTL.String(),
	}, nil)
	if err != nil {
		return nil, err
	}
	fn.metrics = "http://127.0.0.1:" + strconv.Itoa(ports[0]) + "/metrics"
	cp.procs = append(cp.procs, fn)
	cp.replicas = append(cp.replicas, fn)
	fn.ready = func(ctx context.Context) error { return cp.waitTLS(ctx, fn, addr, 30*time.Second) }
	if err := fn.ready(ctx); err != nil {
		return nil, err
	}
	cp.replicasEndpoint = net.JoinHostPort(FunctionReplicasHost, port)
	return fn, cp.pointFunctions(ctx)
}

// StopFunctionReplicas stops the replicas StartFunctionReplica started and
// points every FunctionRevision at the first replica's address again.
func (cp *ControlPlane) StopFunctionReplicas(ctx context.Context) error {
	for _, p := range cp.replicas {
		p.Stop(10 * time.Second)
	}
	cp.replicas, cp.replicasEndpoint = nil, ""
	return cp.pointFunctions(ctx)
}

// FunctionReplicas are every running replica of the function, the first
// one first.
func (cp *ControlPlane) FunctionReplicas() []*Process {
	return append([]*Process{cp.function}, cp.replicas...)
}

func (cp *ControlPlane) functionEndpoint() string {
	if cp.replicasEndpoint != "" {
		return cp.replicasEndpoint
	}
	return cp.FunctionAddress
}

// pointFunctions writes functionEndpoint into every registered
// FunctionRevision's status.
func (cp *ControlPlane) pointFunctions(ctx context.Context) error {
	for _, name := range cp.functionNames {
		status := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": FunctionRevision.GroupVersion().String(),
			"kind":       FunctionRevision.Kind,
			"metadata":   map[string]any{"name": name + "-e2e"},
			"status": map[string]any{
				"endpoint":     cp.functionEndpoint(),
				"capabilities": []any{"composition"},
			},
		}}
		if err := cp.ApplyStatus(ctx, FieldManager, status); err != nil {
			return err
		}
	}
	return nil
}

// ensureHosts makes host resolve to ips through /etc/hosts, adding the
// lines it lacks.
func ensureHosts(host string, ips ...string) error {
	const path = "/etc/hosts"
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		for _, n := range f[min(1, len(f)):] {
			if n == host {
				have[f[0]] = true
			}
		}
	}
	var add strings.Builder
	for _, ip := range ips {
		if !have[ip] {
			fmt.Fprintf(&add, "%s %s\n", ip, host)
		}
	}
	if add.Len() == 0 {
		return nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("the function's second replica needs %s to resolve to %v, through %s, which cannot be written (%w): add the lines yourself:\n%s", host, ips, path, err, add.String())
	}
	defer func() { _ = f.Close() }()
	if len(b) > 0 && b[len(b)-1] != '\n' {
		_, _ = f.WriteString("\n")
	}
	_, err = f.WriteString(add.String())
	return err
}
