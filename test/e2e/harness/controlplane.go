// Package harness runs a real control plane for the end-to-end suite: etcd,
// kube-apiserver, kube-controller-manager (garbage collector only), Crossplane
// core out of cluster and function-worker-image over mTLS, all bound to
// 127.0.0.1, all stopped when the suite ends.
package harness

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Options configure a control plane.
type Options struct {
	// RepoRoot is the root of the function-worker-image repository.
	RepoRoot string
	// WorkDir receives the PKI, etcd's data, the binaries built for the run
	// and every process's log (under logs/).
	WorkDir string
	// FunctionTTL is the function's --ttl: how soon Crossplane calls it again
	// when its Input sets no TTL.
	FunctionTTL time.Duration
	// PollInterval is Crossplane's --poll-interval.
	PollInterval time.Duration
}

// ControlPlane is a running etcd and kube-apiserver, with clients, plus the
// processes started on top of it.
type ControlPlane struct {
	Options
	LogDir     string
	PKI        *PKI
	Bin        Binaries
	Kubeconfig string

	Config  *rest.Config
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	Mapper  *restmapper.DeferredDiscoveryRESTMapper

	// FunctionAddress is host:port of the function's gRPC server.
	FunctionAddress string
	// WebhookURL is https://127.0.0.1:<port> of Crossplane's webhook
	// server; the webhook configurations' url clientConfigs are this plus
	// the upstream service path.
	WebhookURL string

	crossplane *Process
	function   *Process
	apiServer  *Process
	// replicas are the function's further replicas (replicas.go), and
	// replicasEndpoint the name:port the FunctionRevisions point at
	// while they run ("" for FunctionAddress).
	replicas         []*Process
	replicasEndpoint string
	functionNames    []string
	// crossplaneMetrics and functionMetrics are the URLs of Crossplane's
	// and the function's Prometheus metrics.
	crossplaneMetrics, functionMetrics string

	apiServerURL string
	procs        []*Process
	standIns     *standIns
	nodes        *nodeStandIns

	// importerBin is CDI's cdi-importer (CDI.Start sets it);
	// importerNet the network of the real importers (importer.go).
	importerBin string
	// clonerBin, uploadServerBin and clonerStartup are CDI's cdi-cloner,
	// cdi-uploadserver and the cloner's entrypoint script (CDI.Start sets
	// them); copyNamespaces the namespaces RunHostAssistedCopies named.
	clonerBin, uploadServerBin, clonerStartup string
	copyNamespaces                            sync.Map
	importerNetMu                             sync.Mutex
	importerNet                               *ImporterNetwork
}

// New prepares a control plane: it builds (or finds cached) binaries and
// generates the PKI. Nothing runs yet.
func New(ctx context.Context, o Options) (*ControlPlane, error) {
	cp := &ControlPlane{Options: o, LogDir: filepath.Join(o.WorkDir, "logs")}
	binDir := filepath.Join(o.WorkDir, "bin")
	for _, d := range []string{cp.LogDir, binDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	b, err := BuildBinaries(ctx, o.RepoRoot, binDir, cp.LogDir)
	if err != nil {
		return nil, err
	}
	cp.Bin = b
	if cp.PKI, err = NewPKI(filepath.Join(o.WorkDir, "pki")); err != nil {
		return nil, fmt.Errorf("cannot generate the PKI: %w", err)
	}
	return cp, nil
}

// StartAPIServer starts etcd and kube-apiserver and waits until the
// apiserver is ready.
func (cp *ControlPlane) StartAPIServer(ctx context.Context) error {
	ports, err := FreeLoopbackPorts(3)
	if err != nil {
		return err
	}
	etcdClient := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	etcdPeer := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	etcd, err := StartProcess(cp.LogDir, "etcd", cp.Bin.Etcd, []string{
		"--name=e2e",
		"--data-dir=" + filepath.Join(cp.WorkDir, "etcd"),
		"--listen-client-urls=" + etcdClient,
		"--advertise-client-urls=" + etcdClient,
		"--listen-peer-urls=" + etcdPeer,
		"--initial-advertise-peer-urls=" + etcdPeer,
		"--initial-cluster=e2e=" + etcdPeer,
		"--unsafe-no-fsync",
		"--log-level=warn",
	}, nil)
	if err != nil {
		return err
	}
	cp.procs = append(cp.procs, etcd)
	if err := cp.waitHTTP(ctx, etcd, etcdClient+"/health", nil, 30*time.Second); err != nil {
		return err
	}

	cp.apiServerURL = "https://127.0.0.1:" + strconv.Itoa(ports[2])
	audit, err := cp.auditArgs() // identity.go
	if err != nil {
		return err
	}
	api, err := StartProcess(cp.LogDir, "kube-apiserver", cp.Bin.APIServer, append([]string{
		"--etcd-servers=" + etcdClient,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ports[2]),
		"--cert-dir=" + filepath.Join(cp.WorkDir, "apiserver-certs"),
		"--tls-cert-file=" + cp.PKI.APIServerCert,
		"--tls-private-key-file=" + cp.PKI.APIServerKey,
		"--client-ca-file=" + cp.PKI.CACert,
		"--token-auth-file=" + cp.PKI.TokenFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=" + cp.apiServerURL,
		"--service-account-key-file=" + cp.PKI.ServiceAccountPub,
		"--service-account-signing-key-file=" + cp.PKI.ServiceAccountKey,
		"--service-cluster-ip-range=10.96.0.0/24",
		"--disable-admission-plugins=ServiceAccount",
		"--endpoint-reconciler-type=none",
		"--allow-privileged=true",
		// /debug/pprof, for the suite's admin only (RBAC) on loopback:
		// where a load run spends the apiserver's CPU and heap
		// (docs/performance.md).
		"--profiling=true",
	}, audit...), nil)
	if err != nil {
		return err
	}
	cp.procs = append(cp.procs, api)
	cp.apiServer = api
	api.ready = func(ctx context.Context) error {
		return cp.waitHTTP(ctx, api, cp.apiServerURL+"/readyz", cp.authorized, 60*time.Second)
	}
	if err := api.ready(ctx); err != nil {
		return err
	}
	return cp.initClients()
}

func (cp *ControlPlane) authorized(r *http.Request) {
	r.Header.Set("Authorization", "Bearer "+cp.PKI.Token)
}

func (cp *ControlPlane) initClients() error {
	cp.Config = &rest.Config{
		Host:            cp.apiServerURL,
		BearerToken:     cp.PKI.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: cp.PKI.CAData()},
		QPS:             200,
		Burst:           400,
		Timeout:         30 * time.Second,
		// The suite reads CAPI's v1beta1 objects on purpose (the version the
		// function composes); the deprecation warning on every poll would
		// bury the test output, so each distinct warning is logged once.
		WarningHandler: rest.NewWarningWriter(os.Stderr, rest.WarningWriterOptions{Deduplicate: true}),
	}
	var err error
	if cp.Kube, err = kubernetes.NewForConfig(cp.Config); err != nil {
		return err
	}
	if cp.Dynamic, err = dynamic.NewForConfig(cp.Config); err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	if err != nil {
		return err
	}
	cp.Mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))

	kc := clientcmdapi.NewConfig()
	kc.Clusters["e2e"] = &clientcmdapi.Cluster{Server: cp.apiServerURL, CertificateAuthorityData: cp.PKI.CAData()}
	kc.AuthInfos["e2e"] = &clientcmdapi.AuthInfo{Token: cp.PKI.Token}
	kc.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "e2e"}
	kc.CurrentContext = "e2e"
	cp.Kubeconfig = filepath.Join(cp.WorkDir, "kubeconfig")
	return clientcmd.WriteToFile(*kc, cp.Kubeconfig)
}

// StartFunction starts function-worker-image on a free loopback port, serving
// mTLS with the run's certificates, and its metrics on another.
func (cp *ControlPlane) StartFunction(ctx context.Context) error {
	ports, err := FreeLoopbackPorts(2)
	if err != nil {
		return err
	}
	cp.FunctionAddress = "127.0.0.1:" + strconv.Itoa(ports[0])
	cp.functionMetrics = "http://127.0.0.1:" + strconv.Itoa(ports[1]) + "/metrics"
	fn, err := StartProcess(cp.LogDir, "function-worker-image", cp.Bin.Function, []string{
		"--debug",
		"--tls-certs-dir=" + cp.PKI.FunctionCertsDir,
		"--address=" + cp.FunctionAddress,
		"--metrics-address=127.0.0.1:" + strconv.Itoa(ports[1]),
		"--ttl=" + cp.FunctionTTL.String(),
	}, nil)
	if err != nil {
		return err
	}
	cp.procs = append(cp.procs, fn)
	cp.function = fn
	fn.metrics = cp.functionMetrics
	fn.ready = func(ctx context.Context) error { return cp.waitTLS(ctx, fn, cp.FunctionAddress, 30*time.Second) }
	return fn.ready(ctx)
}

// StartCrossplane starts Crossplane core out of cluster: no package
// runtime, client certificates from the run's PKI, and its webhook server on
// with the run's serving certificate on a free loopback port (the build
// patches it to bind 127.0.0.1, see hack/build-binaries.sh). Webhooks are on
// because Crossplane v2.2.0 sets up both the Usage controllers and the
// nousages webhook only when --enable-webhooks and the (default-on) beta
// Usages feature are both on (cmd/crossplane/core/core.go, "if
// c.EnableWebhooks && o.Features.Enabled(features.EnableBetaUsages)");
// without webhooks nothing labels a used object and nothing refuses its
// deletion. The webhook configurations pointing the kube-apiserver at this
// server are installed separately (InstallCrossplaneWebhooks), after it is
// ready; in a cluster Crossplane's `core init` container installs them.
func (cp *ControlPlane) StartCrossplane(ctx context.Context) error {
	ports, err := FreeLoopbackPorts(3)
	if err != nil {
		return err
	}
	xp, err := StartProcess(cp.LogDir, "crossplane", cp.Bin.Crossplane, []string{
		"--debug",
		"core", "start",
		"--enable-webhooks=true",
		"--enable-usages=true",
		"--package-runtime=External",
		"--tls-client-certs-dir=" + cp.PKI.CrossplaneCertsDir,
		// controller-runtime's webhook server loads tls.crt and tls.key
		// from this directory (core.go: CertDir: c.TLSServerCertsDir).
		"--tls-server-certs-dir=" + cp.PKI.CrossplaneWebhookCertsDir,
		"--cache-dir=" + filepath.Join(cp.WorkDir, "xpkg-cache"),
		"--xfn-cache-dir=" + filepath.Join(cp.WorkDir, "xfn-cache"),
		"--metrics-port=" + strconv.Itoa(ports[0]),
		"--health-probe-port=" + strconv.Itoa(ports[1]),
		"--webhook-port=" + strconv.Itoa(ports[2]),
		"--poll-interval=" + cp.PollInterval.String(),
	}, []string{"KUBECONFIG=" + cp.crossplaneKubeconfig()}) // its own identity: identity.go
	if err != nil {
		return err
	}
	cp.procs = append(cp.procs, xp)
	cp.crossplane = xp
	cp.crossplaneMetrics = "http://127.0.0.1:" + strconv.Itoa(ports[0]) + "/metrics"
	cp.WebhookURL = "https://127.0.0.1:" + strconv.Itoa(ports[2])
	// With webhooks on, /readyz includes the "webhook" check, which passes
	// once the webhook server accepts TLS connections (core.go SetupProbes:
	// hookServer.StartedChecker()). Whether the kube-apiserver can reach
	// it and trusts its certificate is proven by WaitUsageWebhook.
	xp.ready = func(ctx context.Context) error {
		return cp.waitHTTP(ctx, xp, fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[1]), nil, 60*time.Second)
	}
	return xp.ready(ctx)
}

// StartControllerManager starts kube-controller-manager with only the
// garbage collector, namespace, PVC and PV protection and PersistentVolume
// binder controllers, serving nothing. The PV binder binds a claim to the
// volume the provisioner stand-in creates for it, and rebinds the volumes
// CDI's populators move from PVC' to the target claim (standins.go). The
// protection controllers are needed because the apiserver's
// StorageObjectInUseProtection admission puts kubernetes.io/pvc-protection
// on every PVC and kubernetes.io/pv-protection on every PV, and only they
// remove them: without PVC protection a golden deleted in the foreground
// would wait for its PVC forever; without PV protection every PV the
// provisioner stand-in deletes once Released stays Terminating, and the PV
// binder, which syncs every PV it knows each resync period and GETs each
// released one again before it reclaims it (its log: a GET of the PV, then
// pv_controller.go isVolumeReleased), spends its client's rate limit
// (--kube-api-qps, 20 a second) on them: after an
// hour of chaos scenarios, 312 such PVs delayed its claim writes so long
// that every one lost to CDI's newer write of the same claim, and no new
// claim was given to the provisioner (docs/reliability.md, "Found (runs 8
// and 10)"). Start it
// after every CRD and XRD is established: its discovery resyncs only every
// 30 seconds, and until then it cannot collect objects of newer kinds.
func (cp *ControlPlane) StartControllerManager(_ context.Context) error {
	kcm, err := StartProcess(cp.LogDir, "kube-controller-manager", cp.Bin.ControllerManager, []string{
		"--kubeconfig=" + cp.Kubeconfig,
		"--controllers=garbage-collector-controller,namespace-controller,persistentvolumeclaim-protection-controller,persistentvolume-protection-controller,persistentvolume-binder-controller",
		"--leader-elect=false",
		"--secure-port=0",
		"--concurrent-gc-syncs=5",
		"--profiling=false",
		"--v=2", // the garbage collector logs what it deletes
	}, nil)
	if err != nil {
		return err
	}
	cp.procs = append(cp.procs, kcm)
	// Nothing to probe: with --secure-port=0 it serves nothing. Give it a
	// moment and make sure it did not exit on a bad flag.
	time.Sleep(time.Second)
	return cp.Healthy()
}

// Healthy returns an error naming the first process that has exited.
func (cp *ControlPlane) Healthy() error {
	for _, p := range cp.procs {
		if exited, err := p.Exited(); exited {
			return fmt.Errorf("%s exited (%s); last lines of %s:\n%s", p.Name, exitReason(err), p.LogPath, p.LogTail(30))
		}
	}
	return nil
}

// adopt makes p one of the control plane's processes: checked by Healthy,
// reported on failure, stopped by Stop.
func (cp *ControlPlane) adopt(p *Process) { cp.procs = append(cp.procs, p) }

// Processes returns the processes started so far.
func (cp *ControlPlane) Processes() []*Process { return cp.procs }

// Stop stops the stand-ins, then every process, newest first.
func (cp *ControlPlane) Stop() {
	if cp.standIns != nil {
		cp.standIns.stop()
		cp.standIns = nil
	}
	if cp.nodes != nil {
		cp.nodes.stop()
		cp.nodes = nil
	}
	for i := len(cp.procs) - 1; i >= 0; i-- {
		cp.procs[i].Stop(10 * time.Second)
	}
}

func (cp *ControlPlane) waitHTTP(ctx context.Context, p *Process, url string, decorate func(*http.Request), timeout time.Duration) error {
	return waitHTTPS(ctx, p, url, cp.PKI.CAData(), decorate, timeout)
}

// waitHTTPS polls url, trusting the CA in caPEM, until it answers 200, or
// p exits, or timeout passes.
func waitHTTPS(ctx context.Context, p *Process, url string, caPEM []byte, decorate func(*http.Request), timeout time.Duration) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return poll(ctx, p, timeout, "GET "+url+" to answer 200", func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if decorate != nil {
			decorate(req)
		}
		rsp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer func() { _ = rsp.Body.Close() }()
		if rsp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %s", rsp.Status)
		}
		return nil
	})
}

func (cp *ControlPlane) waitTLS(ctx context.Context, p *Process, addr string, timeout time.Duration) error {
	return poll(ctx, p, timeout, "a TCP connection to "+addr, func(ctx context.Context) error {
		d := net.Dialer{Timeout: 2 * time.Second}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return c.Close()
	})
}

// poll runs check every 200ms until it returns nil, p exits, or timeout.
func poll(ctx context.Context, p *Process, timeout time.Duration, what string, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if exited, err := p.Exited(); exited {
			return fmt.Errorf("%s exited (%s) while waiting for %s; last lines of %s:\n%s", p.Name, exitReason(err), what, p.LogPath, p.LogTail(30))
		}
		if last = check(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: no %s within %s (last error: %w); last lines of %s:\n%s", p.Name, what, timeout, last, p.LogPath, p.LogTail(30))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// exitReason describes how a process ended.
func exitReason(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// FunctionProcess is the running function (every replica the suite runs).
func (cp *ControlPlane) FunctionProcess() *Process { return cp.function }

// CrossplaneProcess is the running Crossplane core.
func (cp *ControlPlane) CrossplaneProcess() *Process { return cp.crossplane }

// APIServerProcess is the running kube-apiserver (etcd is a process of its
// own, kept when the apiserver restarts).
func (cp *ControlPlane) APIServerProcess() *Process { return cp.apiServer }
