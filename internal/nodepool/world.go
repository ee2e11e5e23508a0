package nodepool

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	instancetypev1beta1 "kubevirt.io/api/instancetype/v1beta1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; CAPI v1.11 still serves it.

	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/observed"
	"github.com/cozystack/function-worker-image/internal/required"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// Requirement names.
const (
	reqGoldenDataVolume = "golden-datavolume"
	reqGoldenPVC        = "golden-pvc"
	// reqGoldenPV is the PersistentVolume the golden PVC is bound to,
	// asked for by the name the PVC gives (goldenVolumeToRead).
	reqGoldenPV        = "golden-pv"
	reqStorageClasses  = "storageclasses"
	reqWorkerDVs       = "worker-datavolumes"
	reqWorkerPVCs      = "worker-pvcs"
	reqMachineSets     = "machinesets"
	reqCloneBindings   = "clone-rolebindings"
	reqCloneRoles      = "clone-clusterroles"
	reqStorageProfiles = "storageprofiles"
	reqSnapshotClasses = "volumesnapshotclasses"
	reqCDI             = "cdi"
	reqCDIConfig       = "cdiconfig"
	// reqInstancetype (reservations.go) is the pool's instance type.
)

// Template and RBAC identifiers; the Cluster API ones are clusterapi's.
const (
	InfraAPIVersion         = observed.InfraAPIVersion
	KindKubevirtMachineTmpl = observed.KindKubevirtMachineTemplate
	BootstrapAPIVersion     = talosconfig.APIVersion
	KindTalosConfigTemplate = talosconfig.KindTalosConfigTemplate
	rbacAPIVersion          = "rbac.authorization.k8s.io/v1"
	kindRoleBinding         = "RoleBinding"
	kindClusterRole         = "ClusterRole"
)

// selectors are the pool's requirements: narrow, and only what rd says
// this call decides from (reads.go). MachineSets are read on every call:
// they are few (one per template revision) and say which templates are
// still in use. Worker disks are read on both paths, because a pool that
// moved off a golden still has clone disks to account for.
func selectors(p pool, img image, instanceType string, cfg config.Config, rd reads) required.Selectors {
	sel := required.Selectors{
		reqMachineSets: required.ByLabels(clusterapi.APIVersion(cfg.ClusterAPIVersion), clusterapi.KindMachineSet, p.Namespace, map[string]string{clusterapi.LabelDeploymentName: p.DeploymentName()}),
	}
	if rd.Workers {
		// The DataVolumes carry what clone health reads: CDI's clone
		// controllers copy the claim's cloneType onto the DataVolume
		// (pvc-clone-controller.go, snapshot-clone-controller.go at CDI
		// v1.65.0), and the CloneWithoutSource reason is the DataVolume's
		// own condition. Their PVCs are not read.
		sel[reqWorkerDVs] = required.ByLabels(observed.CDIAPIVersion, observed.KindDataVolume, p.Namespace, map[string]string{labels.Pool: p.Hash()})
	}
	if rd.DiskClass && img.Source == SourceClone {
		// The claims of the pool's disks of this golden: the class a
		// finished clone was bound on.
		sel[reqWorkerPVCs] = required.ByLabels(observed.CoreAPIVersion, observed.KindPVC, p.Namespace, map[string]string{labels.Pool: p.Hash(), labels.Golden: labels.GoldenHash(img.GoldenNamespace, img.GoldenName)})
	}
	if instanceType != "" {
		// What the kubelet reservations are computed from.
		sel[reqInstancetype] = required.ByName(instancetypeAPIVersion, instancetypeKind, "", instanceType)
	}
	if img.Source != SourceClone {
		return sel
	}
	if rd.Clone {
		sel[reqGoldenDataVolume] = required.ByName(observed.CDIAPIVersion, observed.KindDataVolume, img.GoldenNamespace, img.GoldenName)
		sel[reqGoldenPVC] = required.ByName(observed.CoreAPIVersion, observed.KindPVC, img.GoldenNamespace, img.GoldenName)
		// The default-class markers are annotations, not labels, so every
		// class is read; there are few of them.
		sel[reqStorageClasses] = required.ByLabels(observed.StorageAPIVersion, observed.KindStorageClass, "", map[string]string{})
		// What CDI's clone planner decides from: few objects, all read.
		everything := map[string]string{}
		sel[reqStorageProfiles] = required.ByLabels(observed.CDIAPIVersion, observed.KindStorageProfile, "", everything)
		if cfg.ReadSnapshotClasses {
			sel[reqSnapshotClasses] = required.ByLabels(observed.SnapshotAPIVersion, observed.KindVolumeSnapshotClass, "", everything)
		}
		sel[reqCDI] = required.ByLabels(observed.CDIAPIVersion, observed.KindCDI, "", everything)
		sel[reqCDIConfig] = required.ByLabels(observed.CDIAPIVersion, observed.KindCDIConfig, "", everything)
	}
	if rd.Grant {
		// The catalogs' clone RBAC, by the label they carry: the
		// RoleBindings of the golden namespace and their ClusterRoles.
		cloneRBAC := map[string]string{labels.CloneRBAC: "true"}
		sel[reqCloneBindings] = required.ByLabels(rbacAPIVersion, kindRoleBinding, img.GoldenNamespace, cloneRBAC)
		sel[reqCloneRoles] = required.ByLabels(rbacAPIVersion, kindClusterRole, "", cloneRBAC)
	}
	return sel
}

// world is the typed view of the required resources.
type world struct {
	GoldenDV  *cdiv1.DataVolume
	GoldenPVC *corev1.PersistentVolumeClaim
	// GoldenPV is the PV the golden PVC is bound to; nil unless the PVC's
	// class does not say its driver (goldenVolumeToRead), or it is missing.
	GoldenPV       *corev1.PersistentVolume
	StorageClasses []storagev1.StorageClass
	// WorkerDVs (metadata and status only; nil unless read) and
	// MachineSets are sorted by name.
	WorkerDVs []cdiv1.DataVolume
	// WorkerPVCs are the claims of the pool's disks of its golden (name,
	// labels and class only); nil unless the class is looked up on them.
	WorkerPVCs  []corev1.PersistentVolumeClaim
	MachineSets []clusterv1.MachineSet
	// CloneBindings and CloneRoles are the catalogs' clone RBAC, sorted by
	// name; nil unless the grant is waited for.
	CloneBindings []rbacv1.RoleBinding
	CloneRoles    []rbacv1.ClusterRole
	// Clone is what the clone pre-flight reads.
	Clone cloneTarget
	// Instancetype is the pool's instance type; nil when it sets resources
	// or the instance type is missing.
	Instancetype *instancetypev1beta1.VirtualMachineClusterInstancetype
	// Unreadable lists objects that could not be converted, sorted. They are
	// reported and otherwise ignored.
	Unreadable []string
}

// readWorld converts what Crossplane fetched into typed objects. Objects
// outside the wanted namespace or name are ignored: a required resource's
// namespace is not honoured by every caller (crossplane render ignores it).
// What rd did not ask for is ignored too, so that a call decides from what
// it asked for and nothing else.
func readWorld(p pool, img image, instanceType string, got required.Resolved, raw required.Raw, capi v1beta1.ClusterAPIVersion, rd reads) world {
	w := world{}
	got = asked(got, rd)
	cdiName := ""
	bad := func(err error) { w.Unreadable = append(w.Unreadable, err.Error()) }

	for _, u := range got[reqGoldenDataVolume] {
		if !is(u, img.GoldenNamespace, img.GoldenName) {
			continue
		}
		if dv, err := observed.DataVolume(u); err != nil {
			bad(err)
		} else {
			w.GoldenDV = dv
		}
	}
	for _, u := range got[reqGoldenPVC] {
		if !is(u, img.GoldenNamespace, img.GoldenName) {
			continue
		}
		if pvc, err := observed.PVC(u); err != nil {
			bad(err)
		} else {
			w.GoldenPVC = pvc
		}
	}
	for _, u := range got[reqStorageClasses] {
		if sc, err := observed.StorageClass(u); err != nil {
			bad(err)
		} else {
			w.StorageClasses = append(w.StorageClasses, *sc)
		}
	}
	if pv := goldenVolumeToRead(w.GoldenPVC, w.StorageClasses); pv != "" {
		for _, u := range got[reqGoldenPV] {
			if !is(u, "", pv) {
				continue
			}
			if v, err := observed.PV(u); err != nil {
				bad(err)
			} else {
				w.GoldenPV = v
			}
		}
	}
	if rd.Workers {
		for _, s := range raw[reqWorkerDVs] {
			// Identity, labels, CDI's cloneType and the status: what clone
			// health reads, and nothing else of ~6 KB.
			dv, err := observed.WorkerDataVolume(s, labels.AnnCDICloneType)
			switch {
			case err != nil:
				bad(err)
			case dv.Namespace == p.Namespace && dv.Labels[labels.Pool] == p.Hash():
				w.WorkerDVs = append(w.WorkerDVs, dv)
			}
		}
	}
	if rd.DiskClass {
		for _, s := range raw[reqWorkerPVCs] {
			pvc, err := observed.WorkerPVC(s)
			switch {
			case err != nil:
				bad(err)
			case pvc.Namespace == p.Namespace && pvc.Labels[labels.Pool] == p.Hash():
				w.WorkerPVCs = append(w.WorkerPVCs, pvc)
			}
		}
	}
	for _, u := range got[reqMachineSets] {
		if u.GetNamespace() != p.Namespace || u.GetLabels()[clusterapi.LabelDeploymentName] != p.DeploymentName() {
			continue
		}
		ms, err := templates.ReadMachineSet(u, capi)
		if err != nil {
			bad(err)
		} else {
			w.MachineSets = append(w.MachineSets, ms)
		}
	}
	for _, u := range got[reqInstancetype] {
		it := instancetypev1beta1.VirtualMachineClusterInstancetype{}
		if u.GetName() != instanceType {
			continue
		}
		if err := observed.Into(u, instancetypeAPIVersion, instancetypeKind, &it); err != nil {
			bad(err)
		} else {
			w.Instancetype = &it
		}
	}
	for _, u := range got[reqCloneBindings] {
		if u.GetNamespace() != img.GoldenNamespace {
			continue
		}
		rb := rbacv1.RoleBinding{}
		if err := observed.Into(u, rbacAPIVersion, kindRoleBinding, &rb); err != nil {
			bad(err)
		} else {
			w.CloneBindings = append(w.CloneBindings, rb)
		}
	}
	for _, u := range got[reqCloneRoles] {
		cr := rbacv1.ClusterRole{}
		if err := observed.Into(u, rbacAPIVersion, kindClusterRole, &cr); err != nil {
			bad(err)
		} else {
			w.CloneRoles = append(w.CloneRoles, cr)
		}
	}
	for _, u := range got[reqStorageProfiles] {
		if sp, err := observed.StorageProfile(u); err != nil {
			bad(err)
		} else {
			w.Clone.Profiles = append(w.Clone.Profiles, *sp)
		}
	}
	for _, u := range got[reqSnapshotClasses] {
		if vsc, err := observed.VolumeSnapshotClass(u); err != nil {
			bad(err)
		} else {
			w.Clone.SnapshotClasses = append(w.Clone.SnapshotClasses, vsc)
		}
	}
	for _, u := range got[reqCDI] {
		// One CDI resource runs a cluster; should there be more, the first
		// by name decides, whatever order they came in.
		if c, err := observed.CDI(u); err != nil {
			bad(err)
		} else if cdiName == "" || c.Name < cdiName {
			w.Clone.Override, cdiName = c.Spec.CloneStrategyOverride, c.Name
		}
	}
	for _, u := range got[reqCDIConfig] {
		if c, err := observed.CDIConfig(u); err != nil {
			bad(err)
		} else if c.Status.FilesystemOverhead != nil {
			w.Clone.Overhead = c.Status.FilesystemOverhead
		}
	}
	sort.Slice(w.Clone.Profiles, func(i, j int) bool { return w.Clone.Profiles[i].Name < w.Clone.Profiles[j].Name })
	sort.Slice(w.Clone.SnapshotClasses, func(i, j int) bool { return w.Clone.SnapshotClasses[i].Name < w.Clone.SnapshotClasses[j].Name })
	sort.Slice(w.CloneBindings, func(i, j int) bool { return w.CloneBindings[i].Name < w.CloneBindings[j].Name })
	sort.Slice(w.CloneRoles, func(i, j int) bool { return w.CloneRoles[i].Name < w.CloneRoles[j].Name })
	sort.Slice(w.StorageClasses, func(i, j int) bool { return w.StorageClasses[i].Name < w.StorageClasses[j].Name })
	sort.Slice(w.WorkerDVs, func(i, j int) bool { return w.WorkerDVs[i].Name < w.WorkerDVs[j].Name })
	sort.Slice(w.WorkerPVCs, func(i, j int) bool { return w.WorkerPVCs[i].Name < w.WorkerPVCs[j].Name })
	sort.Slice(w.MachineSets, func(i, j int) bool { return w.MachineSets[i].Name < w.MachineSets[j].Name })
	sort.Strings(w.Unreadable)
	return w
}

// goldenVolumeToRead is the name of the PersistentVolume the golden PVC is
// bound to, when the pre-flight needs it; empty when not. CDI takes a
// claim's CSI driver from its bound PV first and from its StorageClass's
// provisioner only when the PV says none (clone/common.go GetCommonDriver,
// GetDriverFromVolume, CDI v1.65.0). A dynamically provisioned claim's PV
// has its class's provisioner as driver, so a claim whose class exists says
// its driver without the PV; only a claim with no class, or one whose class
// is gone (a statically bound golden, say), needs its PV read. The PV is
// asked for by spec.volumeName, which only the golden PVC gives: a chained
// requirement (call.ChainedRequirements), one more call when it is needed.
func goldenVolumeToRead(pvc *corev1.PersistentVolumeClaim, classes []storagev1.StorageClass) string {
	if pvc == nil || pvc.Spec.VolumeName == "" {
		return ""
	}
	if sc := pvc.Spec.StorageClassName; sc != nil && *sc != "" && findClass(classes, *sc) != nil {
		return ""
	}
	return pvc.Spec.VolumeName
}

func is(u *unstructured.Unstructured, namespace, name string) bool {
	return u.GetName() == name && u.GetNamespace() == namespace
}

// asked is got without the requirements rd does not ask for.
func asked(got required.Resolved, rd reads) required.Resolved {
	out := make(required.Resolved, len(got))
	for n, us := range got {
		out[n] = us
	}
	if !rd.Clone {
		for _, n := range []string{reqGoldenDataVolume, reqGoldenPVC, reqGoldenPV, reqStorageClasses, reqStorageProfiles, reqSnapshotClasses, reqCDI, reqCDIConfig} {
			delete(out, n)
		}
	}
	if !rd.Grant {
		delete(out, reqCloneBindings)
		delete(out, reqCloneRoles)
	}
	return out
}
