package e2e

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// Scenarios on the real Cluster API core manager (v1.11.4) and its real
// providers, CABPT v0.6.12 and CAPK v0.11.2: the function composes the
// MachineDeployment and its templates; Cluster API's own controllers make
// the MachineSets, Machines and status counters from them, CABPT the
// bootstrap data, CAPK the VirtualMachines. KubeVirt and the kubelet are
// the stand-ins of harness/nodestandins.go; the worker disks are CDI's
// clones of the golden.

// capiTimeout bounds Cluster API (and the stand-ins, and CDI's clone of a
// worker disk) taking a MachineDeployment to a state: the MachineSet, the
// Machine, its bootstrap data, the disk's CSI clone, the providerID, the
// Node, the nodeRef, the counters.
const capiTimeout = 3 * time.Minute

// realCAPIPool creates the Cluster, a catalog with a ready golden of sid,
// and a builtin pool of replicas workers with diskSize in ns, and returns
// the pool.
func realCAPIPool(t *testing.T, ns, cluster, sid string, replicas int64, diskSize string) *unstructured.Unstructured {
	t.Helper()
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	inNamespace(t, ns)
	capiCluster(t, ns, cluster)
	readyGolden(t, ns, sid)
	xr := sizedPool(ns, cluster, sid, replicas, diskSize)
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	return xr
}

// sizedPool is poolXR on the builtin golden with replicas and diskSize.
func sizedPool(ns, cluster, sid string, replicas int64, diskSize string) *unstructured.Unstructured {
	xr := poolXR(ns, cluster, sid, "{builtin: {}}")
	_ = unstructured.SetNestedField(xr.Object, replicas, "spec", "replicas")
	_ = unstructured.SetNestedField(xr.Object, diskSize, "spec", "diskSize")
	return xr
}

// deploymentState is what the suite reads of a MachineDeployment and its
// MachineSets and Machines, all written by Cluster API.
type deploymentState struct {
	Template string
	// Counters are spec.replicas and the v1beta1 status counters (the
	// function's settled() reads them).
	Replicas, StatusReplicas, Updated, Ready, Available int64
	Generation, ObservedGeneration                      int64
	// Sets maps each MachineSet to the template it references and its
	// spec.replicas.
	Sets map[string]string
	// Machines are the Machines with a nodeRef, by name.
	Machines, WithNode []string
}

func (s deploymentState) String() string {
	return fmt.Sprintf("template %s, replicas %d (status %d, updated %d, ready %d, available %d), generation %d observed %d, MachineSets %v, Machines %v with a Node %v",
		s.Template, s.Replicas, s.StatusReplicas, s.Updated, s.Ready, s.Available, s.Generation, s.ObservedGeneration, s.Sets, s.Machines, s.WithNode)
}

// settledOn reports whether the state is what settled() (internal/nodepool/
// reads.go) calls converged, with want replicas on template tmpl.
func (s deploymentState) settledOn(tmpl string, want int64) bool {
	return s.Template == tmpl && s.Replicas == want && s.ObservedGeneration >= s.Generation &&
		s.StatusReplicas == want && s.Updated == want && s.Ready == want && s.Available == want &&
		len(s.Sets) == 1 && s.Sets[firstKey(s.Sets)] == tmpl && int64(len(s.WithNode)) == want
}

func firstKey(m map[string]string) string {
	for k := range m {
		return k
	}
	return ""
}

func readDeployment(ctx context.Context, ns, md string) (deploymentState, error) {
	u, err := cp.Existing(ctx, harness.MachineDeployment, ns, md)
	if err != nil {
		return deploymentState{}, err
	}
	var s deploymentState
	s.Template, _, _ = unstructured.NestedString(u.Object, "spec", "template", "spec", "infrastructureRef", "name")
	s.Replicas, _, _ = unstructured.NestedInt64(u.Object, "spec", "replicas")
	s.StatusReplicas, _, _ = unstructured.NestedInt64(u.Object, "status", "replicas")
	s.Updated, _, _ = unstructured.NestedInt64(u.Object, "status", "updatedReplicas")
	s.Ready, _, _ = unstructured.NestedInt64(u.Object, "status", "readyReplicas")
	s.Available, _, _ = unstructured.NestedInt64(u.Object, "status", "availableReplicas")
	s.ObservedGeneration, _, _ = unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	s.Generation = u.GetGeneration()
	sel := harness.DeploymentNameLabel + "=" + md
	sets, err := cp.List(ctx, harness.MachineSet, ns, sel)
	if err != nil {
		return s, err
	}
	s.Sets = map[string]string{}
	for _, ms := range sets {
		n, _, _ := unstructured.NestedString(ms.Object, "spec", "template", "spec", "infrastructureRef", "name")
		s.Sets[ms.GetName()] = n
	}
	machines, err := cp.List(ctx, harness.Machine, ns, sel)
	if err != nil {
		return s, err
	}
	for _, m := range machines {
		s.Machines = append(s.Machines, m.GetName())
		if n, _, _ := unstructured.NestedString(m.Object, "status", "nodeRef", "name"); n != "" {
			s.WithNode = append(s.WithNode, m.GetName())
		}
	}
	sort.Strings(s.Machines)
	sort.Strings(s.WithNode)
	return s, nil
}

// waitSettled waits until Cluster API reports the pool's MachineDeployment
// converged on template tmpl with want ready replicas, one MachineSet and
// want Machines with Nodes.
func waitSettled(t *testing.T, ns, md, tmpl string, want int64) deploymentState {
	t.Helper()
	return waitSettledWithin(t, capiTimeout, ns, md, tmpl, want)
}

// waitSettledWithin is waitSettled with a timeout of its own, for pools
// larger than the scenarios'.
func waitSettledWithin(t *testing.T, timeout time.Duration, ns, md, tmpl string, want int64) deploymentState {
	t.Helper()
	var got deploymentState
	cp.Eventually(t, timeout, fmt.Sprintf("Cluster API to settle MachineDeployment %s/%s on %s with %d ready replicas", ns, md, tmpl, want), func(ctx context.Context) error {
		s, err := readDeployment(ctx, ns, md)
		if err != nil {
			return err
		}
		if !s.settledOn(tmpl, want) {
			return fmt.Errorf("%s", s)
		}
		got = s
		return nil
	})
	return got
}

// ownedByCluster reports whether u carries the owner reference Cluster API
// adds to the Cluster (util.EnsureOwnerRef in internal/controllers/
// machinedeployment/machinedeployment_controller.go, v1.11.4).
func ownedByCluster(u *unstructured.Unstructured, cluster string) bool {
	for _, o := range u.GetOwnerReferences() {
		if o.Kind == "Cluster" && o.Name == cluster && strings.HasPrefix(o.APIVersion, "cluster.x-k8s.io/") {
			return true
		}
	}
	return false
}

// waitRolledOff waits until Cluster API has rolled MachineDeployment md
// from template oldTmpl onto newTmpl (settled with want replicas, one
// MachineSet) and the function has retired oldTmpl, and fails the test if
// oldTmpl was ever seen gone or being deleted while a MachineSet
// referenced it, or if no MachineSet on oldTmpl was ever seen.
func waitRolledOff(t *testing.T, ns, md, oldTmpl, newTmpl string, want int64) {
	t.Helper()
	var sawOldSet bool
	var violations []string
	cp.Eventually(t, capiTimeout, "Cluster API to finish the roll of "+md+" onto "+newTmpl+" and the function to retire "+oldTmpl, func(ctx context.Context) error {
		s, err := readDeployment(ctx, ns, md)
		if err != nil {
			return err
		}
		old, err := cp.Get(ctx, harness.KubevirtMachineTemplate, ns, oldTmpl)
		if err != nil {
			return err
		}
		for ms, tmpl := range s.Sets {
			if tmpl != oldTmpl {
				continue
			}
			sawOldSet = true
			if old == nil || old.GetDeletionTimestamp() != nil {
				violations = append(violations, fmt.Sprintf("template %s gone while MachineSet %s references it", oldTmpl, ms))
			}
		}
		if !s.settledOn(newTmpl, want) {
			return fmt.Errorf("%s", s)
		}
		if old != nil {
			return fmt.Errorf("old template %s still exists (deletionTimestamp %v) with MachineSets %v", oldTmpl, old.GetDeletionTimestamp(), s.Sets)
		}
		return nil
	})
	if !sawOldSet {
		t.Errorf("never saw a MachineSet on the old template %s during the roll", oldTmpl)
	}
	if len(violations) > 0 {
		t.Errorf("the old template was not kept while referenced: %v", violations)
	}
}

// A pool on the real Cluster API: create, scale up and down, change the
// spec (roll onto a new template, the old one kept while a MachineSet
// references it and retired after).
func TestPoolLifecycleOnRealCAPI(t *testing.T) {
	const ns, cluster = "e2e-capi", "capi1"
	sid := schematicID("capi-lifecycle")
	xr := realCAPIPool(t, ns, cluster, sid, 1, "20Gi")
	md := cluster + "-" + poolName
	kmt := poolTemplate(t, reconcileTimeout, ns, xr.GetName())

	// Create: a MachineSet on the template, one Machine with a Node, and
	// the counters settled() reads, all Cluster API's.
	st := waitSettled(t, ns, md, kmt.GetName(), 1)
	t.Logf("created: %s", st)
	// Cluster API makes the Cluster an owner of the MachineDeployment
	// (machinedeployment_controller.go, util.EnsureOwnerRef) and of the
	// templates it references (reconcileExternalTemplateReference there
	// and in machineset_controller.go), next to the XNodePool.
	bootstrap := bootstrapTemplateOf(t, ns, md)
	for _, o := range []struct {
		kind schema.GroupVersionKind
		name string
	}{
		{harness.MachineDeployment, md},
		{harness.KubevirtMachineTemplate, kmt.GetName()},
		{harness.TalosConfigTemplate, bootstrap},
	} {
		cp.Eventually(t, reconcileTimeout, fmt.Sprintf("%s %s to carry the Cluster owner reference Cluster API adds", o.kind.Kind, o.name), func(ctx context.Context) error {
			u, err := cp.Existing(ctx, o.kind, ns, o.name)
			if err != nil {
				return err
			}
			if !ownedByCluster(u, cluster) {
				return fmt.Errorf("owners %v", u.GetOwnerReferences())
			}
			return nil
		})
	}

	// CABPT generated the worker's machine config from the pool's
	// TalosConfigTemplate and the Cluster (controllers/
	// talosconfig_controller.go genConfigs, then the strategic patches):
	// a worker whose control plane endpoint is the one CAPK's
	// KubevirtCluster controller published, with the pool's installer and
	// kubelet reservations.
	checkBootstrapData(t, ns, cluster, md, bootstrap)

	// Scale up and down: Cluster API adds and removes Machines on the same
	// MachineSet and template.
	for _, step := range []struct {
		name     string
		replicas int64
	}{
		{"ScaleUp", 2},
		{"ScaleDown", 1},
	} {
		t.Run(step.name, func(t *testing.T) {
			cp.MustApply(t, sizedPool(ns, cluster, sid, step.replicas, "20Gi"))
			got := waitSettled(t, ns, md, kmt.GetName(), step.replicas)
			t.Logf("%s: %s", step.name, got)
		})
	}

	// Change the spec: a bigger disk is a new template. Cluster API rolls
	// onto a new MachineSet; the old template stays while any MachineSet
	// references it, and is retired once the old MachineSet is gone.
	cp.MustApply(t, sizedPool(ns, cluster, sid, 1, "25Gi"))
	newTmpl := waitNewTemplate(t, ns, md, kmt.GetName())
	waitRolledOff(t, ns, md, kmt.GetName(), newTmpl, 1)
	cp.MustGet(t, harness.KubevirtMachineTemplate, ns, newTmpl)
	cp.WaitCondition(t, reconcileTimeout, harness.NodePool, ns, xr.GetName(), "WorkerImageReady", "True")
	nothingRefusedIn(t, ns)
}

// The teardown a delete scenario asserts: nothing of the pool left while
// its Cluster lives.
func TestDeletingAPoolRemovesItsWorkersOnRealCAPI(t *testing.T) {
	const ns, cluster = "e2e-capi-delete", "capi2"
	sid := schematicID("capi-delete")
	xr := realCAPIPool(t, ns, cluster, sid, 1, "20Gi")
	md := cluster + "-" + poolName
	kmt := poolTemplate(t, reconcileTimeout, ns, xr.GetName())
	waitSettled(t, ns, md, kmt.GetName(), 1)

	// Cluster API has made the Cluster an owner of what the pool composed.
	for _, o := range []struct {
		gvk  schema.GroupVersionKind
		name string
	}{{harness.MachineDeployment, md}, {harness.KubevirtMachineTemplate, kmt.GetName()}} {
		if !ownedByKind(cp.MustGet(t, o.gvk, ns, o.name), "Cluster", cluster) {
			t.Fatalf("%s %s/%s is not owned by Cluster %s: the scenario proves nothing", o.gvk.Kind, ns, o.name, cluster)
		}
	}
	// What the chain made for the worker, down to its VM, disk and Node.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	workers, err := cp.WorkerObjects(ctx, ns, md)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, w := range workers {
		kinds[w.Kind.Kind] = true
	}
	for _, k := range []string{"TalosConfig", "Secret", "KubevirtMachine", "VirtualMachine", "VirtualMachineInstance", "DataVolume", "PersistentVolumeClaim", "Node"} {
		if !kinds[k] {
			t.Fatalf("the worker of %s/%s has no %s before the delete (%v): the scenario proves nothing", ns, md, k, workers)
		}
	}
	deletePool(t, ns, xr.GetName(), md)
	cp.Eventually(t, gcTimeout, "nothing of pool "+xr.GetName()+" to be left while Cluster "+cluster+" lives", func(ctx context.Context) error {
		left, err := cp.PoolLeftovers(ctx, ns, xr.GetName(), md)
		if err != nil {
			return err
		}
		gone, err := cp.Remaining(ctx, workers)
		if err != nil {
			return err
		}
		if left = append(left, gone...); len(left) > 0 {
			return fmt.Errorf("left: %v", left)
		}
		return nil
	})
	cp.MustGet(t, harness.Cluster, ns, cluster)
	nothingRefusedIn(t, ns)
}

// workerDisks returns the worker disks the chain made in ns for the Machines
// Cluster API made from MachineDeployment md on template kmt: the
// DataVolumes in ns that carry the labels of kmt's first
// dataVolumeTemplate (the function's pool and golden labels, which
// KubeVirt copies onto the disk, pkg/storage/types/dv.go), sorted by name.
// Each must be named <infrastructure machine>-<template name> after one of
// md's Machines (CAPK pkg/kubevirt/utils.go prefixDataVolumeTemplates
// names the VM's DataVolume templates so); a labelled DataVolume that
// belongs to none is an error, so nothing made by hand passes for the
// chain's. Machines are read first: a disk is only made for a Machine that
// exists.
func workerDisks(ctx context.Context, ns, md string, kmt *unstructured.Unstructured) ([]unstructured.Unstructured, error) {
	dvts, _, _ := unstructured.NestedSlice(kmt.Object, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates")
	if len(dvts) == 0 {
		return nil, fmt.Errorf("KubevirtMachineTemplate %s/%s has no dataVolumeTemplates", ns, kmt.GetName())
	}
	dvt, _ := dvts[0].(map[string]any)
	tmplName, _, _ := unstructured.NestedString(dvt, "metadata", "name")
	lbls, _, _ := unstructured.NestedStringMap(dvt, "metadata", "labels")
	if tmplName == "" || len(lbls) == 0 {
		return nil, fmt.Errorf("KubevirtMachineTemplate %s/%s: the first dataVolumeTemplate has name %q and labels %v; the pool's disks cannot be told apart", ns, kmt.GetName(), tmplName, lbls)
	}
	var sel []string
	for k, v := range lbls {
		sel = append(sel, k+"="+v)
	}
	sort.Strings(sel)
	machines, err := cp.List(ctx, harness.Machine, ns, harness.DeploymentNameLabel+"="+md)
	if err != nil {
		return nil, err
	}
	owners := map[string]string{}
	for _, m := range machines {
		infra, _, _ := unstructured.NestedString(m.Object, "spec", "infrastructureRef", "name")
		if infra != "" {
			owners[infra+"-"+tmplName] = m.GetName()
		}
	}
	dvs, err := cp.List(ctx, harness.DataVolume, ns, strings.Join(sel, ","))
	if err != nil {
		return nil, err
	}
	var stray []string
	for _, dv := range dvs {
		if _, ok := owners[dv.GetName()]; !ok {
			stray = append(stray, dv.GetName())
		}
	}
	if len(stray) > 0 {
		return nil, fmt.Errorf("DataVolumes %v carry the pool's labels %v but belong to no Machine of %s (its disks would be %v)", stray, sel, md, owners)
	}
	sort.Slice(dvs, func(i, j int) bool { return dvs[i].GetName() < dvs[j].GetName() })
	return dvs, nil
}

// waitWorkerDisks waits until the chain (Cluster API's MachineSet and
// Machine, the bootstrap and infrastructure providers, KubeVirt) has made
// exactly want worker disks for MachineDeployment md on template kmt, and
// returns their names, sorted.
func waitWorkerDisks(t *testing.T, ns, md string, kmt *unstructured.Unstructured, want int) []string {
	t.Helper()
	var names []string
	cp.Eventually(t, capiTimeout, fmt.Sprintf("the chain to make %d worker disk(s) for the Machines of %s/%s on %s", want, ns, md, kmt.GetName()), func(ctx context.Context) error {
		dvs, err := workerDisks(ctx, ns, md, kmt)
		if err != nil {
			return err
		}
		names = names[:0]
		for _, dv := range dvs {
			names = append(names, dv.GetName())
		}
		if len(names) != want {
			s, err := readDeployment(ctx, ns, md)
			return errors.Join(fmt.Errorf("worker disks %v; %s", names, s), err)
		}
		return nil
	})
	for _, n := range names {
		dv := cp.MustGet(t, harness.DataVolume, ns, n)
		t.Logf("worker disk %s/%s made by the chain, owned by %v, labels %v", ns, n, ownerNamesOf(dv), dv.GetLabels())
	}
	return names
}

func ownerNamesOf(u *unstructured.Unstructured) []string {
	var out []string
	for _, o := range u.GetOwnerReferences() {
		out = append(out, o.Kind+"/"+o.Name)
	}
	return out
}

// refusalReasons are the reasons of the Warning events with which the
// controllers along the chain record that a create or update of theirs was
// refused: Cluster API's MachineDeployment and MachineSet controllers
// (FailedCreate, FailedUpdate, FailedScale:
// internal/controllers/machinedeployment/machinedeployment_sync.go and
// machineset/machineset_controller.go, v1.11.4) and KubeVirt's VM
// controller for a worker's DataVolume (FailedDataVolumeCreate,
// UnauthorizedDataVolumeCreate: pkg/virt-controller/watch/vm/vm.go,
// v1.7.0).
var refusalReasons = map[string]bool{
	"FailedCreate": true, "FailedUpdate": true, "FailedScale": true,
	"FailedDataVolumeCreate": true, "UnauthorizedDataVolumeCreate": true,
}

// nothingRefusedIn fails the test if anything along the chain was refused
// in ns: a Warning event with one of refusalReasons, or one whose message
// quotes an admission webhook denying a request (Crossplane records a
// composed resource it could not apply so, on the composite; Cluster
// API's, CDI's and KubeVirt's webhooks answer "admission webhook ...
// denied the request"; the KubeVirt stand-in records its refusals as
// virt-controller does, harness/nodestandins.go).
func nothingRefusedIn(t *testing.T, ns string) {
	t.Helper()
	refusedIn(t, ns, func(string) bool { return false })
}

// unreachable reports whether an event's message is a request that never
// reached a server (the apiserver or a webhook down) or whose answer a
// server's death cut (unexpected EOF: the apiserver killed mid-request), not
// a refusal: what a chaos scenario's restart causes by design.
func unreachable(msg string) bool {
	for _, s := range []string{"connect: connection refused", "connection reset by peer", "http2: client connection lost", ": EOF", ": unexpected EOF", ": broken pipe"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// refusedIn is nothingRefusedIn, ignoring the events whose message ignore
// accepts.
func refusedIn(t *testing.T, ns string, ignore func(msg string) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	evs, err := cp.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("cannot list the events in %s: %v", ns, err)
	}
	for _, e := range evs.Items {
		if e.Type != "Warning" || ignore(e.Message) {
			continue
		}
		if refusalReasons[e.Reason] || (strings.Contains(e.Message, "admission webhook") && strings.Contains(e.Message, "denied the request")) {
			from := e.Source.Component
			if from == "" {
				from = e.ReportingController
			}
			t.Errorf("refused along the way in %s: Warning %s on %s %s (x%d, from %s): %s", ns, e.Reason, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Count, from, e.Message)
		}
	}
}

// bootstrapTemplateOf returns the TalosConfigTemplate the MachineDeployment
// points at.
func bootstrapTemplateOf(t *testing.T, ns, md string) string {
	t.Helper()
	u := cp.MustGet(t, harness.MachineDeployment, ns, md)
	n, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "bootstrap", "configRef", "name")
	if n == "" {
		t.Fatalf("MachineDeployment %s/%s has no bootstrap configRef", ns, md)
	}
	return n
}

// checkBootstrapData reads the bootstrap data Secret of a Machine of md
// (written by the real CABPT) and checks it against the TalosConfigTemplate
// tmpl and the Cluster: machine type worker, the control plane endpoint of
// the KubevirtCluster, and what the template's strategic patches set (the
// installer image and the kubelet's kubeReserved).
func checkBootstrapData(t *testing.T, ns, cluster, md, tmpl string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	machines, err := cp.List(ctx, harness.Machine, ns, harness.DeploymentNameLabel+"="+md)
	if err != nil || len(machines) == 0 {
		t.Fatalf("no Machine of %s/%s: %v", ns, md, err)
	}
	secretName, _, _ := unstructured.NestedString(machines[0].Object, "spec", "bootstrap", "dataSecretName")
	secret, err := cp.Kube.CoreV1().Secrets(ns).Get(ctx, secretName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("bootstrap data Secret of Machine %s: %v", machines[0].GetName(), err)
	}
	var config map[string]any
	if err := yaml.Unmarshal(secret.Data["value"], &config); err != nil {
		t.Fatalf("bootstrap data of Machine %s is not YAML: %v", machines[0].GetName(), err)
	}
	kvc := cp.MustGet(t, harness.KubevirtCluster, ns, cluster)
	host, _, _ := unstructured.NestedString(kvc.Object, "spec", "controlPlaneEndpoint", "host")
	tc := cp.MustGet(t, harness.TalosConfigTemplate, ns, tmpl)
	patches, _, _ := unstructured.NestedStringSlice(tc.Object, "spec", "template", "spec", "strategicPatches")
	var installer string
	for _, p := range patches {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(p), &m); err == nil {
			if img, ok, _ := unstructured.NestedString(m, "machine", "install", "image"); ok {
				installer = img
			}
		}
	}
	got := map[string]any{}
	got["type"], _, _ = unstructured.NestedString(config, "machine", "type")
	got["endpoint"], _, _ = unstructured.NestedString(config, "cluster", "controlPlane", "endpoint")
	got["installer"], _, _ = unstructured.NestedString(config, "machine", "install", "image")
	_, got["kubeReserved"], _ = unstructured.NestedMap(config, "machine", "kubelet", "extraConfig", "kubeReserved")
	want := map[string]any{"type": "worker", "endpoint": "https://" + host + ":6443", "installer": installer, "kubeReserved": true}
	if host == "" || installer == "" {
		t.Fatalf("KubevirtCluster endpoint host %q, template installer %q: both must be set", host, installer)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("machine config CABPT wrote for Machine %s (-want +got):\n%s", machines[0].GetName(), diff)
	}
}

// waitNewTemplate waits until MachineDeployment md points at a template
// other than old, and returns it.
func waitNewTemplate(t *testing.T, ns, md, old string) string {
	t.Helper()
	var tmpl string
	cp.Eventually(t, reconcileTimeout, "MachineDeployment "+md+" to point at a new template", func(ctx context.Context) error {
		got, err := machineDeploymentTemplate(ctx, ns, md)
		if err != nil {
			return err
		}
		if got == "" || got == old {
			return fmt.Errorf("it points at %q", got)
		}
		tmpl = got
		return nil
	})
	return tmpl
}
