package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// Remediation by the MachineHealthCheck (issue 19, item 6), on the real
// Cluster API core manager v1.11.4. What the scenario relies on, all in
// sigs.k8s.io/cluster-api@v1.11.4:
//
//   - What marks a Machine unhealthy:
//     internal/controllers/machinehealthcheck/machinehealthcheck_targets.go,
//     needsRemediation: a Node condition listed in spec.checks
//     (the function's Ready=False and Ready=Unknown) whose
//     lastTransitionTime is older than its timeout sets the Machine's
//     v1beta2 condition HealthCheckSucceeded=False, reason UnhealthyNode,
//     "Condition Ready on Node is reporting status <s> for more than <t>";
//     before that it only requeues (and records DetectedUnhealthy).
//   - Whether it may remediate:
//     internal/controllers/machinehealthcheck/machinehealthcheck_controller.go,
//     isAllowedRemediation/getMaxUnhealthy: unhealthy = expectedMachines -
//     currentHealthy, allowed while <= maxUnhealthy scaled on
//     expectedMachines rounded down: the pool's default "50%" of 2 is 1.
//     A deleting Machine stays a target and the MachineSet creates the
//     replacement only once it is gone (below), so the count never exceeds
//     1 here. Then patchUnhealthyTargets sets OwnerRemediated=False, reason
//     WaitingForRemediation, in the same patch, and records
//     MachineMarkedUnhealthy on the Machine. Nothing is remediated by the
//     MachineHealthCheck itself without a remediationTemplate.
//   - Who deletes: internal/controllers/machineset/machineset_controller.go,
//     reconcileUnhealthyMachines: the owning MachineSet (of the
//     MachineDeployment's current revision) selects Machines with
//     HealthCheckSucceeded=False and OwnerRemediated=False
//     (util/collections/machine_filters.go IsUnhealthyAndOwnerRemediated),
//     runs its preflight checks, patches OwnerRemediated=False, reason
//     MachineDeleting, then deletes the Machine. getAndAdoptMachinesForMachineSet
//     keeps deleting Machines in the count, so syncReplicas creates the
//     replacement, on the MachineSet's own template (the same
//     KubevirtMachineTemplate, cloned-from-name), once the old Machine is
//     gone.
//   - The Machine's deletion: internal/controllers/machine/machine_controller.go,
//     reconcileDelete: drain (no pods here), volume detach, delete the
//     infrastructure machine (KubevirtMachine) and bootstrap config
//     (TalosConfig), wait for them, then delete the Node if allowed (below).
//     CAPK deletes the KubevirtMachine's VirtualMachine, and the garbage
//     collector its VMI and worker disk DataVolume (controlled by the VM),
//     and the PVC with the DataVolume.
//   - When it looks at Node conditions at all: needsRemediation (same file)
//     returns "healthy, no requeue" for every Machine while the Cluster's
//     v1beta2 InfrastructureReady is not True ("Not evaluating target
//     health because the cluster infrastructure is not ready"), and a
//     Cluster without infrastructureRef, as cp.CreateCluster makes it, has
//     InfrastructureReady=Unknown, reason InternalError, for ever
//     (internal/controllers/cluster/cluster_controller_status.go
//     setInfrastructureReadyCondition; reconcileInfrastructure in
//     cluster_controller_phases.go sets only the v1beta1 condition and
//     infrastructureProvisioned). cp.CreateCluster's Cluster has a
//     KubevirtCluster that CAPK's controller provisions, as every tenant
//     Cluster on CAPK has, and the scenario waits for InfrastructureReady.
//   - Who deletes the Node: reconcileDelete in
//     internal/controllers/machine/machine_controller.go deletes it only if
//     isDeleteNodeAllowed (same file): the Cluster has control plane
//     Machines, or its control plane reports
//     status.externalManagedControlPlane (util.IsExternalManagedControlPlane);
//     otherwise it logs "Skipping deletion of Kubernetes Node ... no control
//     plane members" and leaves the Node. cp.CreateCluster's control plane
//     has no Machines and reports itself externally managed, as Kamaji's
//     KamajiControlPlane (cozystack's tenant control plane) does by default
//     (cluster-api-control-plane-provider-kamaji
//     api/v1alpha1/kamajicontrolplane_types.go).
//
// The kubelet stand-in reports the fault (harness.KubeletReadyAnnotation):
// a Node turns Ready=False (round 1) or Ready=Unknown (round 2, on the
// other original worker) and stays so.

// machineV1beta2 is the Machine as Cluster API v1.11 stores it: its
// status.conditions are the v1beta2 conditions the MachineHealthCheck and
// the MachineSet set.
var machineV1beta2 = schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Machine"}

// mhcTimeout is the pool's readyFalseTimeout and readyUnknownTimeout:
// short, so that the scenario does not wait the defaults (10m, 5m).
const mhcTimeout = 10 * time.Second

// clonedFromName is the annotation Cluster API sets on an object it clones
// from a template (api/core/v1beta2/common_types.go TemplateClonedFromNameAnnotation).
const clonedFromName = "cluster.x-k8s.io/cloned-from-name"

// waitInfrastructureReady waits until Cluster API reports the Cluster's
// v1beta2 InfrastructureReady=True (from the KubevirtCluster CAPK's
// controller provisioned, cp.CreateCluster), which the MachineHealthCheck
// needs before it reads any Node condition.
func waitInfrastructureReady(t *testing.T, ns, name string) {
	t.Helper()
	cp.WaitCondition(t, reconcileTimeout, harness.Cluster, ns, name, "InfrastructureReady", "True")
}

// worker is what the scenario tracks of one Machine of the pool.
type worker struct {
	Machine                *unstructured.Unstructured // v1beta2
	Node, Infra, Bootstrap string
	Disk                   string // the worker disk DataVolume (and its PVC)
}

func readWorker(t *testing.T, ns, kmt, machine string) worker {
	t.Helper()
	m := cp.MustGet(t, machineV1beta2, ns, machine)
	w := worker{Machine: m}
	w.Node, _, _ = unstructured.NestedString(m.Object, "status", "nodeRef", "name")
	w.Infra, _, _ = unstructured.NestedString(m.Object, "spec", "infrastructureRef", "name")
	w.Bootstrap, _, _ = unstructured.NestedString(m.Object, "spec", "bootstrap", "configRef", "name")
	if w.Node == "" || w.Infra == "" || w.Bootstrap == "" {
		t.Fatalf("Machine %s/%s: nodeRef %q, infrastructureRef %q, bootstrap configRef %q: want all three", ns, machine, w.Node, w.Infra, w.Bootstrap)
	}
	// CAPK names the VM's disks <kubevirtmachine>-<dataVolumeTemplate name>
	// (pkg/kubevirt/utils.go prefixDataVolumeTemplates).
	tmpl := cp.MustGet(t, harness.KubevirtMachineTemplate, ns, kmt)
	dvts, _, _ := unstructured.NestedSlice(tmpl.Object, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates")
	if len(dvts) == 0 {
		t.Fatalf("KubevirtMachineTemplate %s/%s has no dataVolumeTemplates", ns, kmt)
	}
	name, _, _ := unstructured.NestedString(dvts[0].(map[string]any), "metadata", "name")
	w.Disk = w.Infra + "-" + name
	return w
}

// conditionOf returns status, reason and message of u's condition typ.
func conditionOf(u *unstructured.Unstructured, typ string) (status, reason, message string) {
	c := harness.Condition(u, typ)
	status, _ = c["status"].(string)
	reason, _ = c["reason"].(string)
	message, _ = c["message"].(string)
	return status, reason, message
}

// conditionTime returns the lastTransitionTime of u's condition typ.
func conditionTime(u *unstructured.Unstructured, typ string) (time.Time, error) {
	c := harness.Condition(u, typ)
	s, _ := c["lastTransitionTime"].(string)
	return time.Parse(time.RFC3339, s)
}

// warningsIn sorts the Warning events of namespace ns, as "Kind/name
// reason: message (xN, last time)", into refused: those last recorded from
// since on (the remediation) that are not known; known: those that are no
// refusal nor failure, whenever recorded; before: the others, recorded
// while the pool was created (the caller logs them: the deletion guard's
// Usage waiting for its MachineDeployment, GetUsingResource, is one).
// Known:
//   - CDI's "Pending: Clone Pending" on a worker disk: emitFailureConditionEvent
//     (pkg/controller/datavolume/controller-base.go, v1.65.0) records the
//     Running condition as a Warning whenever a bound or populating
//     DataVolume is neither ready nor running, and the clone populator
//     reports its Pending phase so (pkg/controller/populators/
//     clone-populator.go addRunningAnnotations) before the CSI clone starts;
//     whether a disk gets it depends on which phase a reconcile sees. The
//     scenario asserts each disk's Succeeded phase separately.
//   - An optimistic-concurrency conflict ("the object has been modified"),
//     which its controller retries: seen from kube-controller-manager's
//     PersistentVolume binder, ProvisioningFailed "Error saving claim" on a
//     worker disk's PVC whose annotations CDI wrote meanwhile.
func warningsIn(ctx context.Context, ns string, since time.Time) (refused, known, before []string, err error) {
	l, err := cp.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, nil, err
	}
	for _, e := range l.Items {
		if e.Type != corev1.EventTypeWarning {
			continue
		}
		last := e.LastTimestamp.Time
		if last.IsZero() {
			last = e.EventTime.Time
		}
		line := fmt.Sprintf("%s/%s %s: %s (x%d, last %s)", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message, e.Count, last.UTC().Format(time.RFC3339))
		switch {
		case e.InvolvedObject.Kind == "DataVolume" && e.Reason == "Pending" && e.Message == "Clone Pending",
			strings.Contains(e.Message, "the object has been modified; please apply your changes to the latest version and try again"):
			known = append(known, line)
		case last.Before(since):
			before = append(before, line)
		default:
			refused = append(refused, line)
		}
	}
	return refused, known, before, nil
}

// capiLog is the path of the Cluster API manager's log.
func capiLog() string { return cp.LogDir + "/capi-manager.log" }

// capiEvent waits for the event of type typ and reason on obj whose message
// contains msg, recorded by the Cluster API manager: in the API, or, when
// client-go's spam filter dropped it (25 events per object and source, see
// README "Events and client-go's spam filter"; the MachineHealthCheck
// records DetectedUnhealthy on every reconcile of a Machine whose Node is
// not there or not yet past a timeout, internal/controllers/
// machinehealthcheck/machinehealthcheck_targets.go healthCheckTargets, so
// a booted and then failed Machine reaches that many), in the manager's log
// of what its recorder recorded (logger "events", with the object's uid).
func capiEvent(t *testing.T, obj *unstructured.Unstructured, typ, reason, msg string) {
	t.Helper()
	cp.Eventually(t, reconcileTimeout, fmt.Sprintf("a %s %s event on %s %s containing %q", typ, reason, obj.GetKind(), obj.GetName(), msg), func(ctx context.Context) error {
		evs, err := cp.Events(ctx, obj)
		if err != nil {
			return err
		}
		var seen []string
		for _, e := range evs {
			if e.Type == typ && e.Reason == reason && strings.Contains(e.Message, msg) {
				return nil
			}
			seen = append(seen, fmt.Sprintf("%s %s x%d", e.Type, e.Reason, e.Count))
		}
		if err := logHasLine(capiLog(), `logger="events"`, `type="`+typ+`"`, `reason="`+reason+`"`, `"uid":"`+string(obj.GetUID())+`"`, msg); err != nil {
			return fmt.Errorf("not in the API (events there: %v) nor in the manager's log: %v", seen, err)
		}
		t.Logf("%s event %s on %s %s was recorded by the Cluster API manager but dropped by client-go's spam filter before the API (events there: %v)", typ, reason, obj.GetKind(), obj.GetName(), seen)
		return nil
	})
}

// warningsRecorded returns the lines of the Cluster API manager's log in
// which its recorder recorded a Warning event on an object of ns, whether
// or not the event reached the API.
func warningsRecorded(ns string) ([]string, error) {
	b, err := os.ReadFile(capiLog())
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, `logger="events"`) && strings.Contains(line, `type="Warning"`) && strings.Contains(line, `"namespace":"`+ns+`"`) {
			out = append(out, line)
		}
	}
	return out, nil
}

// refusalsLogged returns the lines of the node stand-ins' log about ns
// that report a refused or failed write (a worker disk the CDI webhook or
// the clone authorization refused, a VMI or Node status the API server
// refused).
func refusalsLogged(ns string) ([]string, error) {
	b, err := os.ReadFile(cp.LogDir + "/node-standins.log")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.Contains(line, " "+ns+"/") {
			continue
		}
		for _, s := range []string{"cannot", "denied", "forbidden", "admission webhook", "refused", "not authorized"} {
			if strings.Contains(line, s) {
				out = append(out, line)
				break
			}
		}
	}
	return out, nil
}

// TestMachineHealthCheckRemediatesAnUnhealthyWorkerOnRealCAPI: a pool of
// two workers with 10s Ready timeouts settles on the real Cluster API; one
// worker's Node turns Ready=False, later the other's Ready=Unknown. Each
// time the MachineHealthCheck marks that Machine unhealthy after the
// timeout, its MachineSet deletes it (the Machine, its KubevirtMachine,
// TalosConfig, Node, worker disk and PVC go) and creates a replacement on
// the same template, whose disk CDI clones from the golden by csi-clone;
// the other worker is untouched, no template, MachineSet or deployment
// change is made, the pool's gate stays open, it settles again, and
// nothing in the namespace is refused.
func TestMachineHealthCheckRemediatesAnUnhealthyWorkerOnRealCAPI(t *testing.T) {
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	const ns, cluster = "e2e-capi-mhc", "capi-mhc"
	sid := schematicID("capi-mhc")
	golden := goldenName(sid)
	inNamespace(t, ns)
	capiCluster(t, ns, cluster)
	waitInfrastructureReady(t, ns, cluster)
	readyGolden(t, ns, sid)
	xr := sizedPool(ns, cluster, sid, 2, "20Gi")
	// maxUnhealthy is left to its default, 50%: of two workers, one may be
	// remediated at a time.
	_ = unstructured.SetNestedStringMap(xr.Object, map[string]string{
		"readyFalseTimeout":   mhcTimeout.String(),
		"readyUnknownTimeout": mhcTimeout.String(),
	}, "spec", "healthCheck")
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	md := cluster + "-" + poolName
	kmt := poolTemplate(t, reconcileTimeout, ns, xr.GetName())
	if d := diskSourceOf(kmt); d.CloneFrom != goldenNamespace+"/"+golden {
		t.Fatalf("template %s: system disk %+v, want a clone of %s/%s", kmt.GetName(), d, goldenNamespace, golden)
	}
	settled := waitSettled(t, ns, md, kmt.GetName(), 2)
	t.Logf("settled: %s", settled)

	// The composed health check as Cluster API holds it (v1beta1 view):
	// the pool's timeouts, the default maxUnhealthy; and its status once
	// both workers are healthy, one remediation allowed.
	mhc := cp.MustGet(t, harness.MachineHealthCheck, ns, md)
	conds, _, _ := unstructured.NestedSlice(mhc.Object, "spec", "unhealthyConditions")
	var got []string
	for _, c := range conds {
		m, _ := c.(map[string]any)
		got = append(got, fmt.Sprintf("%v=%v %v", m["type"], m["status"], m["timeout"]))
	}
	if want := []string{"Ready=Unknown 10s", "Ready=False 10s"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("MachineHealthCheck %s/%s unhealthyConditions %v, want %v", ns, md, got, want)
	}
	if v, _, _ := unstructured.NestedFieldNoCopy(mhc.Object, "spec", "maxUnhealthy"); fmt.Sprint(v) != "50%" {
		t.Fatalf("MachineHealthCheck %s/%s maxUnhealthy %v, want the default 50%%", ns, md, v)
	}
	mhcHealthy := func(ctx context.Context) error {
		u, err := cp.Existing(ctx, harness.MachineHealthCheck, ns, md)
		if err != nil {
			return err
		}
		exp, _, _ := unstructured.NestedInt64(u.Object, "status", "expectedMachines")
		healthy, _, _ := unstructured.NestedInt64(u.Object, "status", "currentHealthy")
		allowed, _, _ := unstructured.NestedInt64(u.Object, "status", "remediationsAllowed")
		if exp != 2 || healthy != 2 || allowed != 1 {
			return fmt.Errorf("status expectedMachines %d, currentHealthy %d, remediationsAllowed %d; want 2, 2, 1; conditions %s", exp, healthy, allowed, harness.ConditionsString(u))
		}
		return nil
	}
	cp.Eventually(t, capiTimeout, "MachineHealthCheck "+md+" to count both workers healthy", mhcHealthy)
	open := func(ctx context.Context) error {
		u, err := cp.Existing(ctx, harness.NodePool, ns, xr.GetName())
		if err != nil {
			return err
		}
		if state, reason := gateOf(u); state != "Open" {
			return fmt.Errorf("gate %s/%s, want Open", state, reason)
		}
		if tmpl, _, _ := unstructured.NestedString(u.Object, "status", "template"); tmpl != kmt.GetName() {
			return fmt.Errorf("status.template %q, want %s", tmpl, kmt.GetName())
		}
		if s := harness.ConditionStatus(u, "Ready"); s != "True" {
			return fmt.Errorf("Ready=%s; conditions %s", s, harness.ConditionsString(u))
		}
		return nil
	}
	cp.Eventually(t, reconcileTimeout, "XNodePool "+xr.GetName()+" to be Ready with its gate open on "+kmt.GetName(), open)

	// What must not change: the one MachineSet, the templates of the
	// namespace, the template's and the deployment's generations.
	msName := firstKey(settled.Sets)
	templates := func(ctx context.Context) (map[string]int64, error) {
		l, err := cp.List(ctx, harness.KubevirtMachineTemplate, ns, "")
		if err != nil {
			return nil, err
		}
		out := map[string]int64{}
		for _, u := range l {
			out[u.GetName()] = u.GetGeneration()
		}
		return out, nil
	}
	ctx1, cancel1 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel1()
	tmplBefore, err := templates(ctx1)
	if err != nil {
		t.Fatal(err)
	}
	mdBefore := cp.MustGet(t, harness.MachineDeployment, ns, md)
	// Event times are whole seconds: anything recorded from the second
	// before the first fault on counts as during the remediation.
	faultAt := time.Now().Truncate(time.Second).Add(-time.Second)

	// Round 1 fails the first original worker, round 2 the second: the
	// other worker of round 2 is round 1's replacement.
	originals := settled.WithNode
	other := originals[1]
	for i, round := range []struct {
		name   string
		status corev1.ConditionStatus
	}{
		{"ReadyFalse", corev1.ConditionFalse},
		{"ReadyUnknown", corev1.ConditionUnknown},
	} {
		victimName, survivor := originals[i], other
		t.Run(round.name, func(t *testing.T) {
			replacement := remediate(t, ns, md, msName, kmt.GetName(), golden, xr.GetName(), victimName, survivor, round.status)
			other = replacement
			cp.Eventually(t, reconcileTimeout, "XNodePool "+xr.GetName()+" to be Ready again with its gate open on "+kmt.GetName(), open)
		})
		if t.Failed() {
			return
		}
	}

	// Afterwards: the pool runs two new workers on the same template and
	// MachineSet; nothing of the deployment or templates changed.
	final := waitSettled(t, ns, md, kmt.GetName(), 2)
	for _, m := range final.Machines {
		for _, o := range originals {
			if m == o {
				t.Errorf("original Machine %s still there after both rounds: %s", o, final)
			}
		}
	}
	if firstKey(final.Sets) != msName {
		t.Errorf("MachineSet %s, want the original %s", firstKey(final.Sets), msName)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	tmplAfter, err := templates(ctx2)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(tmplAfter) != fmt.Sprint(tmplBefore) {
		t.Errorf("KubevirtMachineTemplates (name: generation) %v after remediation, %v before", tmplAfter, tmplBefore)
	}
	mdAfter := cp.MustGet(t, harness.MachineDeployment, ns, md)
	if mdAfter.GetGeneration() != mdBefore.GetGeneration() {
		t.Errorf("MachineDeployment %s generation %d after remediation, %d before", md, mdAfter.GetGeneration(), mdBefore.GetGeneration())
	}
	cp.Eventually(t, capiTimeout, "MachineHealthCheck "+md+" to count both new workers healthy", mhcHealthy)
	cp.Eventually(t, reconcileTimeout, "XNodePool "+xr.GetName()+" to be Ready with its gate open on "+kmt.GetName(), open)
	cp.WaitCondition(t, reconcileTimeout, harness.NodePool, ns, xr.GetName(), "CloneHealthy", "True")

	// Nothing was refused along the way: no Warning event in the namespace
	// recorded from the first fault on (a MachineSet's FailedCreate, the
	// MachineHealthCheck's RemediationRestricted, a refused compose or
	// apply on the XNodePool, CDI's) but the known ones of warningsIn; and
	// from the start, no Warning the Cluster API manager recorded (even one
	// the spam filter dropped) and no refused write in the provider
	// stand-ins' log.
	warnings, known, before, err := warningsIn(ctx2, ns, faultAt)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) > 0 {
		t.Logf("Warning events in %s while the pool was created, before the first fault:\n  %s", ns, strings.Join(before, "\n  "))
	}
	if len(known) > 0 {
		t.Logf("Warning events in %s that are no refusal (see warningsIn):\n  %s", ns, strings.Join(known, "\n  "))
	}
	if len(warnings) > 0 {
		t.Errorf("Warning events in %s during the remediation:\n  %s", ns, strings.Join(warnings, "\n  "))
	}
	recorded, err := warningsRecorded(ns)
	if err != nil {
		t.Fatal(err)
	}
	if len(recorded) > 0 {
		t.Errorf("the Cluster API manager recorded Warning events in %s:\n%s", ns, strings.Join(recorded, "\n"))
	}
	refused, err := refusalsLogged(ns)
	if err != nil {
		t.Fatal(err)
	}
	if len(refused) > 0 {
		t.Errorf("the provider stand-ins logged refusals in %s:\n%s", ns, strings.Join(refused, "\n"))
	}
}

// remediate makes Machine victim's Node report Ready=status and asserts the
// remediation: marked unhealthy after the timeout, deleted by MachineSet
// ms with everything of it, replaced on template kmt with a CDI clone of
// golden, Machine other untouched, the pool's gate open throughout. It
// returns the replacement Machine's name.
func remediate(t *testing.T, ns, md, ms, kmt, golden, pool, victimName, other string, status corev1.ConditionStatus) string {
	v := readWorker(t, ns, kmt, victimName)
	cp.MustGet(t, harness.PVC, ns, v.Disk)
	tl := follow(t,
		followed{gvk: machineV1beta2, ns: ns},
		followed{gvk: harness.Node, name: v.Node},
		followed{gvk: harness.NodePool, ns: ns, name: pool},
		followed{gvk: harness.MachineSet, ns: ns},
		followed{gvk: harness.KubevirtMachineTemplate, ns: ns},
	)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	err := cp.SetKubeletReady(ctx, v.Node, status)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	t.Logf("Node %s of Machine %s set to report Ready=%s", v.Node, victimName, status)

	// Cluster API removes the Machine, then its MachineSet creates a new
	// one and the deployment settles again on the same template.
	cp.WaitGone(t, capiTimeout, machineV1beta2, ns, victimName)
	gone := time.Since(start)
	var now deploymentState
	cp.Eventually(t, capiTimeout, fmt.Sprintf("Cluster API to settle %s on %s with 2 workers, %s not among them", md, kmt, victimName), func(ctx context.Context) error {
		s, err := readDeployment(ctx, ns, md)
		if err != nil {
			return err
		}
		if !s.settledOn(kmt, 2) || s.Sets[ms] != kmt {
			return fmt.Errorf("%s", s)
		}
		for _, m := range s.Machines {
			if m == victimName {
				return fmt.Errorf("%s", s)
			}
		}
		now = s
		return nil
	})
	t.Logf("Machine %s gone %s after the fault, pool settled again %s after it: %s", victimName, gone.Round(time.Second), time.Since(start).Round(time.Second), now)
	if err := tl.err(); err != nil {
		t.Fatal(err)
	}
	tl.mu.Lock()
	if len(tl.resumed) > 0 {
		t.Logf("watches resumed after ending early: %s", strings.Join(tl.resumed, "; "))
	}
	tl.mu.Unlock()

	// The victim's history, in write order: HealthCheckSucceeded=False
	// (UnhealthyNode, after the timeout) with OwnerRemediated=False
	// WaitingForRemediation (the MachineHealthCheck), then
	// OwnerRemediated=False MachineDeleting (the MachineSet), then its
	// deletionTimestamp, then its removal.
	victimSeen := tl.all(func(s sighting) bool { return s.Kind() == "Machine" && s.Obj.GetName() == victimName })
	var marked, waiting, deleting, deletion, removed *sighting
	for i := range victimSeen {
		s := &victimSeen[i]
		hs, hr, hm := conditionOf(s.Obj, "HealthCheckSucceeded")
		ors, orr, _ := conditionOf(s.Obj, "OwnerRemediated")
		switch {
		case s.Type == watch.Deleted:
			removed = s
		case marked == nil && hs == "False":
			if want := fmt.Sprintf("Condition Ready on Node is reporting status %s for more than %s", status, mhcTimeout); hr != "UnhealthyNode" || !strings.Contains(hm, want) {
				t.Errorf("Machine %s marked HealthCheckSucceeded=False %s %q, want UnhealthyNode %q", victimName, hr, hm, want)
			}
			marked = s
		}
		if waiting == nil && ors == "False" && orr == "WaitingForRemediation" {
			waiting = s
		}
		if deleting == nil && ors == "False" && orr == "MachineDeleting" {
			deleting = s
		}
		if deletion == nil && s.Obj.GetDeletionTimestamp() != nil {
			deletion = s
		}
	}
	for _, step := range []struct {
		name string
		s    *sighting
	}{{"HealthCheckSucceeded=False", marked}, {"OwnerRemediated=False/WaitingForRemediation", waiting}, {"OwnerRemediated=False/MachineDeleting", deleting}, {"deletionTimestamp", deletion}, {"DELETED", removed}} {
		if step.s == nil {
			t.Fatalf("never saw Machine %s with %s; its sightings:\n%s", victimName, step.name, tl)
		}
	}
	if !(marked.Rev <= waiting.Rev && waiting.Rev < deleting.Rev && deleting.Rev < deletion.Rev && deletion.Rev < removed.Rev) {
		t.Errorf("Machine %s: marked rv %d, WaitingForRemediation rv %d, MachineDeleting rv %d, deletionTimestamp rv %d, DELETED rv %d: want that order", victimName, marked.Rev, waiting.Rev, deleting.Rev, deletion.Rev, removed.Rev)
	}
	// The timeout was honoured: the Machine was marked no sooner than
	// mhcTimeout after the Node's Ready transition (both times in whole
	// seconds, the MachineHealthCheck compares lastTransitionTime+timeout
	// with its clock).
	nodeSeen := tl.all(func(s sighting) bool { return s.Kind() == "Node" })
	var nodeBad *sighting
	for i := range nodeSeen {
		if st, _, _ := conditionOfNode(nodeSeen[i].Obj); st == string(status) {
			nodeBad = &nodeSeen[i]
			break
		}
	}
	if nodeBad == nil {
		t.Fatalf("never saw Node %s report Ready=%s:\n%s", v.Node, status, tl)
	}
	_, _, nodeLTT := conditionOfNode(nodeBad.Obj)
	markedLTT, err := conditionTime(marked.Obj, "HealthCheckSucceeded")
	if err != nil {
		t.Fatal(err)
	}
	if d := markedLTT.Sub(nodeLTT); d < mhcTimeout {
		t.Errorf("Machine %s marked unhealthy %s after its Node's Ready=%s transition, before the %s timeout", victimName, d, status, mhcTimeout)
	} else {
		t.Logf("Machine %s marked unhealthy %s after its Node's Ready=%s transition (timeout %s)", victimName, d, status, mhcTimeout)
	}
	capiEvent(t, v.Machine, corev1.EventTypeNormal, "MachineMarkedUnhealthy", "has been marked as unhealthy by "+ns+"/"+md)

	// The other worker was never marked nor deleted.
	for _, s := range tl.all(func(s sighting) bool { return s.Kind() == "Machine" && s.Obj.GetName() == other }) {
		if st, r, _ := conditionOf(s.Obj, "HealthCheckSucceeded"); st == "False" || s.Obj.GetDeletionTimestamp() != nil || s.Type == watch.Deleted {
			t.Errorf("healthy Machine %s was touched: %s, HealthCheckSucceeded=%s %s, deletionTimestamp %v", other, s.Type, st, r, s.Obj.GetDeletionTimestamp())
		}
	}
	// No MachineSet but the one, no template added or deleted, and the
	// pool's gate open on the same template in every state it was written
	// in; its Ready follows the deployment's ready count.
	for _, s := range tl.all(func(s sighting) bool { return s.Kind() == "MachineSet" }) {
		if s.Obj.GetName() != ms || s.Type == watch.Deleted {
			t.Errorf("MachineSet %s %s during remediation, want only %s, kept", s.Obj.GetName(), s.Type, ms)
		}
	}
	for _, s := range tl.all(func(s sighting) bool { return s.Kind() == "KubevirtMachineTemplate" }) {
		if s.Obj.GetName() != kmt || s.Type == watch.Deleted || s.Obj.GetDeletionTimestamp() != nil {
			t.Errorf("KubevirtMachineTemplate %s %s during remediation (deletionTimestamp %v)", s.Obj.GetName(), s.Type, s.Obj.GetDeletionTimestamp())
		}
	}
	var readiness []string
	for _, s := range tl.all(func(s sighting) bool { return s.Kind() == "XNodePool" }) {
		state, reason := gateOf(s.Obj)
		tmpl, _, _ := unstructured.NestedString(s.Obj.Object, "status", "template")
		if state != "Open" || tmpl != kmt {
			t.Errorf("XNodePool %s at rv %d: gate %s/%s, template %q; want Open on %s", pool, s.Rev, state, reason, tmpl, kmt)
		}
		if r := harness.ConditionStatus(s.Obj, "Ready"); len(readiness) == 0 || readiness[len(readiness)-1] != r {
			readiness = append(readiness, r)
		}
	}
	t.Logf("XNodePool %s Ready during remediation: %s", pool, strings.Join(readiness, " -> "))

	// The replacement: a new Machine of the same MachineSet, its
	// KubevirtMachine cloned from the same template, its worker disk a
	// csi-clone of the golden, Succeeded.
	var added []string
	for _, m := range now.Machines {
		if m != other {
			added = append(added, m)
		}
	}
	if len(added) != 1 {
		t.Fatalf("Machines %v besides %s, want one replacement", added, other)
	}
	n := readWorker(t, ns, kmt, added[0])
	if !ownedByKind(n.Machine, "MachineSet", ms) {
		t.Errorf("replacement Machine %s owners %v, want MachineSet %s", added[0], n.Machine.GetOwnerReferences(), ms)
	}
	km := cp.MustGet(t, harness.KubevirtMachine, ns, n.Infra)
	if got := km.GetAnnotations()[clonedFromName]; got != kmt {
		t.Errorf("replacement KubevirtMachine %s cloned from %q, want template %s", n.Infra, got, kmt)
	}
	dv := waitDataVolumePhase(t, ns, n.Disk, phaseSucceeded)
	if srcNS, _, _ := unstructured.NestedString(dv.Object, "spec", "source", "pvc", "namespace"); srcNS != goldenNamespace {
		t.Errorf("replacement disk %s clones from namespace %q, want %s", n.Disk, srcNS, goldenNamespace)
	}
	if srcName, _, _ := unstructured.NestedString(dv.Object, "spec", "source", "pvc", "name"); srcName != golden {
		t.Errorf("replacement disk %s clones %q, want golden %s", n.Disk, srcName, golden)
	}
	pvc := cp.MustGet(t, harness.PVC, ns, n.Disk)
	for what, ann := range map[string]map[string]string{"DataVolume": dv.GetAnnotations(), "PVC": pvc.GetAnnotations()} {
		if got := ann[annCloneType]; got != "csi-clone" {
			t.Errorf("replacement disk %s: %s %s=%q, want csi-clone", n.Disk, what, annCloneType, got)
		}
		if got, ok := ann[annCloneFallbackReason]; ok {
			t.Errorf("replacement disk %s: %s %s=%q, want no fallback", n.Disk, what, annCloneFallbackReason, got)
		}
	}
	t.Logf("replacement Machine %s: KubevirtMachine %s, Node %s, disk %s (%s=%s, Succeeded)", added[0], n.Infra, n.Node, n.Disk, annCloneType, dv.GetAnnotations()[annCloneType])

	// What is left of the victim: nothing.
	for _, o := range []struct {
		gvk      schema.GroupVersionKind
		ns, name string
	}{
		{harness.KubevirtMachine, ns, v.Infra},
		{harness.TalosConfig, ns, v.Bootstrap},
		{harness.Secret, ns, victimName + "-bootstrap-data"},
		{harness.Node, "", v.Node},
		{harness.DataVolume, ns, v.Disk},
		{harness.PVC, ns, v.Disk},
	} {
		cp.WaitGone(t, gcTimeout, o.gvk, o.ns, o.name)
	}
	return added[0]
}

// conditionOfNode returns the status, reason and lastTransitionTime of a
// Node's Ready condition.
func conditionOfNode(u *unstructured.Unstructured) (status, reason string, at time.Time) {
	status, reason, _ = conditionOf(u, "Ready")
	at, _ = conditionTime(u, "Ready")
	return status, reason, at
}
