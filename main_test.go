package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/crossplane/function-sdk-go"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// testCA is a certificate authority generated for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

var serial atomic.Int64

func newCA(t *testing.T, cn string) testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serial.Add(1)),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a leaf certificate and key (PEM) signed by ca. A server
// certificate is valid for 127.0.0.1 and localhost.
func (ca testCA) issue(t *testing.T, cn string, server bool) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.DNSNames = []string{"localhost"}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

// serverCertsDir writes tls.crt, tls.key and ca.crt as Crossplane mounts them.
func serverCertsDir(t *testing.T, ca testCA) string {
	t.Helper()
	dir := t.TempDir()
	crt, key := ca.issue(t, "function-worker-image", true)
	for name, b := range map[string][]byte{"tls.crt": crt, "tls.key": key, "ca.crt": ca.pem} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// countingFunction records how many calls reached the function.
type countingFunction struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
	calls atomic.Int64
}

func (f *countingFunction) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	f.calls.Add(1)
	return &fnv1.RunFunctionResponse{Meta: &fnv1.ResponseMeta{Tag: req.GetMeta().GetTag()}}, nil
}

// blockingFunction holds every call until release is closed.
type blockingFunction struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
	entered chan struct{}
	release chan struct{}
}

func (f *blockingFunction) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	f.entered <- struct{}{}
	<-f.release
	return &fnv1.RunFunctionResponse{Meta: &fnv1.ResponseMeta{Tag: req.GetMeta().GetTag()}}, nil
}

// startServer serves fn on a loopback port with the options the CLI c
// produces; metrics are off so that tests never bind a second port. It
// returns the address, a stop function and the channel serve returns on.
func startServer(t *testing.T, fn fnv1.FunctionRunnerServiceServer, c CLI) (addr string, stop context.CancelFunc, done <-chan error) {
	t.Helper()
	c.MetricsAddress = ""
	if c.MaxRecvMessageSize == 0 {
		c.MaxRecvMessageSize = 4
	}
	so, err := c.serveOptions()
	if err != nil {
		t.Fatalf("serveOptions: %v", err)
	}
	lis, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan error, 1)
	go func() {
		ch <- serve(ctx, fn, lis, so)
		close(ch) // a second receive (the cleanup) returns at once
	}()
	t.Cleanup(func() {
		cancel()
		<-ch //nolint:errcheck // the test that wanted the error has read it already
	})
	return lis.Addr().String(), cancel, ch
}

func dial(t *testing.T, addr string, creds credentials.TransportCredentials, opts ...grpc.DialOption) fnv1.FunctionRunnerServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, append([]grpc.DialOption{grpc.WithTransportCredentials(creds)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return fnv1.NewFunctionRunnerServiceClient(conn)
}

func clientTLS(t *testing.T, serverCA testCA, client *testCA) credentials.TransportCredentials {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(serverCA.cert)
	cfg := &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}
	if client != nil {
		crt, key := client.issue(t, "crossplane", false)
		pair, err := tls.X509KeyPair(crt, key)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return credentials.NewTLS(cfg)
}

func TestServeOptions(t *testing.T) {
	ca := newCA(t, "test-ca")
	certs := serverCertsDir(t, ca)
	type want struct {
		protocol string
		maxRecv  int
		err      string
	}
	cases := map[string]struct {
		reason string
		cli    CLI
		want   want
	}{
		"InsecureOnlyWhenAsked": {
			reason: "Without --insecure and without certificates the function must refuse to start rather than serve plaintext.",
			cli:    CLI{Network: "tcp", Address: ":9443", MaxRecvMessageSize: 4},
			want:   want{err: "no credentials: set --tls-certs-dir (or TLS_SERVER_CERTS_DIR) to a directory holding tls.crt, tls.key and ca.crt for mTLS, or pass --insecure for local development"},
		},
		"CertificatesMeanMTLS": {
			reason: "With a certificate directory the server speaks TLS and requires client certificates.",
			cli:    CLI{Network: "tcp", Address: ":9443", TLSCertsDir: certs, MaxRecvMessageSize: 4},
			want:   want{protocol: "tls", maxRecv: 4 << 20},
		},
		"InsecureFlagServesPlaintext": {
			reason: "--insecure is the explicit opt-in to plaintext, for crossplane render.",
			cli:    CLI{Network: "tcp", Address: ":9443", Insecure: true, MaxRecvMessageSize: 1},
			want:   want{protocol: "insecure", maxRecv: 1 << 20},
		},
		"InsecureWinsOverCertificates": {
			reason: "The flag help says --insecure ignores --tls-certs-dir; the SDK applies Insecure after MTLSCertificates.",
			cli:    CLI{Network: "tcp", Address: ":9443", Insecure: true, TLSCertsDir: certs, MaxRecvMessageSize: 4},
			want:   want{protocol: "insecure", maxRecv: 4 << 20},
		},
		"MissingCertificatesAreAnError": {
			reason: "A certificate directory without the key pair is a startup error, not a silent plaintext server.",
			cli:    CLI{Network: "tcp", Address: ":9443", TLSCertsDir: t.TempDir(), MaxRecvMessageSize: 4},
			want:   want{err: "cannot apply ServeOption: cannot load X509 keypair"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			so, err := tc.cli.serveOptions()
			got := want{}
			if err != nil {
				// The keypair error carries an OS-specific path; keep the stable part.
				got.err, _, _ = strings.Cut(err.Error(), ": open ")
			} else {
				got.protocol, got.maxRecv = so.Credentials.Info().SecurityProtocol, so.MaxRecvMsgSize
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestMTLSServing(t *testing.T) {
	ca := newCA(t, "test-ca")
	other := newCA(t, "other-ca")
	fn := &countingFunction{}
	addr, _, _ := startServer(t, fn, CLI{TLSCertsDir: serverCertsDir(t, ca)})

	cases := map[string]struct {
		reason string
		creds  credentials.TransportCredentials
		served bool
	}{
		"ClientCertificateFromTheCAIsServed": {
			reason: "Crossplane presents a certificate signed by the CA in ca.crt; it must be served.",
			creds:  clientTLS(t, ca, &ca),
			served: true,
		},
		"NoClientCertificateIsRefused": {
			reason: "mTLS means a TLS client without a certificate is refused.",
			creds:  clientTLS(t, ca, nil),
		},
		"ClientCertificateFromAnotherCAIsRefused": {
			reason: "A certificate from any other CA is refused.",
			creds:  clientTLS(t, ca, &other),
		},
		"PlaintextClientIsRefused": {
			reason: "A plaintext client never reaches an mTLS server.",
			creds:  insecure.NewCredentials(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := fn.calls.Load()
			rsp, err := dial(t, addr, tc.creds).RunFunction(context.Background(), &fnv1.RunFunctionRequest{Meta: &fnv1.RequestMeta{Tag: name}})
			reached := fn.calls.Load() > before
			if tc.served {
				if err != nil || rsp.GetMeta().GetTag() != name || !reached {
					t.Errorf("%s\nwant served, got err %v, tag %q, reached %t", tc.reason, err, rsp.GetMeta().GetTag(), reached)
				}
				return
			}
			if err == nil || reached {
				t.Errorf("%s\nwant refused before the function, got err %v, reached %t", tc.reason, err, reached)
			}
		})
	}
}

func TestMessageSizeLimit(t *testing.T) {
	fn := &countingFunction{}
	addr, _, _ := startServer(t, fn, CLI{Insecure: true, MaxRecvMessageSize: 1})
	c := dial(t, addr, insecure.NewCredentials(), grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(8<<20)))

	big, err := structpb.NewStruct(map[string]any{"blob": strings.Repeat("x", 2<<20)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.RunFunction(context.Background(), &fnv1.RunFunctionRequest{Input: big})
	if got := status.Code(err); got != codes.ResourceExhausted {
		t.Errorf("A 2 MiB request over a 1 MiB --max-recv-message-size must be refused with ResourceExhausted\n-want, +got:\n%s", cmp.Diff(codes.ResourceExhausted, got))
	}
	if fn.calls.Load() != 0 {
		t.Errorf("The oversized request must never reach the function; it was called %d times", fn.calls.Load())
	}
	rsp, err := c.RunFunction(context.Background(), &fnv1.RunFunctionRequest{Meta: &fnv1.RequestMeta{Tag: "after"}})
	if err != nil || rsp.GetMeta().GetTag() != "after" {
		t.Errorf("The server must keep serving on the same connection after refusing an oversized request: err %v", err)
	}
}

func TestGracefulStopDrainsInFlightCalls(t *testing.T) {
	fn := &blockingFunction{entered: make(chan struct{}, 1), release: make(chan struct{})}
	addr, stop, done := startServer(t, fn, CLI{Insecure: true})
	c := dial(t, addr, insecure.NewCredentials())

	type result struct {
		rsp *fnv1.RunFunctionResponse
		err error
	}
	inflight := make(chan result, 1)
	go func() {
		rsp, err := c.RunFunction(context.Background(), &fnv1.RunFunctionRequest{Meta: &fnv1.RequestMeta{Tag: "in-flight"}})
		inflight <- result{rsp, err}
	}()
	<-fn.entered
	stop() // what SIGTERM does in Run
	close(fn.release)

	got := <-inflight
	if got.err != nil || got.rsp.GetMeta().GetTag() != "in-flight" {
		t.Errorf("A call in flight when shutdown begins must complete: err %v, tag %q", got.err, got.rsp.GetMeta().GetTag())
	}
	if err := <-done; err != nil {
		t.Errorf("serve must return nil after a graceful stop, got %v", err)
	}
	if _, err := dial(t, addr, insecure.NewCredentials()).RunFunction(context.Background(), &fnv1.RunFunctionRequest{}); err == nil {
		t.Errorf("After shutdown no new call may be served")
	}
}

// sigtermHelperEnv makes the test binary act as a function server that is
// stopped by a real SIGTERM (see TestSIGTERMDrainsInFlightCalls).
const sigtermHelperEnv = "FUNCTION_WORKER_IMAGE_SIGTERM_HELPER"

// sigtermFunction blocks every call until the process has received SIGTERM,
// so a call is provably in flight when the signal arrives.
type sigtermFunction struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
	term chan os.Signal
}

func (f *sigtermFunction) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	fmt.Println("entered")
	<-f.term
	return &fnv1.RunFunctionResponse{Meta: &fnv1.ResponseMeta{Tag: req.GetMeta().GetTag()}}, nil
}

func TestSIGTERMHelperProcess(t *testing.T) {
	if os.Getenv(sigtermHelperEnv) != "1" {
		t.Skip("helper process for TestSIGTERMDrainsInFlightCalls")
	}
	fn := &sigtermFunction{term: make(chan os.Signal, 1)}
	signal.Notify(fn.term, syscall.SIGTERM)
	so, err := (&CLI{Insecure: true, MaxRecvMessageSize: 4}).serveOptions()
	if err != nil {
		t.Fatal(err)
	}
	lis, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(lis.Addr().String())
	if err := serveUntilSignalled(fn, lis, so); err != nil {
		t.Fatal(err)
	}
	fmt.Println("drained")
}

func TestSIGTERMDrainsInFlightCalls(t *testing.T) {
	if os.Getenv(sigtermHelperEnv) == "1" {
		t.Skip("running as the helper")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSIGTERMHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), sigtermHelperEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	next := func() string {
		if !lines.Scan() {
			return ""
		}
		return lines.Text()
	}
	addr := next()
	if _, _, err := net.SplitHostPort(addr); err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("helper did not print its address: %q", addr)
	}

	type result struct {
		rsp *fnv1.RunFunctionResponse
		err error
	}
	inflight := make(chan result, 1)
	c := dial(t, addr, insecure.NewCredentials())
	go func() {
		rsp, err := c.RunFunction(context.Background(), &fnv1.RunFunctionRequest{Meta: &fnv1.RequestMeta{Tag: "in-flight"}})
		inflight <- result{rsp, err}
	}()
	if got := next(); got != "entered" {
		_ = cmd.Process.Kill()
		t.Fatalf("helper did not enter the call: %q", got)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	got := <-inflight
	if got.err != nil || got.rsp.GetMeta().GetTag() != "in-flight" {
		t.Errorf("A call in flight when SIGTERM arrives must complete: err %v, tag %q", got.err, got.rsp.GetMeta().GetTag())
	}
	rest := []string{}
	for l := next(); l != ""; l = next() {
		rest = append(rest, l)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("The server must exit cleanly after draining on SIGTERM: %v (output %q)", err, rest)
	}
	if len(rest) == 0 || rest[0] != "drained" {
		t.Errorf("The server must return from serving after the drain; output after the call: %q", rest)
	}
}

// TestServeWithSDKOptions checks that the real NewFunction is served over the
// options the SDK builds, the path Run takes.
func TestServeWithSDKOptions(t *testing.T) {
	addr, _, _ := startServer(t, NewFunction(logging.NewNopLogger(), time.Minute), CLI{Insecure: true})
	rsp, err := dial(t, addr, insecure.NewCredentials()).RunFunction(context.Background(), &fnv1.RunFunctionRequest{Meta: &fnv1.RequestMeta{Tag: "sdk"}})
	if err != nil {
		t.Fatal(err)
	}
	if rsp.GetMeta().GetTag() != "sdk" || len(rsp.GetResults()) != 1 || rsp.GetResults()[0].GetSeverity() != fnv1.Severity_SEVERITY_FATAL {
		t.Errorf("An empty request must be answered with one fatal result, not a transport error: %v", rsp)
	}
}

// TestMetricsEndpoint: with a metrics address the function's decision
// series are served beside gRPC's, on one registry.
func TestMetricsEndpoint(t *testing.T) {
	so := &function.ServeOptions{MetricsAddress: "127.0.0.1:0"}
	opts, err := withMetrics(so)
	if err != nil {
		t.Fatal(err)
	}
	f := NewFunction(logging.NewNopLogger(), time.Minute, opts...)
	if _, err := f.RunFunction(context.Background(), &fnv1.RunFunctionRequest{}); err != nil {
		t.Fatal(err)
	}
	mfs, err := so.MetricsRegistry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, mf := range mfs {
		got[mf.GetName()] = true
	}
	for _, name := range []string{"function_worker_image_calls_total", "function_worker_image_request_bytes", "go_goroutines", "process_resident_memory_bytes"} {
		if !got[name] {
			t.Errorf("%s is not served", name)
		}
	}
	if opts, _ := withMetrics(&function.ServeOptions{}); opts != nil {
		t.Error("without a metrics address nothing is recorded")
	}
}
