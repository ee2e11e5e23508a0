// Package main implements function-worker-image, a Crossplane composition
// function that boots tenant Talos worker disks from shared golden images.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
	grpcprometheus "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/crossplane/function-sdk-go"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/proto/v1beta1"

	"github.com/cozystack/function-worker-image/internal/metrics"
)

// drainTimeout bounds how long a SIGTERM waits for in-flight calls: inside
// Kubernetes' default 30s grace period, far above one call's milliseconds.
const drainTimeout = 25 * time.Second

// CLI of this function. The flags follow the Crossplane function
// specification and crossplane/function-template-go.
type CLI struct {
	Debug bool `help:"Emit debug logs in addition to info logs." short:"d"`

	Network            string        `default:"tcp"   help:"Network on which to listen for gRPC connections."`
	Address            string        `default:":9443" help:"Address at which to listen for gRPC connections."`
	TLSCertsDir        string        `env:"TLS_SERVER_CERTS_DIR" help:"Directory containing server certs (tls.key, tls.crt) and the CA used to verify client certificates (ca.crt)"`
	Insecure           bool          `help:"Run without mTLS credentials. If you supply this flag --tls-certs-dir will be ignored."`
	MaxRecvMessageSize int           `default:"4"     help:"Maximum size of received messages in MB."`
	MetricsAddress     string        `default:":8080" help:"Address of the Prometheus metrics server; empty disables it."`
	TTL                time.Duration `default:"1m"    help:"Response TTL when the Input sets none: how soon Crossplane calls again in steady state."`
	MaxConcurrentCalls uint32        `default:"0"     help:"RunFunction calls decoded and run at once; more wait their turn, first come first served. 0 means one per usable CPU."`
	GCPercent          int           `default:"50"    help:"Garbage collection target percentage (GOGC) when the GOGC environment variable is not set."`
}

// concurrentCalls bounds how many calls decode and compose at once (see
// admission): calls are CPU-bound and hold their whole request and response,
// so more than one per CPU buys no throughput and multiplies peak memory
// (docs/performance.md).
func (c *CLI) concurrentCalls() uint32 {
	if c.MaxConcurrentCalls > 0 {
		return c.MaxConcurrentCalls
	}
	return uint32(runtime.GOMAXPROCS(0)) //nolint:gosec // GOMAXPROCS is a small positive int
}

// Run this function until SIGTERM or SIGINT, then drain in-flight calls.
func (c *CLI) Run() error {
	log, err := function.NewLogger(c.Debug)
	if err != nil {
		return err
	}
	// A call frees several times its request at once, so GOGC=100 peaks at
	// twice the live heap; half that headroom keeps a burst inside 64 MiB
	// for about a fifth of the throughput (docs/performance.md).
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(c.GCPercent)
	}
	so, err := c.serveOptions()
	if err != nil {
		return err
	}
	lis, err := (&net.ListenConfig{}).Listen(context.Background(), so.Network, so.Address)
	if err != nil {
		return fmt.Errorf("cannot listen for %s connections at address %q: %w", so.Network, so.Address, err)
	}
	opts, err := withMetrics(so)
	if err != nil {
		return err
	}
	return serveUntilSignalled(NewFunction(log, c.TTL, opts...), lis, so, newAdmission(c.concurrentCalls()).serverOptions()...)
}

// withMetrics gives so one registry for the gRPC server's series (serve),
// the process's and the decisions' (internal/metrics, docs/operations.md),
// and returns the option that records calls on it; nothing without a
// metrics address.
func withMetrics(so *function.ServeOptions) ([]Option, error) {
	if so.MetricsAddress == "" {
		return nil, nil
	}
	so.MetricsRegistry = prometheus.NewRegistry()
	if err := so.MetricsRegistry.Register(collectors.NewGoCollector()); err != nil {
		return nil, fmt.Errorf("cannot register the Go runtime metrics: %w", err)
	}
	if err := so.MetricsRegistry.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, fmt.Errorf("cannot register the process metrics: %w", err)
	}
	rec, err := metrics.New(so.MetricsRegistry, time.Now)
	if err != nil {
		return nil, fmt.Errorf("cannot register the function's metrics: %w", err)
	}
	return []Option{WithMetrics(rec)}, nil
}

// serveUntilSignalled serves fn until the process receives SIGTERM (what
// Kubernetes sends on pod deletion) or SIGINT, then drains.
func serveUntilSignalled(fn fnv1.FunctionRunnerServiceServer, lis net.Listener, so *function.ServeOptions, extra ...grpc.ServerOption) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return serve(ctx, fn, lis, so, extra...)
}

// serveOptions turns the flags into the SDK's ServeOptions: mTLS from
// --tls-certs-dir, plaintext only with --insecure.
func (c *CLI) serveOptions() (*function.ServeOptions, error) {
	so := &function.ServeOptions{
		Network:        function.DefaultNetwork,
		Address:        function.DefaultAddress,
		MaxRecvMsgSize: function.DefaultMaxRecvMsgSize,
	}
	for _, o := range []function.ServeOption{
		function.Listen(c.Network, c.Address),
		function.MTLSCertificates(c.TLSCertsDir),
		function.Insecure(c.Insecure),
		function.MaxRecvMessageSize(c.MaxRecvMessageSize * 1024 * 1024),
		function.WithMetricsServer(c.MetricsAddress),
	} {
		if err := o(so); err != nil {
			return nil, fmt.Errorf("cannot apply ServeOption: %w", err)
		}
	}
	if so.Credentials == nil {
		return nil, errors.New("no credentials: set --tls-certs-dir (or TLS_SERVER_CERTS_DIR) to a directory holding tls.crt, tls.key and ca.crt for mTLS, or pass --insecure for local development")
	}
	return so, nil
}

// serve serves fn on lis as function.Serve does, plus what SDK v0.7.1's
// lacks: when ctx is done it drains in-flight calls (GracefulStop, bounded
// by drainTimeout) and returns nil.
func serve(ctx context.Context, fn fnv1.FunctionRunnerServiceServer, lis net.Listener, so *function.ServeOptions, extra ...grpc.ServerOption) error {
	opts := append([]grpc.ServerOption{grpc.MaxRecvMsgSize(so.MaxRecvMsgSize), grpc.Creds(so.Credentials)}, extra...)
	var metrics *grpcprometheus.ServerMetrics
	registry := so.MetricsRegistry
	if so.MetricsAddress != "" {
		if registry == nil {
			registry = prometheus.NewRegistry()
			registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		}
		metrics = grpcprometheus.NewServerMetrics(so.MetricsServerOpts...)
		interceptors := append([]grpc.UnaryServerInterceptor{metrics.UnaryServerInterceptor()}, so.UnaryInterceptors...)
		opts = append(opts, grpc.ChainUnaryInterceptor(interceptors...))
		if err := registry.Register(metrics); err != nil {
			return fmt.Errorf("cannot register gRPC server metrics: %w", err)
		}
	}
	srv := grpc.NewServer(opts...)
	reflection.Register(srv)
	fnv1.RegisterFunctionRunnerServiceServer(srv, fn)
	v1beta1.RegisterFunctionRunnerServiceServer(srv, function.ServeBeta(fn))
	if so.HealthServer != nil {
		healthgrpc.RegisterHealthServer(srv, so.HealthServer)
	}

	var metricsServer *http.Server
	if metrics != nil {
		metrics.InitializeMetrics(srv)
		metricsServer = &http.Server{
			Addr:              so.MetricsAddress,
			Handler:           promhttp.HandlerFor(registry, promhttp.HandlerOpts{}),
			ReadHeaderTimeout: 30 * time.Second,
		}
		go func() { _ = metricsServer.ListenAndServe() }()
		defer func() { _ = metricsServer.Close() }()
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	select {
	case err := <-served:
		return serveError(err)
	case <-ctx.Done():
	}

	drained := make(chan struct{})
	go func() {
		srv.GracefulStop()
		close(drained)
	}()
	deadline := time.NewTimer(drainTimeout)
	defer deadline.Stop()
	select {
	case <-drained:
	case <-deadline.C:
		srv.Stop()
		<-drained
	}
	return serveError(<-served)
}

// serveError wraps what the gRPC server's Serve returned; nil (the server
// was stopped) stays nil.
func serveError(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("cannot serve gRPC connections: %w", err)
}

func main() {
	ctx := kong.Parse(&CLI{}, kong.Description("A Crossplane composition function that boots Talos worker disks as CDI clones of shared golden images."))
	ctx.FatalIfErrorf(ctx.Run())
}
