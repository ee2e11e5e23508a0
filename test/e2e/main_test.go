// Package e2e runs function-worker-image under a real Crossplane v2.2.0, a
// real kube-apiserver and CDI's real controller and API server, all on
// 127.0.0.1, with no Docker and no kind. What CDI needs of a cluster that
// has no process here (a CSI provisioner, a kubelet) is played by the
// harness's stand-ins. The Cluster API core manager runs too; the providers
// it drives (CAPK, CABPT) and the kubelet are stand-ins.
//
// Run it with `make e2e`. The first run builds etcd, kube-apiserver,
// kube-controller-manager and Crossplane core from the Go module proxy (about
// 20 minutes on 2 cores) and caches them by version under the user cache dir;
// later runs start in seconds.
package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// Timeouts. Every wait of the suite is bounded by one of these; none ends
// quietly.
const (
	// functionTTL is the function's --ttl: how often Crossplane calls it in
	// steady state, and so how soon a change to a required (not composed)
	// resource, such as a golden's phase, is seen.
	functionTTL = 5 * time.Second
	// pollInterval is Crossplane's --poll-interval.
	pollInterval = 5 * time.Second
	// reconcileTimeout bounds one expected reaction of the function: a few
	// TTLs, to allow for the required-resources round trip and jitter.
	reconcileTimeout = 60 * time.Second
	// gcTimeout bounds the garbage collector removing dependents, and a
	// pool's deletion through its guard and Usages (a chain of reconciles
	// that took over 90 s on a fresh 2-core CI machine).
	gcTimeout = 3 * time.Minute
	// webhookTimeout bounds each step of proving, at start-up, that
	// Crossplane's nousages webhook refuses deletes.
	webhookTimeout = 60 * time.Second
	// setupTimeout bounds building (cold: ~20 minutes on 2 cores) and
	// starting the control plane.
	setupTimeout = 50 * time.Minute
)

// goldenNamespace is where the catalog puts the goldens (the product default).
const goldenNamespace = "cozy-public"

var (
	cp       *harness.ControlPlane
	cdi      *harness.CDI
	capi     *harness.Manager
	cabpt    *harness.Manager
	capk     *harness.Manager
	platform Platform
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if testing.Short() {
		fmt.Println("e2e: SKIPPED in -short mode: the suite needs a real control plane; run make e2e")
		return 0
	}
	if err := harness.CheckCrossplaneVersion(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	repoRoot, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	work := os.Getenv("E2E_WORK_DIR")
	if work == "" {
		if work, err = os.MkdirTemp("", "function-worker-image-e2e-"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()

	cp, err = harness.New(ctx, harness.Options{RepoRoot: repoRoot, WorkDir: work, FunctionTTL: functionTTL, PollInterval: pollInterval})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: cannot prepare the control plane: %v\ne2e: run artefacts kept in %s\n", err, work)
		return 1
	}
	// Stop every process on exit, on failure and on SIGINT/SIGTERM. (On
	// SIGKILL the children die through Pdeathsig.)
	defer cp.Stop()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "e2e: %v: stopping the control plane; logs kept in %s\n", s, cp.LogDir)
		cp.Stop()
		os.Exit(1)
	}()

	start := time.Now()
	if err := setUp(ctx, repoRoot); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: cannot start the control plane: %v\n", err)
		reportFailure()
		return 1
	}
	fmt.Printf("e2e: control plane up in %s on Crossplane %s (work dir %s); XRDs from %s\n", time.Since(start).Round(time.Second), harness.CrossplaneVersion, work, platform.Source)

	code := m.Run()
	if code != 0 {
		reportFailure()
		return code
	}
	cp.Stop()
	if os.Getenv("E2E_KEEP") == "" && os.Getenv("E2E_WORK_DIR") == "" {
		_ = os.RemoveAll(work)
	}
	return 0
}

// setUp starts the control plane and installs everything the scenarios
// share: CRDs (CDI's and the snapshot CRDs among them), namespaces, the
// CSIDriver and default StorageClass, the default instance type, the
// function and its registration, Crossplane and its webhook configurations,
// the XRDs and Compositions, kube-controller-manager, the CSI snapshot
// controller, and last CDI with the stand-ins.
func setUp(ctx context.Context, repoRoot string) error {
	if err := cp.StartAPIServer(ctx); err != nil {
		return err
	}
	crds, err := harness.UpstreamCRDs(ctx)
	if err != nil {
		return err
	}
	// Cluster API's CRDs keep their upstream storage version (v1beta2) and
	// convert through the manager's webhook: the function writes v1beta1,
	// the manager reads v1beta2.
	if capi, err = harness.NewCAPI(cp); err != nil {
		return err
	}
	if cabpt, err = harness.NewCABPT(cp); err != nil {
		return err
	}
	if capk, err = harness.NewCAPK(cp); err != nil {
		return err
	}
	for _, m := range []*harness.Manager{capi, cabpt, capk} {
		m.ConvertByWebhook(crds)
	}
	kubevirtCRDs, err := harness.KubeVirtCRDs(ctx)
	if err != nil {
		return err
	}
	if cdi, err = harness.NewCDI(ctx, cp); err != nil {
		return err
	}
	cdiCRDs, err := cdi.Bin.CRDs(ctx)
	if err != nil {
		return err
	}
	snapshotCRDs, err := harness.SnapshotCRDs(ctx)
	if err != nil {
		return err
	}
	crds = append(append(append(append(crds, cdiCRDs...), snapshotCRDs...), kubevirtCRDs...), harness.MinimalCRDs()...)
	harness.LabelProviderContracts(crds)
	if err := cp.InstallCRDs(ctx, crds); err != nil {
		return err
	}
	// The Cluster API managers serve the conversion of their CRDs, so they
	// start before anything (kube-controller-manager's garbage collector
	// among them) lists their kinds; then the KubeVirt and kubelet
	// stand-ins below them.
	for _, m := range []*harness.Manager{capi, cabpt, capk} {
		if err := m.Start(ctx); err != nil {
			return err
		}
	}
	if err := cp.StartNodeStandIns(); err != nil {
		return err
	}
	for _, ns := range []string{"crossplane-system", goldenNamespace} {
		if err := cp.EnsureNamespace(ctx, ns); err != nil {
			return err
		}
	}
	if err := cp.InstallStorage(ctx); err != nil {
		return err
	}
	if err := cp.InstallInstanceTypes(ctx); err != nil {
		return err
	}
	if platform, err = LoadPlatform(repoRoot); err != nil {
		return err
	}
	if err := cp.StartFunction(ctx); err != nil {
		return err
	}
	for _, name := range platform.FunctionNames {
		if err := cp.RegisterFunction(ctx, name); err != nil {
			return err
		}
	}
	// Crossplane runs as its own ServiceAccount, bound to the chart's roles
	// and the function's ClusterRole (harness/identity.go).
	if err := cp.SetUpCrossplaneIdentity(ctx); err != nil {
		return err
	}
	if err := cp.StartCrossplane(ctx); err != nil {
		return err
	}
	// Crossplane's webhooks (today only nousages, which enforces Usages)
	// are registered with the kube-apiserver once their server runs, and
	// no scenario starts before a Usage is demonstrably enforced.
	if err := cp.InstallCrossplaneWebhooks(ctx); err != nil {
		return err
	}
	if err := cp.WaitUsageWebhook(ctx, webhookTimeout); err != nil {
		return err
	}
	// Crossplane's roles for the composites, as its RBAC manager makes
	// them, before the XRDs that start their controllers.
	if err := cp.GrantXRDRoles(ctx, platform.Objects); err != nil {
		return err
	}
	// XRDs are established by Crossplane, so they go in after it starts.
	if err := cp.ApplyXRDs(ctx, platform.Objects); err != nil {
		return err
	}
	for _, name := range platform.FunctionNames {
		if err := cp.CheckFunctionRegistered(ctx, name); err != nil {
			return err
		}
	}
	if err := cp.StartControllerManager(ctx); err != nil {
		return err
	}
	// The CSI snapshot controller, once its CRDs are served (it lists
	// them on start and exits without them).
	if err := cp.StartSnapshotController(ctx); err != nil {
		return err
	}
	// CDI last: its populators need the PV binder of kube-controller-
	// manager, and nothing before the scenarios creates a DataVolume.
	return cdi.Start(ctx)
}

// Platform is the set of XRDs and Compositions the suite installs.
type Platform struct {
	// Objects are the XRDs and Compositions, in order.
	Objects []*unstructured.Unstructured
	// FunctionNames are the functionRef names the Compositions use; the
	// suite registers the running function under each.
	FunctionNames []string
	// Source says, per composite kind, where its XRD came from.
	Source string
}

// LoadPlatform reads, per composite kind, the shipped XRD and Composition
// from package/configuration/ when both exist, else the suite's fallback
// copy under testdata/fallback/, plus the smoke scenario's own XRD.
func LoadPlatform(repoRoot string) (Platform, error) {
	var p Platform
	var sources []string
	for _, kind := range []string{"xworkerimagecatalog", "xtenantcluster", "xnodepool"} {
		xrd := filepath.Join(repoRoot, "package", "configuration", "xrd-"+kind+".yaml")
		comp := filepath.Join(repoRoot, "package", "configuration", "composition-"+kind+".yaml")
		files := []string{xrd, comp}
		src := "package/configuration"
		if !exists(xrd) || !exists(comp) {
			files = []string{filepath.Join("testdata", "fallback", kind+".yaml")}
			src = "testdata/fallback"
		}
		objs, err := harness.ReadYAMLFiles(files...)
		if err != nil {
			return Platform{}, err
		}
		p.Objects = append(p.Objects, objs...)
		sources = append(sources, kind+"="+src)
	}
	smoke, err := harness.ReadYAMLFiles(filepath.Join("testdata", "smoke"))
	if err != nil {
		return Platform{}, err
	}
	p.Objects = append(p.Objects, smoke...)
	p.Source = strings.Join(sources, ", ")

	names := map[string]bool{}
	for _, o := range p.Objects {
		if o.GroupVersionKind().GroupKind() != harness.Composition.GroupKind() {
			continue
		}
		steps, _, _ := unstructured.NestedSlice(o.Object, "spec", "pipeline")
		for _, s := range steps {
			if n, _, _ := unstructured.NestedString(s.(map[string]any), "functionRef", "name"); n != "" {
				names[n] = true
			}
		}
	}
	for n := range names {
		p.FunctionNames = append(p.FunctionNames, n)
	}
	sort.Strings(p.FunctionNames)
	if len(p.FunctionNames) == 0 {
		return Platform{}, fmt.Errorf("no Composition references a function")
	}
	return p, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// requireMode skips the test, naming the missing piece, when fn.go's
// NewFunction does not register mode (Catalog, TenantCluster or NodePool)
// yet. It never skips for any other reason.
func requireMode(t *testing.T, mode string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(cp.RepoRoot, "fn.go"))
	if err != nil {
		t.Fatalf("cannot read fn.go to check which modes are implemented: %v", err)
	}
	if !regexp.MustCompile(`v1beta1\.Mode` + mode + `\s*:`).Match(src) {
		t.Skipf("SKIPPED: mode %s is not implemented yet: fn.go NewFunction registers no v1beta1.Mode%s", mode, mode)
	}
}

// reportFailure keeps the run's logs, dumps what the API server holds and
// prints where to look.
func reportFailure() {
	if cp == nil || cp.Dynamic == nil {
		return
	}
	dump := filepath.Join(cp.LogDir, "objects.yaml")
	if err := dumpObjects(dump); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: cannot dump objects: %v\n", err)
	}
	fmt.Fprintf(os.Stderr, "\ne2e: FAILED; logs of every process and a dump of the API objects are kept in %s\n", cp.LogDir)
	for _, p := range cp.Processes() {
		fmt.Fprintf(os.Stderr, "\n----- last lines of %s -----\n%s\n", p.LogPath, p.LogTail(15))
	}
}

func dumpObjects(path string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	kinds := []schema.GroupVersionKind{
		harness.WorkerImageCatalog, harness.TenantCluster, harness.NodePool,
		{Group: "smoke.workerimage.cozystack.io", Version: "v1alpha1", Kind: "XWorkerImageCatalog"},
		harness.DataVolume, harness.PVC, harness.PV, harness.PodKind, harness.StorageProfileKind,
		harness.KubevirtMachineTemplate, harness.TalosConfigTemplate,
		harness.Cluster, harness.MachineDeployment, harness.MachineSet, harness.Machine, harness.KubevirtMachine, harness.VirtualMachine, harness.VirtualMachineInstance, harness.TalosConfig, harness.Node, harness.MachineHealthCheck, harness.Role, harness.RoleBinding,
		harness.FunctionRevision, harness.Usage, harness.ConfigMap, harness.ValidatingWebhookConfiguration, harness.Event,
	}
	for _, k := range kinds {
		items, err := cp.List(ctx, k, "", "")
		if err != nil {
			_, _ = fmt.Fprintf(f, "# %s: %v\n", k.Kind, err)
			continue
		}
		for i := range items {
			items[i].SetManagedFields(nil)
			b, _ := yaml.Marshal(items[i].Object)
			_, _ = fmt.Fprintf(f, "---\n%s", b)
		}
	}
	return nil
}
