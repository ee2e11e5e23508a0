// Command loadgen measures function-worker-image end to end over gRPC: it
// starts the function binary (--insecure, loopback, a free port, metrics off)
// and an echo function (this binary re-executed with -serve=echo, which
// returns response.To(req) and nothing else: the protocol's own floor), each
// as a separate process, replays the same requests against both at fixed
// concurrencies for a bounded time, and prints throughput, p50/p99/max
// latency, the ratio of the function to the echo floor, and each server's
// peak RSS (VmHWM from /proc/<pid>/status).
//
//	go build -o bin/function-worker-image . && go run ./cmd/loadgen -function-binary bin/function-worker-image
//	go run ./cmd/loadgen -addr 127.0.0.1:9443 -pid 1234   # dial a running function
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/cozystack/function-worker-image/internal/fixture"
)

const maxMessage = 64 << 20

func main() {
	var (
		serve      = flag.String("serve", "", "internal: serve this function on -address instead of generating load (echo)")
		address    = flag.String("address", "127.0.0.1:0", "with -serve: the loopback address to listen on")
		binary     = flag.String("function-binary", "", "the built function binary to start (go build -o bin/function-worker-image .)")
		addr       = flag.String("addr", "", "dial this running function instead of starting one (peak RSS only with -pid)")
		pid        = flag.Int("pid", 0, "with -addr: the pid of the running function, for its peak RSS")
		examples   = flag.String("examples", "example", "directory holding <mode>/scenarios/<name>")
		cases      = flag.String("cases", "nodepool-cdi50,nodepool-cdi50-rolling,nodepool-cdi2000,catalog-examples,tenantcluster-examples", "comma-separated cases: nodepool-dvs<N> (minimal workers), nodepool-cdi<N> (workers shaped like real CDI's, deployment settled), nodepool-cdi<N>-rolling (the same, rolling: its disks are read), either with -reconcile (every call of the reconcile), <mode>-examples")
		levels     = flag.String("concurrency", "1,16,64", "comma-separated numbers of concurrent callers")
		duration   = flag.Duration("duration", 5*time.Second, "how long each concurrency level runs, per server")
		warmup     = flag.Duration("warmup", 500*time.Millisecond, "unmeasured calls before each level")
		skipFloor  = flag.Bool("no-echo", false, "skip the echo floor")
		maxRecvMiB = flag.Int("max-recv-message-size", 4, "the function's --max-recv-message-size, in MiB")
	)
	flag.Parse()
	if *serve != "" {
		if err := serveEcho(*serve, *address); err != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
			os.Exit(1)
		}
		return
	}
	cfg := config{binary: *binary, addr: *addr, pid: *pid, examples: *examples, duration: *duration, warmup: *warmup, echo: !*skipFloor, maxRecvMiB: *maxRecvMiB}
	for _, l := range strings.Split(*levels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(l))
		if err != nil || n < 1 || n > 1024 {
			fmt.Fprintf(os.Stderr, "loadgen: bad concurrency %q\n", l)
			os.Exit(2)
		}
		cfg.levels = append(cfg.levels, n)
	}
	if cfg.binary == "" && cfg.addr == "" {
		fmt.Fprintln(os.Stderr, "loadgen: give -function-binary or -addr")
		os.Exit(2)
	}
	ctx := context.Background()
	failed := false
	for _, c := range strings.Split(*cases, ",") {
		if err := runCase(ctx, cfg, strings.TrimSpace(c)); err != nil {
			fmt.Fprintf(os.Stderr, "loadgen: case %s: %v\n", c, err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

type config struct {
	binary, addr, examples string
	pid, maxRecvMiB        int
	levels                 []int
	duration, warmup       time.Duration
	echo                   bool
}

// echo is the protocol's floor: it decodes the request, returns its desired
// state untouched and encodes the response.
type echo struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
}

func (echo) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	return response.To(req, response.DefaultTTL), nil
}

// serveEcho serves the echo function with the gRPC options main.go uses
// (receive limit, plaintext), and prints the address it listens on.
func serveEcho(kind, address string) error {
	if kind != "echo" {
		return fmt.Errorf("-serve=%s: only echo is served by loadgen; the function is its own binary", kind)
	}
	lis, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", address)
	if err != nil {
		return err
	}
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(4<<20), grpc.Creds(insecure.NewCredentials()))
	fnv1.RegisterFunctionRunnerServiceServer(srv, echo{})
	fmt.Println(lis.Addr().String())
	return srv.Serve(lis)
}

// server is a function process this run started, or one it dials.
type server struct {
	name string
	addr string
	pid  int
	cmd  *exec.Cmd
	conn *grpc.ClientConn
}

func freeLoopbackAddr() (string, error) {
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

func start(ctx context.Context, name string, args []string) (*server, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	args = append(args, "--address="+addr)
	cmd := exec.CommandContext(ctx, args[0], args[1:]...) //nolint:gosec // our own binaries
	cmd.Stdout, cmd.Stderr = nil, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{name: name, addr: addr, pid: cmd.Process.Pid, cmd: cmd}
	if err := s.dial(); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

func (s *server) dial() error {
	conn, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessage), grpc.MaxCallSendMsgSize(maxMessage)))
	if err != nil {
		return err
	}
	s.conn = conn
	client := fnv1.NewFunctionRunnerServiceClient(conn)
	// Wait for the server, at most 10 s: a call with an empty request is
	// answered (with a fatal result) once it listens.
	for range 100 {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_, err = client.RunFunction(ctx, &fnv1.RunFunctionRequest{}, grpc.WaitForReady(true))
		cancel()
		if err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s at %s did not answer: %w", s.name, s.addr, err)
}

func (s *server) stop() {
	if s.conn != nil {
		_ = s.conn.Close()
	}
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

// peakRSS is VmHWM of the server process, in KiB; 0 when unknown.
func (s *server) peakRSS() int {
	if s.pid == 0 {
		return 0
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", s.pid))
	if err != nil {
		return 0
	}
	defer f.Close() //nolint:errcheck // read-only /proc file; a close error changes nothing
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

func (s *server) run(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	return fnv1.NewFunctionRunnerServiceClient(s.conn).RunFunction(ctx, req)
}

// requests builds a case's requests by playing Crossplane's loop against
// the function: the steady-state reconcile's last call for a synthetic node
// pool, or every call of every shipped scenario of a mode.
func requests(ctx context.Context, fn *server, examples, name string) ([]*fnv1.RunFunctionRequest, error) {
	if n, ok := strings.CutPrefix(name, "nodepool-cdi"); ok {
		// Workers shaped like real CDI's DataVolumes and PVCs
		// (internal/fixture/cdishape.go), with 10 classes and 3 MachineSets;
		// "-rolling": the deployment rolls, so the disks are read.
		// "-reconcile": every call of the reconcile (the first, which only
		// returns requirements, and the work call), what a poll costs.
		n, whole := strings.CutSuffix(n, "-reconcile")
		status := fixture.StatusFunc(fixture.NodePoolStatus)
		if m, rolling := strings.CutSuffix(n, "-rolling"); rolling {
			n, status = m, fixture.NodePoolRollingStatus
		}
		workers, err := strconv.Atoi(n)
		if err != nil || workers < 0 || workers > 100000 {
			return nil, fmt.Errorf("bad node pool size %q", n)
		}
		calls, err := fixture.Settle(ctx, fn.run, fixture.CDINodePoolScenario(workers, 10, 3), status, 4)
		if err != nil {
			return nil, err
		}
		if whole {
			reqs := make([]*fnv1.RunFunctionRequest, 0, len(calls))
			for _, c := range calls {
				reqs = append(reqs, c.Request)
			}
			return reqs, nil
		}
		return []*fnv1.RunFunctionRequest{calls[len(calls)-1].Request}, nil
	}
	if n, ok := strings.CutPrefix(name, "nodepool-dvs"); ok {
		dvs, err := strconv.Atoi(n)
		if err != nil || dvs < 0 || dvs > 100000 {
			return nil, fmt.Errorf("bad node pool size %q", n)
		}
		classes := max(1, dvs/5)
		calls, err := fixture.Settle(ctx, fn.run, fixture.NodePoolScenario(dvs, classes, classes), fixture.NodePoolStatus, 4)
		if err != nil {
			return nil, err
		}
		return []*fnv1.RunFunctionRequest{calls[len(calls)-1].Request}, nil
	}
	mode, ok := strings.CutSuffix(name, "-examples")
	if !ok {
		return nil, errors.New("unknown case; want nodepool-dvs<N>, nodepool-cdi<N>[-rolling] or <mode>-examples")
	}
	dirs, err := filepath.Glob(filepath.Join(examples, mode, "scenarios", "*"))
	if err != nil || len(dirs) == 0 {
		return nil, fmt.Errorf("no scenarios under %s", filepath.Join(examples, mode, "scenarios"))
	}
	slices.Sort(dirs)
	var out []*fnv1.RunFunctionRequest
	for _, d := range dirs {
		s, err := fixture.LoadScenario(d)
		if err != nil {
			return nil, err
		}
		req, err := s.Request()
		if err != nil {
			return nil, err
		}
		calls, err := fixture.Loop(ctx, fn.run, req, s.Objects)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		for _, c := range calls {
			out = append(out, c.Request)
		}
	}
	return out, nil
}

type result struct {
	calls         int
	errs          int
	elapsed       time.Duration
	p50, p99, max time.Duration
	firstErr      error
	throughput    float64
	server        string
	concurrency   int
}

// wire is a message already in its wire form. The callers send requests
// encoded once and do not decode responses, so that on a small machine the
// load generator's own protobuf work does not compete with the server's for
// the CPU: the latency measured is the server's and the transport's.
type wire []byte

// wireCodec passes wire through and encodes anything else as protobuf.
type wireCodec struct{}

func (wireCodec) Marshal(v any) ([]byte, error) {
	if w, ok := v.(*wire); ok {
		return *w, nil
	}
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("cannot encode %T", v)
	}
	return proto.Marshal(m)
}

func (wireCodec) Unmarshal(data []byte, v any) error {
	if w, ok := v.(*wire); ok {
		*w = append((*w)[:0], data...)
		return nil
	}
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("cannot decode into %T", v)
	}
	return proto.Unmarshal(data, m)
}

func (wireCodec) Name() string { return "proto" }

const runFunctionMethod = fnv1.FunctionRunnerService_RunFunction_FullMethodName

// load runs concurrency callers for d, each cycling through reqs from its
// own offset, after an unmeasured warm-up.
func load(ctx context.Context, s *server, reqs []*fnv1.RunFunctionRequest, concurrency int, warmup, d time.Duration) result {
	encoded := make([]wire, len(reqs))
	for i, r := range reqs {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(r)
		if err != nil {
			return result{server: s.name, concurrency: concurrency, firstErr: err}
		}
		encoded[i] = b
	}
	lat := make([][]time.Duration, concurrency)
	errs := make([]int, concurrency)
	var firstErr error
	var once sync.Once
	phase := func(measure bool, d time.Duration) time.Duration {
		deadline := time.Now().Add(d)
		begin := time.Now()
		var wg sync.WaitGroup
		for w := range concurrency {
			wg.Go(func() {
				var out wire
				for i := w; time.Now().Before(deadline); i++ {
					t := time.Now()
					err := s.conn.Invoke(ctx, runFunctionMethod, &encoded[i%len(encoded)], &out, grpc.ForceCodec(wireCodec{}))
					el := time.Since(t)
					if !measure {
						continue
					}
					if err != nil {
						errs[w]++
						once.Do(func() { firstErr = err })
						continue
					}
					lat[w] = append(lat[w], el)
				}
			})
		}
		wg.Wait()
		return time.Since(begin)
	}
	phase(false, warmup)
	elapsed := phase(true, d)

	var all []time.Duration
	r := result{server: s.name, concurrency: concurrency, elapsed: elapsed, firstErr: firstErr}
	for w := range concurrency {
		all = append(all, lat[w]...)
		r.errs += errs[w]
	}
	slices.Sort(all)
	r.calls = len(all)
	if r.calls > 0 {
		r.p50 = all[r.calls/2]
		r.p99 = all[min(r.calls-1, r.calls*99/100)]
		r.max = all[r.calls-1]
	}
	r.throughput = float64(r.calls) / elapsed.Seconds()
	return r
}

func runCase(ctx context.Context, cfg config, name string) error {
	var fn *server
	var err error
	if cfg.addr != "" {
		fn = &server{name: "function", addr: cfg.addr, pid: cfg.pid}
		if err := fn.dial(); err != nil {
			return err
		}
	} else {
		fn, err = start(ctx, "function", []string{cfg.binary, "--insecure", "--metrics-address=", fmt.Sprintf("--max-recv-message-size=%d", cfg.maxRecvMiB)})
		if err != nil {
			return err
		}
	}
	defer fn.stop()
	var floor *server
	if cfg.echo {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		if floor, err = start(ctx, "echo", []string{self, "-serve=echo"}); err != nil {
			return err
		}
		defer floor.stop()
	}

	reqs, err := requests(ctx, fn, cfg.examples, name)
	if err != nil {
		return err
	}
	size := 0
	for _, r := range reqs {
		size += protoSize(r)
	}
	fmt.Printf("\ncase %s: %d request(s), %d bytes on average; %s per level per server after %s warm-up\n",
		name, len(reqs), size/len(reqs), cfg.duration, cfg.warmup)
	fmt.Printf("%-9s %5s %9s %10s %10s %10s %10s %6s\n", "server", "conc", "calls", "calls/s", "p50", "p99", "max", "errors")
	for _, c := range cfg.levels {
		rf := load(ctx, fn, reqs, c, cfg.warmup, cfg.duration)
		printResult(rf)
		if floor == nil {
			continue
		}
		re := load(ctx, floor, reqs, c, cfg.warmup, cfg.duration)
		printResult(re)
		fmt.Printf("%-9s %5d %9s %10s %9.2fx %9.2fx %9.2fx\n", "ratio", c, "", "", ratio(rf.p50, re.p50), ratio(rf.p99, re.p99), ratio(rf.max, re.max))
	}
	fmt.Printf("peak RSS (VmHWM): function %s", mib(fn.peakRSS()))
	if floor != nil {
		fmt.Printf(", echo %s", mib(floor.peakRSS()))
	}
	fmt.Println()
	return nil
}

func printResult(r result) {
	fmt.Printf("%-9s %5d %9d %10.0f %10s %10s %10s %6d\n", r.server, r.concurrency, r.calls, r.throughput, round(r.p50), round(r.p99), round(r.max), r.errs)
	if r.firstErr != nil {
		fmt.Printf("          first error: %v\n", r.firstErr)
	}
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func round(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

func mib(kib int) string {
	if kib == 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.1f MiB", float64(kib)/1024)
}

func protoSize(m *fnv1.RunFunctionRequest) int { return proto.Size(m) }
