package harness

import (
	"context"
	"fmt"
	"sort"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// The node stand-ins play, as a goroutine of the test binary, the parts of
// a worker's chain below the real Cluster API manager, CABPT and CAPK that
// need a node: KubeVirt (virt-controller, virt-launcher and virt-handler)
// and the worker's kubelet. They do only what those do for the
// VirtualMachines CAPK creates:
//
// virt-controller's VM controller (kubevirt v1.7.0
// pkg/virt-controller/watch/vm/vm.go), for a VirtualMachine not being
// deleted and not Halted:
//   - each dataVolumeTemplate without its DataVolume: a clone source is
//     first authorized as handleCloneDataVolume and authorizeDataVolume do,
//     a SubjectAccessReview of the VM's service account (default: CAPK
//     mounts none) for create on cdi.kubevirt.io datavolumes/source named
//     as the source PVC in its namespace (CDI's authorize_utils.go); a
//     refusal is a Warning event UnauthorizedDataVolumeCreate on the VM and
//     no DataVolume, a failed create a Warning FailedDataVolumeCreate. Otherwise the DataVolume is created as
//     CreateDataVolumeManifest and pkg/storage/types/dv.go
//     GenerateDataVolumeFromTemplate make it: the template's name, labels
//     (plus kubevirt.io/created-by, the VM's uid), annotations (plus
//     cdi.kubevirt.io/allowClaimAdoption) and spec, controlled by the VM;
//   - once every DataVolume is Succeeded (or WaitForFirstConsumer,
//     PendingPopulation: handleDataVolumes), the VirtualMachineInstance is
//     started (startVMI, SetupVMIFromVM): the VM's name, the template's
//     labels and spec, controlled by the VM; the garbage collector deletes
//     it and the DataVolumes with the VM, as the VM's owner references say.
//
// virt-handler's VMI status (what a booted guest
// reports): phase Running on node e2e-node, one interface with an address
// (the guest agent's), Ready=True, and LiveMigratable (virt-controller's
// migratable condition: False, DisksNotLiveMigratable, unless every
// volume's claim is ReadWriteMany). The VM's status says Running, ready.
//
// Kubelet: a Running VirtualMachineInstance registers a Node named after
// the guest's hostname (the VMI's name: KubeVirt hands it to the guest
// unless spec.hostname says otherwise), with no providerID (Talos runs no
// cloud provider; CAPK patches spec.providerID onto the Node named after
// the KubevirtMachine, kubevirtmachine_controller.go updateNodeProviderID,
// and Cluster API then finds it by providerID and sets the Machine's
// nodeRef) and reports it Ready with the pressure conditions False. A
// Node whose KubeletReadyAnnotation says otherwise is reported that way
// instead, as a kubelet that lost its node would be, for the
// MachineHealthCheck scenarios. Cluster API deletes the Node with its
// Machine; a kubelet registers once, so the Node is not registered again
// while the VM shuts down.
//
// Everything they do is logged to logs/node-standins.log.

// NodeStandInManager is the field manager of what the node stand-ins write.
const NodeStandInManager = "e2e-node-standins"

// Labels and annotations of KubeVirt the stand-ins write
// (staging/src/kubevirt.io/api/core/v1/types.go, pkg/storage/types/dv.go).
const (
	kubevirtCreatedByLabel        = "kubevirt.io/created-by"
	cdiAllowClaimAdoptionAnn      = "cdi.kubevirt.io/allowClaimAdoption"
	unauthorizedDataVolumeCreate  = "UnauthorizedDataVolumeCreate"
	successfulDataVolumeCreate    = "SuccessfulDataVolumeCreate"
	failedDataVolumeCreate        = "FailedDataVolumeCreate"
	e2eNodeName                   = "e2e-node"
	disksNotLiveMigratable        = "DisksNotLiveMigratable"
	kubevirtVMIMigratableCondType = "LiveMigratable"
)

type nodeStandIns struct {
	cp *ControlPlane
	*loop
	// registered are the VMIs whose kubelet registered its Node. A kubelet
	// registers once, at start (pkg/kubelet/kubelet_node_status.go
	// registerWithAPIServer, until registrationCompleted); a Node deleted
	// under a running kubelet, as Cluster API deletes a deleted Machine's
	// while the VM shuts down, stays deleted.
	registered map[types.UID]bool
}

// StartNodeStandIns starts the KubeVirt and kubelet stand-ins; they stop
// with the control plane.
func (cp *ControlPlane) StartNodeStandIns() error {
	l, err := newLoop(cp.LogDir, "node-standins.log")
	if err != nil {
		return err
	}
	s := &nodeStandIns{cp: cp, loop: l, registered: map[types.UID]bool{}}
	cp.nodes = s
	l.start(s.virtualMachines, s.kubelet)
	return nil
}

func (s *nodeStandIns) virtualMachines(ctx context.Context) {
	vms, err := s.cp.List(ctx, VirtualMachine, "", "")
	if err != nil {
		s.logf("vms", "cannot list VirtualMachines: %v", err)
		return
	}
	for i := range vms {
		vm := &vms[i]
		key := "VirtualMachine " + objectName(vm)
		if vm.GetDeletionTimestamp() != nil {
			continue
		}
		if rs, _, _ := unstructured.NestedString(vm.Object, "spec", "runStrategy"); rs == "Halted" {
			continue
		}
		ready, err := s.dataVolumes(ctx, vm, key)
		if err != nil {
			s.logf(key, "%s: %v", key, err)
			continue
		}
		if !ready {
			continue
		}
		if err := s.startVMI(ctx, vm, key); err != nil {
			s.logf(key, "%s: %v", key, err)
		}
	}
}

// dataVolumes creates the VM's missing DataVolumes and reports whether all
// are ready for the VMI to start.
func (s *nodeStandIns) dataVolumes(ctx context.Context, vm *unstructured.Unstructured, key string) (bool, error) {
	dvts, _, _ := unstructured.NestedSlice(vm.Object, "spec", "dataVolumeTemplates")
	ready := true
	for _, t := range dvts {
		dvt, _ := t.(map[string]any)
		name, _, _ := unstructured.NestedString(dvt, "metadata", "name")
		existing, err := s.cp.Get(ctx, DataVolume, vm.GetNamespace(), name)
		if err != nil {
			return false, err
		}
		if existing != nil {
			switch phase, _, _ := unstructured.NestedString(existing.Object, "status", "phase"); phase {
			case "Succeeded", "WaitForFirstConsumer", "PendingPopulation":
			default:
				s.logf(key+" dv "+name, "%s: waiting for DataVolume %s (phase %q)", key, name, phase)
				ready = false
			}
			continue
		}
		ready = false
		// virt-controller creates nothing for a VM with a deletionTimestamp
		// (pkg/virt-controller/watch/vm/vm.go sync, v1.7.0: it only stops
		// the VMI and removes its finalizer) and no DataVolume whose claim
		// exists (handleDataVolumes). The list this VM came from may be
		// older than its deletion, so both are read live: a disk made
		// again from a stale list would be collected a moment later, a
		// disk dropped and re-created, which the chaos ledger rejects.
		live, err := s.cp.Get(ctx, VirtualMachine, vm.GetNamespace(), vm.GetName())
		if err != nil {
			return false, err
		}
		if live == nil || live.GetDeletionTimestamp() != nil || live.GetUID() != vm.GetUID() {
			return false, nil
		}
		if claim, err := s.cp.Get(ctx, PVC, vm.GetNamespace(), name); err != nil {
			return false, err
		} else if claim != nil {
			s.logf(key+" dv "+name, "%s: no DataVolume %s, but its claim exists: not created", key, name)
			continue
		}
		dv := dataVolumeFromTemplate(vm, dvt)
		if denied, err := s.authorizeClone(ctx, vm, dv); err != nil {
			return false, err
		} else if denied != "" {
			s.event(ctx, vm, corev1.EventTypeWarning, unauthorizedDataVolumeCreate, fmt.Sprintf("Not authorized to create DataVolume %s: %s", name, denied))
			s.logf(key+" dv "+name, "%s: not authorized to create DataVolume %s: %s", key, name, denied)
			continue
		}
		if err := s.cp.ApplyAs(ctx, NodeStandInManager, dv); err != nil {
			s.event(ctx, vm, corev1.EventTypeWarning, failedDataVolumeCreate, fmt.Sprintf("Error creating DataVolume %s: %v", name, err))
			return false, fmt.Errorf("cannot create DataVolume %s: %w", name, err)
		}
		s.event(ctx, vm, corev1.EventTypeNormal, successfulDataVolumeCreate, "Created DataVolume "+name)
		s.logf(key+" dv "+name, "%s: DataVolume %s created", key, name)
	}
	return ready, nil
}

// dataVolumeFromTemplate is the DataVolume virt-controller creates for
// dvt of vm.
func dataVolumeFromTemplate(vm *unstructured.Unstructured, dvt map[string]any) *unstructured.Unstructured {
	name, _, _ := unstructured.NestedString(dvt, "metadata", "name")
	labels, _, _ := unstructured.NestedStringMap(dvt, "metadata", "labels")
	ann, _, _ := unstructured.NestedStringMap(dvt, "metadata", "annotations")
	spec, _, _ := unstructured.NestedMap(dvt, "spec")
	if labels == nil {
		labels = map[string]string{}
	}
	if ann == nil {
		ann = map[string]string{}
	}
	labels[kubevirtCreatedByLabel] = string(vm.GetUID())
	ann[cdiAllowClaimAdoptionAnn] = "true"
	dv := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": DataVolume.GroupVersion().String(),
		"kind":       DataVolume.Kind,
		"metadata":   map[string]any{"name": name, "namespace": vm.GetNamespace()},
		"spec":       spec,
	}}
	dv.SetLabels(labels)
	dv.SetAnnotations(ann)
	dv.SetOwnerReferences([]metav1.OwnerReference{controllerRef(vm)})
	return dv
}

func controllerRef(owner *unstructured.Unstructured) metav1.OwnerReference {
	t := true
	return metav1.OwnerReference{APIVersion: owner.GetAPIVersion(), Kind: owner.GetKind(), Name: owner.GetName(), UID: owner.GetUID(), Controller: &t, BlockOwnerDeletion: &t}
}

// authorizeClone returns, for a DataVolume cloning a PVC, why the VM's
// service account may not clone it ("" when it may).
func (s *nodeStandIns) authorizeClone(ctx context.Context, vm, dv *unstructured.Unstructured) (string, error) {
	src, ok, _ := unstructured.NestedStringMap(dv.Object, "spec", "source", "pvc")
	if !ok {
		return "", nil
	}
	srcNS := src["namespace"]
	if srcNS == "" {
		srcNS = vm.GetNamespace()
	}
	ns := vm.GetNamespace()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   "system:serviceaccount:" + ns + ":default",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: srcNS, Verb: "create", Group: "cdi.kubevirt.io", Resource: "datavolumes", Subresource: "source", Name: src["name"],
		},
	}}
	got, err := s.cp.Kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("SubjectAccessReview: %w", err)
	}
	if got.Status.Allowed {
		return "", nil
	}
	return fmt.Sprintf("User system:serviceaccount:%s:default has insufficient permissions in clone source namespace %s", ns, srcNS), nil
}

// startVMI creates the VM's VMI, running and ready, and reports the VM
// running.
func (s *nodeStandIns) startVMI(ctx context.Context, vm *unstructured.Unstructured, key string) error {
	existing, err := s.cp.Get(ctx, VirtualMachineInstance, vm.GetNamespace(), vm.GetName())
	if err != nil {
		return err
	}
	if existing == nil {
		vmi, err := s.vmiFor(ctx, vm)
		if err != nil {
			return err
		}
		ri, err := s.cp.Resource(VirtualMachineInstance, vm.GetNamespace())
		if err != nil {
			return err
		}
		if _, err := ri.Create(ctx, vmi, metav1.CreateOptions{FieldManager: NodeStandInManager}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("cannot start VirtualMachineInstance: %w", err)
		}
		s.logf(key, "%s: VirtualMachineInstance started, Ready", key)
	}
	if ok, _, _ := unstructured.NestedBool(vm.Object, "status", "ready"); ok {
		return nil
	}
	return s.cp.ApplyStatus(ctx, NodeStandInManager, statusPatch(vm, map[string]any{
		"created": true, "ready": true, "printableStatus": "Running",
		"conditions": []any{map[string]any{"type": "Ready", "status": "True"}},
	}))
}

// vmiFor is the VMI of vm as running, with the status a booted guest
// reports.
func (s *nodeStandIns) vmiFor(ctx context.Context, vm *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	spec, _, _ := unstructured.NestedMap(vm.Object, "spec", "template", "spec")
	labels, _, _ := unstructured.NestedStringMap(vm.Object, "spec", "template", "metadata", "labels")
	migratable, err := s.liveMigratable(ctx, vm.GetNamespace(), spec)
	if err != nil {
		return nil, err
	}
	vmi := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": VirtualMachineInstance.GroupVersion().String(),
		"kind":       VirtualMachineInstance.Kind,
		"metadata":   map[string]any{"name": vm.GetName(), "namespace": vm.GetNamespace()},
		"spec":       spec,
		"status": map[string]any{
			"phase":    "Running",
			"nodeName": e2eNodeName,
			"interfaces": []any{map[string]any{
				"name": "default", "ipAddress": vmIP(vm), "ipAddresses": []any{vmIP(vm)},
			}},
			"conditions": []any{
				map[string]any{"type": "Ready", "status": "True"},
				migratable,
			},
		},
	}}
	vmi.SetLabels(labels)
	vmi.SetOwnerReferences([]metav1.OwnerReference{controllerRef(vm)})
	return vmi, nil
}

// liveMigratable is virt-handler's LiveMigratable condition for a VMI of
// spec (pkg/virt-handler/vm.go, checkVolumesForMigration: a volume whose
// claim is not ReadWriteMany makes the VMI not migratable, reason
// DisksNotLiveMigratable). CAPK reads it on every reconcile and requeues
// without it (IsLiveMigratable), before it patches the Node's providerID.
func (s *nodeStandIns) liveMigratable(ctx context.Context, ns string, spec map[string]any) (map[string]any, error) {
	vols, _, _ := unstructured.NestedSlice(spec, "volumes")
	for _, v := range vols {
		vol, _ := v.(map[string]any)
		claim, _, _ := unstructured.NestedString(vol, "dataVolume", "name")
		if claim == "" {
			claim, _, _ = unstructured.NestedString(vol, "persistentVolumeClaim", "claimName")
		}
		if claim == "" {
			continue
		}
		pvc, err := s.cp.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("claim %s of the VMI: %w", claim, err)
		}
		rwx := false
		for _, m := range pvc.Spec.AccessModes {
			rwx = rwx || m == corev1.ReadWriteMany
		}
		if !rwx {
			return map[string]any{
				"type": kubevirtVMIMigratableCondType, "status": "False", "reason": disksNotLiveMigratable,
				"message": fmt.Sprintf("cannot migrate VMI: PVC %s is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)", claim),
			}, nil
		}
	}
	return map[string]any{"type": kubevirtVMIMigratableCondType, "status": "True"}, nil
}

// vmIP is a stable address in 10.244.0.0/16 for vm (the pod network's
// address the guest agent reports).
func vmIP(vm *unstructured.Unstructured) string {
	h := 0
	for _, c := range string(vm.GetUID()) {
		h = (h*31 + int(c)) & 0xffff
	}
	return fmt.Sprintf("10.244.%d.%d", h>>8, 1+(h&0xff)%254)
}

// event records an event on obj, as the named KubeVirt component would.
func (s *nodeStandIns) event(ctx context.Context, obj *unstructured.Unstructured, typ, reason, message string) {
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: obj.GetName() + ".", Namespace: obj.GetNamespace()},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Name: obj.GetName(), Namespace: obj.GetNamespace(), UID: obj.GetUID(),
		},
		Type: typ, Reason: reason, Message: message, Source: corev1.EventSource{Component: "virtualmachine-controller"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	if _, err := s.cp.Kube.CoreV1().Events(obj.GetNamespace()).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		s.logf("event "+objectName(obj), "cannot record event %s on %s: %v", reason, objectName(obj), err)
	}
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

func (s *nodeStandIns) kubelet(ctx context.Context) {
	vmis, err := s.cp.List(ctx, VirtualMachineInstance, "", "")
	if err != nil {
		s.logf("kubelet", "cannot list VirtualMachineInstances: %v", err)
		return
	}
	sort.Slice(vmis, func(i, j int) bool { return objectName(&vmis[i]) < objectName(&vmis[j]) })
	for i := range vmis {
		vmi := &vmis[i]
		if phase, _, _ := unstructured.NestedString(vmi.Object, "status", "phase"); phase != "Running" || vmi.GetDeletionTimestamp() != nil {
			continue
		}
		name := vmi.GetName()
		if h, _, _ := unstructured.NestedString(vmi.Object, "spec", "hostname"); h != "" {
			name = h
		}
		key := "Node " + name
		node, err := s.cp.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err) && s.registered[vmi.GetUID()]:
			s.logf(key, "%s: deleted; the kubelet of VirtualMachineInstance %s does not register again", key, objectName(vmi))
			continue
		case apierrors.IsNotFound(err):
			node, err = s.cp.Kube.CoreV1().Nodes().Create(ctx, &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
			}, metav1.CreateOptions{FieldManager: NodeStandInManager})
			if err != nil {
				s.logf(key, "%s: cannot register: %v", key, err)
				continue
			}
			s.logf(key, "%s: registered by the kubelet of VirtualMachineInstance %s", key, objectName(vmi))
		case err != nil:
			s.logf(key, "%s: %v", key, err)
			continue
		}
		s.registered[vmi.GetUID()] = true
		s.report(ctx, node, key)
	}
}

// report writes the Node's conditions when they differ from what the
// kubelet stand-in reports.
func (s *nodeStandIns) report(ctx context.Context, node *corev1.Node, key string) {
	ready, reason := kubeletReady(node)
	if nodeCondition(node, corev1.NodeReady) == ready && nodeCondition(node, corev1.NodeMemoryPressure) == corev1.ConditionFalse {
		return
	}
	// Cluster API patches the Node (labels, annotations) and CAPK its
	// providerID as soon as they find it, so the status is written on the
	// latest version, and retried on the next poll after a conflict.
	//
	// A kubelet reports the pressure conditions False next to Ready;
	// Cluster API v1.11 needs all four for the Machine's v1beta2
	// NodeHealthy and Ready, hence Available
	// (internal/controllers/machine/machine_controller_status.go,
	// summarizeNodeConditions: "Condition not yet reported" is Unknown),
	// and the MachineDeployment deletes old MachineSets only once its
	// v1beta2 availableReplicas match (machinedeployment_rolling.go,
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
		cond(corev1.NodeReady, ready, reason),
	}
	node.Status.NodeInfo.KubeletVersion = "v1.35.0"
	if _, err := s.cp.Kube.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{FieldManager: NodeStandInManager}); err != nil {
		s.logf(key, "%s: cannot report Ready=%s (retrying): %v", key, ready, err)
		return
	}
	s.logf(key, "%s: Ready=%s", key, ready)
}

func nodeCondition(n *corev1.Node, t corev1.NodeConditionType) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
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
