package harness

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The stand-ins play, as goroutines of the test binary, the parts of a
// cluster that have no process here and that CDI needs to finish its work:
// the CSI provisioning stack and the kubelet. Everything else CDI relies on
// runs for real: cdi-controller and cdi-apiserver, and kube-controller-
// manager's PersistentVolume binder, which binds a claim to the volume
// provisioned for it and, when CDI moves a volume from its PVC' to the
// target claim (pkg/controller/common/util.go Rebind rewrites the PV's
// claimRef), binds the target and marks PVC' Lost.
//
// Provisioner (external-provisioner and a CSI driver,
// kubernetes-csi/external-provisioner pkg/controller/controller.go), for
// both of the suite's drivers, CSIDriverName and SnapshotCSIDriverName,
// with the same rules:
//   - provisions a PVC of a class whose provisioner is one of them once
//     the PV binder has annotated it volume.kubernetes.io/storage-provisioner
//     with that name (the claim is waiting for an external provisioner): a
//     PV named pvc-<uid>, pre-bound by claimRef, with a csi source of the
//     class's driver and capacity = the request, the class's reclaim
//     policy, access and volume modes of the claim;
//   - a claim whose dataSourceRef (or dataSource) is a PVC is a CSI clone:
//     provisioned only when the source exists in the claim's namespace, is
//     Bound, has the same class, and is no larger than the request (the
//     checks external-provisioner makes before CreateVolume with a volume
//     content source); otherwise it waits, as external-provisioner retries.
//     By default the clone's PV is made as soon as the checks pass; with
//     SetCSICloneDuration it is made that long after (see there);
//   - a claim whose dataSourceRef (or dataSource) is a VolumeSnapshot
//     (snapshot.storage.k8s.io) is a restore: provisioned only when the
//     checks of getSnapshotSource pass (external-provisioner v6.4.0; see
//     restorable in snapshotter.go) and the snapshot driver knows the
//     snapshot (so only SnapshotCSIDriverName restores one); meanwhile
//     it waits, as external-provisioner retries. Like v6.4.0 it holds the
//     snapshot with its source-protection finalizer while it provisions
//     (setSnapshotFinalizer, removeSnapshotFinalizer, and the
//     SnapshotFinalizerController's sweep of orphaned ones);
//   - a claim whose dataSourceRef is another kind (CDI's VolumeImportSource
//     or VolumeCloneSource) is left to its populator, as external-
//     provisioner leaves it;
//   - resizes (external-resizer, and the driver's node expansion, at once):
//     a Bound claim of an expandable class whose request exceeds its
//     capacity gets that capacity on its PV and in its status;
//   - deletes a Released PV of either driver whose reclaim policy is
//     Delete.
//
// Snapshotter (the csi-snapshotter sidecar and the snapshot driver's
// CreateSnapshot, DeleteSnapshot and ListSnapshots), for
// SnapshotCSIDriverName only: snapshotter.go.
//
// Kubelet (pkg/kubelet status manager: a pod's phase and container
// statuses, with the termination message the container wrote):
//   - CDI's importer pods (label cdi.kubevirt.io=importer) run until the
//     DataVolume they import for says otherwise in ImporterAnnotation:
//     Succeeded ends the container with exit code 0 and the termination
//     message the importer writes on success (cmd/cdi-importer/importer.go:
//     a common.TerminationMessage with message "Import Complete"), which
//     CDI parses (pkg/controller/util.go parseTerminationMessage) and
//     records on the PVC; ChecksumMismatch ends it with exit code 0 and the
//     importer's checksum failure ("Unable to process data: checksum
//     mismatch"), which CDI v1.65 treats as fatal (import-controller.go
//     updatePvcFromPod). Without the annotation, or with Running, the pod
//     is Running: an import in progress, for as long as the scenario wants;
//   - CDI's prep pods (label cdi.kubevirt.io=cdi-populator-prep,
//     pkg/controller/clone/prep-claim.go) succeed at once;
//   - the source and upload server pods of a host-assisted clone into a
//     namespace of RunHostAssistedCopies run CDI's own cdi-cloner and
//     cdi-uploadserver on the importer network (hostclone.go); those of
//     every other host-assisted clone are left Pending, and their
//     scenarios assert how CDI plans such a clone, not the copy.
//
// Nothing else is written: phases, conditions, events and annotations of
// DataVolumes and PVCs are CDI's.

// ImporterAnnotation, on a DataVolume, tells the kubelet stand-in how its
// importer pod ends: ImporterSucceeded, ImporterChecksumMismatch, or
// ImporterRunning (the default: the pod keeps running).
const ImporterAnnotation = "kubelet.e2e.workerimage.cozystack.io/importer"

// Values of ImporterAnnotation.
const (
	ImporterRunning          = "Running"
	ImporterSucceeded        = "Succeeded"
	ImporterChecksumMismatch = "ChecksumMismatch"
)

// Labels and annotations of Kubernetes and CDI the stand-ins read.
const (
	annStorageProvisioner = "volume.kubernetes.io/storage-provisioner"
	annProvisionedBy      = "pv.kubernetes.io/provisioned-by"
	// cdiComponentLabel and cdiAppLabel mark CDI's pods
	// (pkg/common/common.go CDIComponentLabel, CDILabelKey/CDILabelValue).
	cdiComponentLabel = "cdi.kubevirt.io"
	cdiAppSelector    = "app=containerized-data-importer"
	// cdiDataVolume is the volume of CDI's worker pods that holds the
	// claim they work on (pkg/controller/common/util.go DataVolName).
	cdiDataVolume = "cdi-data-vol"
	// importCompleteMessage is what cdi-importer writes as its termination
	// message on success, and checksumMismatchMessage on a checksum
	// failure (cmd/cdi-importer/importer.go).
	importCompleteMessage   = `{"scratchSpaceRequired":false,"preallocationApplied":false,"message":"Import Complete"}`
	checksumMismatchMessage = `{"message":"Unable to process data: checksum mismatch"}`
)

// standInDrivers are the CSI drivers the provisioner stand-in answers to.
var standInDrivers = map[string]bool{CSIDriverName: true, SnapshotCSIDriverName: true}

// standIns is the running provisioner, snapshotter and kubelet stand-ins.
type standIns struct {
	cp *ControlPlane
	*loop
	// cloneDuration is SetCSICloneDuration's, in nanoseconds.
	cloneDuration atomic.Int64
	// cloneStarted is when each clone claim (by UID) passed
	// external-provisioner's checks: its CreateVolume call began. Only the
	// loop's goroutine reads and writes it (as every field below).
	cloneStarted map[types.UID]time.Time
	// snapshotDuration is SetSnapshotDuration's, in nanoseconds.
	snapshotDuration atomic.Int64
	// snapshots are the snapshot driver's snapshots, by CSI name.
	snapshots map[string]*driverSnapshot
	// heldSnapshots are the VolumeSnapshots (namespace/name) the
	// provisioner put its source-protection finalizer on.
	heldSnapshots map[string]bool
	// importers are the real importers, by pod UID (importer.go).
	importers map[types.UID]*importerRun
}

// stop stops the loop, then every real importer.
func (s *standIns) stop() {
	s.loop.stop()
	s.stopImporters()
}

// StartStandIns starts the provisioner, snapshotter and kubelet
// stand-ins. They log what they do to logs/standins.log and stop with the
// control plane.
func (cp *ControlPlane) StartStandIns() error {
	l, err := newLoop(cp.LogDir, "standins.log")
	if err != nil {
		return err
	}
	s := &standIns{cp: cp, loop: l, cloneStarted: map[types.UID]time.Time{}, snapshots: map[string]*driverSnapshot{}, heldSnapshots: map[string]bool{}, importers: map[types.UID]*importerRun{}}
	cp.standIns = s
	l.start(s.provision, s.snapshotter, s.kubelet)
	return nil
}

// SetCSICloneDuration makes the provisioner stand-in take d to provision a
// CSI clone: a claim whose data source is a PVC gets its PV d after it
// passed external-provisioner's checks, and stays Pending until then. It
// imitates a CSI driver's CreateVolume from a volume content source, which
// copies or clones the source's data before it returns (ceph-csi RBD: a
// snapshot and a clone of the image, flattened past a depth; a LINSTOR or
// LVM driver: a copy of the volume) while external-provisioner waits on
// the call (pkg/controller/controller.go Provision, retried past its
// --timeout) and the claim stays Pending; CDI's DataVolume of such a clone
// says CSICloneInProgress meanwhile. 0, the default, provisions it at once,
// as before; a scenario that sets it resets it when it ends. It fails when
// the stand-ins are not running.
func (cp *ControlPlane) SetCSICloneDuration(d time.Duration) error {
	if cp.standIns == nil {
		return fmt.Errorf("the provisioner stand-in is not running")
	}
	cp.standIns.cloneDuration.Store(int64(d))
	cp.standIns.logf("clone-duration", "provisioner: a CSI clone takes %s from now on", d)
	return nil
}

func (s *standIns) provision(ctx context.Context) {
	kube := s.cp.Kube
	classes, err := kube.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		s.logf("list", "provisioner: cannot list StorageClasses: %v", err)
		return
	}
	ours := map[string]storagev1.StorageClass{}
	for _, c := range classes.Items {
		if standInDrivers[c.Provisioner] {
			ours[c.Name] = c
		}
	}
	pvcs, err := kube.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{})
	if err != nil {
		s.logf("list", "provisioner: cannot list PVCs: %v", err)
		return
	}
	byName := map[string]*corev1.PersistentVolumeClaim{}
	live := map[types.UID]bool{}
	for i := range pvcs.Items {
		byName[pvcs.Items[i].Namespace+"/"+pvcs.Items[i].Name] = &pvcs.Items[i]
		live[pvcs.Items[i].UID] = true
	}
	for uid := range s.cloneStarted {
		if !live[uid] {
			delete(s.cloneStarted, uid)
		}
	}
	pvs, err := kube.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		s.logf("list", "provisioner: cannot list PVs: %v", err)
		return
	}
	// sig-storage-lib-external-provisioner v13.0.0 (vendored by
	// external-provisioner), controller/controller.go
	// provisionClaimOperation: a claim whose PV (named by the claim's UID)
	// already exists is not provisioned again, so its Provision, and the
	// snapshot finalizer Provision sets, does not run a second time while
	// the PV binder has yet to bind the claim.
	provisioned := map[string]bool{}
	for i := range pvs.Items {
		provisioned[pvs.Items[i].Name] = true
	}
	for i := range pvcs.Items {
		pvc := &pvcs.Items[i]
		class := ""
		if pvc.Spec.StorageClassName != nil {
			class = *pvc.Spec.StorageClassName
		}
		sc, ok := ours[class]
		if !ok || pvc.DeletionTimestamp != nil {
			continue
		}
		switch {
		case pvc.Status.Phase == corev1.ClaimPending && pvc.Spec.VolumeName == "" && !provisioned[provisionedVolumeName(pvc)]:
			s.provisionClaim(ctx, pvc, &sc, byName)
		case pvc.Status.Phase == corev1.ClaimBound:
			s.resizeClaim(ctx, pvc, &sc)
		}
	}
	s.releaseSnapshots(ctx, pvcs.Items)
	for _, pv := range pvs.Items {
		if pv.Spec.CSI == nil || !standInDrivers[pv.Spec.CSI.Driver] || pv.Status.Phase != corev1.VolumeReleased || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete || pv.DeletionTimestamp != nil {
			continue
		}
		if err := kube.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{}); err != nil {
			s.logf("pv/"+pv.Name, "provisioner: cannot delete released PV %s: %v", pv.Name, err)
			continue
		}
		s.logf("pv/"+pv.Name, "provisioner: deleted released PV %s", pv.Name)
	}
}

func (s *standIns) provisionClaim(ctx context.Context, pvc *corev1.PersistentVolumeClaim, sc *storagev1.StorageClass, byName map[string]*corev1.PersistentVolumeClaim) {
	key := "pvc/" + pvc.Namespace + "/" + pvc.Name
	// The PV binder hands a claim to an external provisioner by this
	// annotation (pkg/controller/volume/persistentvolume/pv_controller.go
	// setClaimProvisioner); external-provisioner acts only on claims
	// annotated with its name.
	if pvc.Annotations[annStorageProvisioner] != sc.Provisioner {
		s.logf(key, "provisioner: PVC %s/%s waits for the PV binder's %s annotation", pvc.Namespace, pvc.Name, annStorageProvisioner)
		return
	}
	request := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	restore, isRestore := restoreSource(pvc)
	if isRestore {
		if !s.restorable(ctx, key, pvc, sc, request, restore) {
			return
		}
	} else if src := cloneSource(pvc); src != "" {
		source := byName[pvc.Namespace+"/"+src]
		switch {
		case source == nil:
			s.logf(key, "provisioner: PVC %s/%s clones PVC %s, which does not exist; waiting", pvc.Namespace, pvc.Name, src)
			return
		case source.Status.Phase != corev1.ClaimBound:
			s.logf(key, "provisioner: PVC %s/%s clones PVC %s, which is %s; waiting", pvc.Namespace, pvc.Name, src, source.Status.Phase)
			return
		case source.Spec.StorageClassName == nil || *source.Spec.StorageClassName != sc.Name:
			s.logf(key, "provisioner: PVC %s/%s clones PVC %s of another StorageClass; external-provisioner refuses that", pvc.Namespace, pvc.Name, src)
			return
		}
		if capacity := source.Status.Capacity[corev1.ResourceStorage]; request.Cmp(capacity) < 0 {
			s.logf(key, "provisioner: PVC %s/%s requests %s, less than its clone source %s (%s); external-provisioner refuses that", pvc.Namespace, pvc.Name, request.String(), src, capacity.String())
			return
		}
		// The driver's CreateVolume from the source (SetCSICloneDuration).
		if d := time.Duration(s.cloneDuration.Load()); d > 0 {
			began, ok := s.cloneStarted[pvc.UID]
			if !ok {
				began = time.Now()
				s.cloneStarted[pvc.UID] = began
			}
			if time.Since(began) < d {
				s.logf(key, "provisioner: PVC %s/%s: CreateVolume cloning PVC %s in progress (%s)", pvc.Namespace, pvc.Name, src, d)
				return
			}
		}
	} else if ref := pvc.Spec.DataSourceRef; ref != nil && (ref.Kind != "PersistentVolumeClaim" || (ref.APIGroup != nil && *ref.APIGroup != "")) {
		return // a populator's claim
	}
	reclaim := corev1.PersistentVolumeReclaimDelete
	if sc.ReclaimPolicy != nil {
		reclaim = *sc.ReclaimPolicy
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        provisionedVolumeName(pvc),
			Annotations: map[string]string{annProvisionedBy: sc.Provisioner},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: request},
			AccessModes:                   pvc.Spec.AccessModes,
			VolumeMode:                    pvc.Spec.VolumeMode,
			StorageClassName:              sc.Name,
			PersistentVolumeReclaimPolicy: reclaim,
			ClaimRef: &corev1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID, ResourceVersion: pvc.ResourceVersion,
			},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver:       sc.Provisioner,
				VolumeHandle: "e2e-" + string(pvc.UID),
			}},
		},
	}
	// external-provisioner's Provision removes its snapshot finalizer once
	// the driver made the volume, before the PV is saved
	// (pkg/controller/controller.go, removeSnapshotFinalizer), so a
	// Provision run again for a claim whose PV exists releases it too.
	if isRestore {
		s.releaseSnapshot(ctx, pvc.Namespace, restore.Name)
	}
	if _, err := s.cp.Kube.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		if !strings.Contains(err.Error(), "already exists") {
			s.logf(key, "provisioner: cannot create PV %s for PVC %s/%s: %v", pv.Name, pvc.Namespace, pvc.Name, err)
		} else {
			delete(s.cloneStarted, pvc.UID)
		}
		return
	}
	delete(s.cloneStarted, pvc.UID)
	what := "a new volume"
	if src := cloneSource(pvc); src != "" {
		what = "a CSI clone of PVC " + src
	}
	if isRestore {
		what = "restored from VolumeSnapshot " + restore.Name
	}
	s.logf(key, "provisioner: created PV %s (%s, %s) for PVC %s/%s", pv.Name, request.String(), what, pvc.Namespace, pvc.Name)
}

// provisionedVolumeName is the name of the PV the provisioner makes for a
// claim, external-provisioner's default (--volume-name-prefix pvc, then the
// claim's UID).
func provisionedVolumeName(pvc *corev1.PersistentVolumeClaim) string {
	return "pvc-" + string(pvc.UID)
}

// cloneSource returns the name of the PVC a claim clones, or "".
func cloneSource(pvc *corev1.PersistentVolumeClaim) string {
	if ref := pvc.Spec.DataSourceRef; ref != nil {
		if ref.Kind == "PersistentVolumeClaim" && (ref.APIGroup == nil || *ref.APIGroup == "") && ref.Namespace == nil {
			return ref.Name
		}
		return ""
	}
	if ds := pvc.Spec.DataSource; ds != nil && ds.Kind == "PersistentVolumeClaim" && (ds.APIGroup == nil || *ds.APIGroup == "") {
		return ds.Name
	}
	return ""
}

func (s *standIns) resizeClaim(ctx context.Context, pvc *corev1.PersistentVolumeClaim, sc *storagev1.StorageClass) {
	request := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	capacity := pvc.Status.Capacity[corev1.ResourceStorage]
	if request.Cmp(capacity) <= 0 || sc.AllowVolumeExpansion == nil || !*sc.AllowVolumeExpansion || pvc.Spec.VolumeName == "" {
		return
	}
	key := "resize/" + pvc.Namespace + "/" + pvc.Name
	kube := s.cp.Kube
	pv, err := kube.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		s.logf(key, "resizer: cannot read PV %s of PVC %s/%s: %v", pvc.Spec.VolumeName, pvc.Namespace, pvc.Name, err)
		return
	}
	if cur := pv.Spec.Capacity[corev1.ResourceStorage]; cur.Cmp(request) < 0 {
		pv.Spec.Capacity[corev1.ResourceStorage] = request
		if _, err := kube.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
			s.logf(key, "resizer: cannot resize PV %s: %v", pv.Name, err)
			return
		}
	}
	pvc = pvc.DeepCopy()
	pvc.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: request}
	if _, err := kube.CoreV1().PersistentVolumeClaims(pvc.Namespace).UpdateStatus(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		s.logf(key, "resizer: cannot record the new capacity of PVC %s/%s: %v", pvc.Namespace, pvc.Name, err)
		return
	}
	s.logf(key, "resizer: PVC %s/%s and PV %s grown from %s to %s", pvc.Namespace, pvc.Name, pv.Name, capacity.String(), request.String())
}

func (s *standIns) kubelet(ctx context.Context) {
	pods, err := s.cp.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: cdiAppSelector})
	if err != nil {
		s.logf("list", "kubelet: cannot list pods: %v", err)
		return
	}
	live := map[types.UID]bool{}
	for i := range pods.Items {
		if pods.Items[i].DeletionTimestamp == nil {
			live[pods.Items[i].UID] = true
		}
	}
	s.reapImporters(live)
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed || len(pod.Spec.Containers) == 0 {
			continue
		}
		// The scheduler places a pod only once its claims are bound, and
		// only then does a kubelet start it; CDI reads the phase of its
		// PVC' and the pod together (datavolume/import-controller.go
		// shouldUpdateStatusPhase), so a pod running on an unbound claim
		// would show CDI a state no cluster produces.
		if claim := s.unboundClaim(ctx, pod); claim != "" {
			s.logf("pod/"+pod.Namespace+"/"+pod.Name, "kubelet: pod %s/%s waits for PVC %s to be bound", pod.Namespace, pod.Name, claim)
			continue
		}
		switch pod.Labels[cdiComponentLabel] {
		case "importer":
			if s.cp.importerNetwork().onNetwork(pod) {
				s.realImporter(ctx, pod)
				continue
			}
			mode, dv := s.importerMode(ctx, pod)
			switch mode {
			case ImporterSucceeded:
				s.terminate(ctx, pod, importCompleteMessage, "for DataVolume "+dv)
			case ImporterChecksumMismatch:
				s.terminate(ctx, pod, checksumMismatchMessage, "with a checksum mismatch, for DataVolume "+dv)
			default:
				s.running(ctx, pod, "for DataVolume "+dv)
			}
		case "cdi-populator-prep":
			s.terminate(ctx, pod, "", "")
		case cdiUploadServerComponent, cdiCloneSourceComponent:
			if s.runsCopy(ctx, pod) {
				s.realImporter(ctx, pod)
			}
		}
	}
}

// unboundClaim returns the first claim of pod that is not Bound, or "".
func (s *standIns) unboundClaim(ctx context.Context, pod *corev1.Pod) string {
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		pvc, err := s.cp.Kube.CoreV1().PersistentVolumeClaims(pod.Namespace).Get(ctx, v.PersistentVolumeClaim.ClaimName, metav1.GetOptions{})
		if err != nil || pvc.Status.Phase != corev1.ClaimBound {
			return v.PersistentVolumeClaim.ClaimName
		}
	}
	return ""
}

// importerMode returns the ImporterAnnotation of the DataVolume the importer
// pod works for, and that DataVolume's namespace/name. The pod's claim is
// the DataVolume's PVC, or, on CDI's populator path, PVC' (prime-<uid>),
// which CDI makes a controlled dependent of the target PVC
// (populators/populator-base.go createPVCPrime); the target PVC is
// controlled by its DataVolume.
func (s *standIns) importerMode(ctx context.Context, pod *corev1.Pod) (mode, dv string) {
	claim := ""
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && (claim == "" || v.Name == cdiDataVolume) {
			claim = v.PersistentVolumeClaim.ClaimName
		}
	}
	if claim == "" {
		return "", "(none)"
	}
	core := s.cp.Kube.CoreV1().PersistentVolumeClaims(pod.Namespace)
	for hops := 0; hops < 2; hops++ {
		pvc, err := core.Get(ctx, claim, metav1.GetOptions{})
		if err != nil {
			return "", "(unknown: " + err.Error() + ")"
		}
		ref := metav1.GetControllerOf(pvc)
		switch {
		case ref == nil:
			return "", "(none)"
		case ref.Kind == "PersistentVolumeClaim":
			claim = ref.Name
			continue
		case ref.Kind == "DataVolume":
			u, err := s.cp.Get(ctx, DataVolume, pod.Namespace, ref.Name)
			if err != nil || u == nil {
				return "", pod.Namespace + "/" + ref.Name + " (unreadable)"
			}
			return u.GetAnnotations()[ImporterAnnotation], pod.Namespace + "/" + ref.Name
		}
		break
	}
	return "", "(none)"
}

// running marks the pod Running, its container started.
func (s *standIns) running(ctx context.Context, pod *corev1.Pod, why string) {
	if pod.Status.Phase == corev1.PodRunning {
		return
	}
	now := metav1.Now()
	pod = pod.DeepCopy()
	pod.Status.Phase = corev1.PodRunning
	pod.Status.StartTime = &now
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now}, {Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: pod.Spec.Containers[0].Name, Image: pod.Spec.Containers[0].Image, Ready: true, Started: ptrTo(true),
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
	}}
	if _, err := s.cp.Kube.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		s.logf("pod/"+pod.Namespace+"/"+pod.Name, "kubelet: cannot mark pod %s/%s Running: %v", pod.Namespace, pod.Name, err)
		return
	}
	s.logf("pod/"+pod.Namespace+"/"+pod.Name, "kubelet: pod %s/%s Running %s", pod.Namespace, pod.Name, why)
}

// terminate marks the pod Succeeded, its container exited 0 with message
// as its termination message.
func (s *standIns) terminate(ctx context.Context, pod *corev1.Pod, message, why string) {
	now := metav1.Now()
	pod = pod.DeepCopy()
	pod.Status.Phase = corev1.PodSucceeded
	if pod.Status.StartTime == nil {
		pod.Status.StartTime = &now
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now}, {Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: now}}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: pod.Spec.Containers[0].Name, Image: pod.Spec.Containers[0].Image, Started: ptrTo(false),
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", Message: message, StartedAt: *pod.Status.StartTime, FinishedAt: now}},
	}}
	if _, err := s.cp.Kube.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		s.logf("pod/"+pod.Namespace+"/"+pod.Name, "kubelet: cannot mark pod %s/%s Succeeded: %v", pod.Namespace, pod.Name, err)
		return
	}
	s.logf("pod/"+pod.Namespace+"/"+pod.Name, "kubelet: pod %s/%s Succeeded %s (termination message %s)", pod.Namespace, pod.Name, why, message)
}

func ptrTo[T any](v T) *T { return &v }
