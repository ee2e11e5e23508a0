package harness

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// The provider stand-ins play, as a goroutine of the test binary, the
// Cluster API providers and the node side that cannot run here, doing only
// what their controllers do for a worker Machine that the real Cluster API
// manager created:
//
// Bootstrap (CABPT v0.6.12, controllers/talosconfig_controller.go and
// controllers/secrets.go): a TalosConfig owned by a Machine of a Cluster
// whose infrastructure is provisioned gets a Secret
// <machine>-bootstrap-data (key value, labelled with the cluster name,
// controlled by the TalosConfig, writeBootstrapData) and status.ready with
// status.dataSecretName. The value is spec.data as is (generateType none
// slurps it, reconcileGenerate); the stand-in renders no Talos
// configuration, which nothing in the suite reads.
//
// Infrastructure (CAPK v0.11.2, controllers/kubevirtmachine_controller.go
// and pkg/kubevirt/): a KubevirtMachine whose Machine has its bootstrap
// dataSecretName (CAPK waits for it) gets the worker disk KubeVirt creates
// for the VirtualMachine CAPK makes from it: the DataVolume of its first
// dataVolumeTemplate named <kubevirtmachine>-<template name>
// (pkg/kubevirt/utils.go prefixDataVolumeTemplates; KubeVirt copies labels,
// annotations and spec, pkg/storage/types/dv.go). It is owned by the
// KubevirtMachine, standing in for the VirtualMachine that CAPK deletes
// with it and that owns its DataVolumes. Once CDI reports the disk
// Succeeded (KubeVirt starts the VMI only then, and CAPK reports ready
// only for a ready VMI, machine.go IsReady), spec.providerID becomes
// kubevirt://<kubevirtmachine> (machine.go GenerateProviderID) and
// status.ready true.
//
// Kubelet: a Machine with a providerID and not being deleted gets a Node
// named after its infrastructure machine (the VM's hostname) with that
// providerID and a Ready condition, as a Talos node's kubelet registers
// it, and the pressure conditions False; Cluster API finds it by
// providerID, sets the Machine's nodeRef and deletes the Node when it
// deletes the Machine. A test can make it report Ready=False or Unknown
// instead (KubeletReadyAnnotation, SetKubeletReady).
//
// Everything they do is logged to logs/provider-standins.log.

// ProviderStandInManager is the field manager of what the provider
// stand-ins write.
const ProviderStandInManager = "e2e-provider-standins"

type providerStandIns struct {
	cp     *ControlPlane
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	log   *os.File
	acted map[string]string
}

func startProviderStandIns(cp *ControlPlane) (*providerStandIns, error) {
	f, err := os.Create(filepath.Join(cp.LogDir, "provider-standins.log"))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &providerStandIns{cp: cp, cancel: cancel, done: make(chan struct{}), log: f, acted: map[string]string{}}
	go s.run(ctx)
	return s, nil
}

func (s *providerStandIns) stop() {
	s.cancel()
	<-s.done
	_ = s.log.Close()
}

// logf logs a line once per object until the line changes.
func (s *providerStandIns) logf(key, format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.acted[key] == line {
		return
	}
	s.acted[key] = line
	_, _ = fmt.Fprintf(s.log, "%s %s\n", time.Now().Format("15:04:05.000"), line)
}

// run polls every 300 ms, like the storage stand-ins (standins.go).
func (s *providerStandIns) run(ctx context.Context) {
	defer close(s.done)
	for {
		step, cancel := context.WithTimeout(ctx, 20*time.Second)
		s.bootstrap(step)
		s.infrastructure(step)
		s.kubelet(step)
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// ownerMachine returns the name of the Machine among u's owners, or "".
func ownerMachine(u *unstructured.Unstructured) string {
	for _, o := range u.GetOwnerReferences() {
		if o.Kind == "Machine" {
			return o.Name
		}
	}
	return ""
}

func (s *providerStandIns) bootstrap(ctx context.Context) {
	configs, err := s.cp.List(ctx, TalosConfig, "", "")
	if err != nil {
		s.logf("bootstrap", "cannot list TalosConfigs: %v", err)
		return
	}
	for i := range configs {
		tc := &configs[i]
		key := "TalosConfig " + objectName(tc)
		if ready, _, _ := unstructured.NestedBool(tc.Object, "status", "ready"); ready || tc.GetDeletionTimestamp() != nil {
			continue
		}
		machine := ownerMachine(tc)
		if machine == "" {
			s.logf(key, "%s: waiting for the Machine controller to set an owner reference", key)
			continue
		}
		cluster := tc.GetLabels()[ClusterNameLabel]
		c, err := s.cp.Get(ctx, Cluster, tc.GetNamespace(), cluster)
		if err != nil || c == nil {
			s.logf(key, "%s: waiting for Cluster %s (%v)", key, cluster, err)
			continue
		}
		if ok, _, _ := unstructured.NestedBool(c.Object, "status", "initialization", "infrastructureProvisioned"); !ok {
			s.logf(key, "%s: waiting for Cluster %s infrastructure to be provisioned", key, cluster)
			continue
		}
		data, _, _ := unstructured.NestedString(tc.Object, "spec", "data")
		name := machine + "-bootstrap-data"
		secret := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{
				"name": name, "namespace": tc.GetNamespace(),
				"labels": map[string]any{ClusterNameLabel: cluster},
				"ownerReferences": []any{map[string]any{
					"apiVersion": tc.GetAPIVersion(), "kind": tc.GetKind(), "name": tc.GetName(), "uid": string(tc.GetUID()),
					"controller": true, "blockOwnerDeletion": true,
				}},
			},
			"type": "cluster.x-k8s.io/secret",
			"data": map[string]any{"value": base64.StdEncoding.EncodeToString([]byte(data))},
		}}
		if err := s.cp.ApplyAs(ctx, ProviderStandInManager, secret); err != nil {
			s.logf(key, "%s: %v", key, err)
			continue
		}
		st := statusPatch(tc, map[string]any{"ready": true, "dataSecretName": name})
		if err := s.cp.ApplyStatus(ctx, ProviderStandInManager, st); err != nil {
			s.logf(key, "%s: %v", key, err)
			continue
		}
		s.logf(key, "%s: bootstrap data Secret %s written, ready", key, name)
	}
}

// statusPatch returns an apply configuration of u's kind and name with
// only status.
func statusPatch(u *unstructured.Unstructured, status map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(),
		"metadata": map[string]any{"name": u.GetName(), "namespace": u.GetNamespace()},
		"status":   status,
	}}
}

func (s *providerStandIns) infrastructure(ctx context.Context) {
	kms, err := s.cp.List(ctx, KubevirtMachine, "", "")
	if err != nil {
		s.logf("infrastructure", "cannot list KubevirtMachines: %v", err)
		return
	}
	for i := range kms {
		km := &kms[i]
		key := "KubevirtMachine " + objectName(km)
		if km.GetDeletionTimestamp() != nil {
			continue
		}
		if ready, _, _ := unstructured.NestedBool(km.Object, "status", "ready"); ready {
			continue
		}
		machine := ownerMachine(km)
		if machine == "" {
			s.logf(key, "%s: waiting for the Machine controller to set an owner reference", key)
			continue
		}
		m, err := s.cp.Get(ctx, Machine, km.GetNamespace(), machine)
		if err != nil || m == nil {
			s.logf(key, "%s: waiting for Machine %s (%v)", key, machine, err)
			continue
		}
		if n, _, _ := unstructured.NestedString(m.Object, "spec", "bootstrap", "dataSecretName"); n == "" {
			s.logf(key, "%s: waiting for Machine.spec.bootstrap.dataSecretName", key)
			continue
		}
		dvts, _, _ := unstructured.NestedSlice(km.Object, "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates")
		disk, err := workerDisk(dvts, km.GetNamespace(), km.GetName())
		if err != nil {
			s.logf(key, "%s: %v", key, err)
			continue
		}
		existing, err := s.cp.Get(ctx, DataVolume, disk.GetNamespace(), disk.GetName())
		if err != nil {
			s.logf(key, "%s: %v", key, err)
			continue
		}
		if existing == nil {
			disk.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: km.GetAPIVersion(), Kind: km.GetKind(), Name: km.GetName(), UID: km.GetUID()}})
			if err := s.cp.ApplyAs(ctx, ProviderStandInManager, disk); err != nil {
				s.logf(key, "%s: cannot create worker disk: %v", key, err)
				continue
			}
			s.logf(key, "%s: worker disk DataVolume %s created", key, disk.GetName())
			continue
		}
		if phase, _, _ := unstructured.NestedString(existing.Object, "status", "phase"); phase != "Succeeded" {
			s.logf(key, "%s: waiting for worker disk %s to be Succeeded (phase %q)", key, disk.GetName(), phase)
			continue
		}
		ri, err := s.cp.Resource(KubevirtMachine, km.GetNamespace())
		if err != nil {
			continue
		}
		providerID := "kubevirt://" + km.GetName()
		patch := fmt.Sprintf(`{"spec":{"providerID":%q}}`, providerID)
		if _, err := ri.Patch(ctx, km.GetName(), types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: ProviderStandInManager}); err != nil {
			s.logf(key, "%s: %v", key, err)
			continue
		}
		if _, err := ri.Patch(ctx, km.GetName(), types.MergePatchType, []byte(`{"status":{"ready":true}}`), metav1.PatchOptions{FieldManager: ProviderStandInManager}, "status"); err != nil {
			s.logf(key, "%s: %v", key, err)
			continue
		}
		s.logf(key, "%s: disk %s Succeeded, providerID %s, ready", key, disk.GetName(), providerID)
	}
}

func (s *providerStandIns) kubelet(ctx context.Context) {
	machines, err := s.cp.List(ctx, Machine, "", "")
	if err != nil {
		s.logf("kubelet", "cannot list Machines: %v", err)
		return
	}
	nodes, err := s.cp.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		s.logf("kubelet", "cannot list Nodes: %v", err)
		return
	}
	byProviderID := map[string]*corev1.Node{}
	for i := range nodes.Items {
		byProviderID[nodes.Items[i].Spec.ProviderID] = &nodes.Items[i]
	}
	for i := range machines {
		m := &machines[i]
		providerID, _, _ := unstructured.NestedString(m.Object, "spec", "providerID")
		if providerID == "" || m.GetDeletionTimestamp() != nil {
			continue
		}
		name, _, _ := unstructured.NestedString(m.Object, "spec", "infrastructureRef", "name")
		key := "Node " + name
		node := byProviderID[providerID]
		if node == nil {
			created, err := s.cp.Kube.CoreV1().Nodes().Create(ctx, &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
				Spec:       corev1.NodeSpec{ProviderID: providerID},
			}, metav1.CreateOptions{FieldManager: ProviderStandInManager})
			if err != nil {
				s.logf(key, "%s: cannot register: %v", key, err)
				continue
			}
			s.logf(key, "%s: registered with providerID %s for Machine %s", key, providerID, objectName(m))
			node = created
		}
		want, reason := kubeletReady(node)
		if readyStatus(node) == want {
			continue
		}
		// Cluster API patches the Node (labels, annotations) as soon as it
		// finds it, so the status is written on the latest version, and
		// retried on the next poll after a conflict.
		//
		// A kubelet reports the pressure conditions False next to Ready;
		// Cluster API v1.11 needs all four for the Machine's v1beta2
		// NodeHealthy and Ready, hence Available
		// (internal/controllers/machine/machine_controller_status.go,
		// summarizeNodeConditions: "Condition not yet reported" is
		// Unknown), and the MachineDeployment deletes old MachineSets only
		// once its v1beta2 availableReplicas match (machinedeployment_rolling.go,
		// mdutil.DeploymentComplete). The deprecated v1beta1 counters need
		// only Ready.
		now := metav1.Now()
		cond := func(t corev1.NodeConditionType, st corev1.ConditionStatus, reason string) corev1.NodeCondition {
			return corev1.NodeCondition{Type: t, Status: st, Reason: reason, Message: "e2e kubelet stand-in", LastHeartbeatTime: now, LastTransitionTime: now}
		}
		node.Status.Conditions = []corev1.NodeCondition{
			cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory"),
			cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure"),
			cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID"),
			cond(corev1.NodeReady, want, reason),
		}
		node.Status.NodeInfo.KubeletVersion = "v1.35.0"
		if _, err := s.cp.Kube.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{FieldManager: ProviderStandInManager}); err != nil {
			s.logf(key, "%s: cannot report Ready=%s (retrying): %v", key, want, err)
			continue
		}
		s.logf(key, "%s: Ready=%s", key, want)
	}
}

// readyStatus is the status of n's Ready condition, "" when it has none.
func readyStatus(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return ""
}

// KubeletReadyAnnotation on a Node overrides the Ready status the kubelet
// stand-in reports for it: "False" is a kubelet that reports its node not
// ready, "Unknown" a node that died (the node lifecycle controller, not run
// here, writes Unknown once the kubelet stops posting; it would mark the
// pressure conditions Unknown too, which the stand-in leaves False: a
// MachineHealthCheck reads only the conditions it lists, Ready here). The
// stand-in writes that status once, with a new lastTransitionTime, and keeps
// it while the annotation stays; without it (or with any other value) it
// reports True again.
const KubeletReadyAnnotation = "e2e.workerimage.cozystack.io/kubelet-ready"

// kubeletReady is the Ready status (and reason) the kubelet stand-in
// reports for n: True unless a test overrode it with KubeletReadyAnnotation.
func kubeletReady(n *corev1.Node) (corev1.ConditionStatus, string) {
	switch s := corev1.ConditionStatus(n.Annotations[KubeletReadyAnnotation]); s {
	case corev1.ConditionFalse:
		return s, "KubeletNotReady"
	case corev1.ConditionUnknown:
		return s, "NodeStatusUnknown"
	}
	return corev1.ConditionTrue, "KubeletReady"
}

// SetKubeletReady makes the kubelet stand-in report Ready=status ("False"
// or "Unknown") for Node node from its next poll on, or True again for "".
func (cp *ControlPlane) SetKubeletReady(ctx context.Context, node string, status corev1.ConditionStatus) error {
	value := "null"
	if status != "" {
		value = fmt.Sprintf("%q", status)
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, KubeletReadyAnnotation, value)
	_, err := cp.Kube.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// workerDisk returns the DataVolume KubeVirt creates for the first of a
// VirtualMachine template's dataVolumeTemplates when CAPK names the VM vm:
// <vm>-<template name> (CAPK pkg/kubevirt/utils.go
// prefixDataVolumeTemplates), with the template's labels, annotations and
// spec (KubeVirt pkg/storage/types/dv.go).
func workerDisk(dvts []any, ns, vm string) (*unstructured.Unstructured, error) {
	if len(dvts) == 0 {
		return nil, fmt.Errorf("no virtualMachineTemplate.spec.dataVolumeTemplates")
	}
	dvt, _ := dvts[0].(map[string]any)
	tmplName, _, _ := unstructured.NestedString(dvt, "metadata", "name")
	spec, _, _ := unstructured.NestedMap(dvt, "spec")
	labels, _, _ := unstructured.NestedMap(dvt, "metadata", "labels")
	ann, _, _ := unstructured.NestedMap(dvt, "metadata", "annotations")
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": DataVolume.GroupVersion().String(),
		"kind":       DataVolume.Kind,
		"metadata": map[string]any{
			"name":        vm + "-" + tmplName,
			"namespace":   ns,
			"labels":      labels,
			"annotations": ann,
		},
		"spec": spec,
	}}, nil
}
