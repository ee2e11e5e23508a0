package read

import (
	"cmp"
	"slices"
	"sort"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	instancetypev1beta1 "kubevirt.io/api/instancetype/v1beta1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; CAPI v1.11 still serves it.

	"github.com/cozystack/function-worker-image/internal/cloneplan"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/observed"
)

// IsCloneClaim reports a claim CDI made in the golden's namespace for a
// clone of another pool's disk: it carries the target's labels, so a pool
// label, and is not the golden's own claim.
func IsCloneClaim(pvc corev1.PersistentVolumeClaim, goldenNamespace, poolHash string) bool {
	owner := pvc.Labels[labels.Pool]
	return pvc.Namespace == goldenNamespace && owner != "" && owner != poolHash
}

// CloneTarget is what the pre-flight reads of the cluster: the classes, CDI's
// StorageProfiles of them, the VolumeSnapshotClasses, the CDI resource's
// clone strategy override and CDIConfig's filesystem overhead.
type CloneTarget struct {
	Profiles        []cdiv1.StorageProfile
	SnapshotClasses []cloneplan.VolumeSnapshotClass
	Override        *cdiv1.CDICloneStrategy
	Overhead        *cdiv1.FilesystemOverhead
}

func FindClass(classes []storagev1.StorageClass, name string) *storagev1.StorageClass {
	for i := range classes {
		if classes[i].Name == name {
			return &classes[i]
		}
	}
	return nil
}

// FindProfile is CDI's StorageProfile of a class: it has the class's name.
func FindProfile(profiles []cdiv1.StorageProfile, class string) *cdiv1.StorageProfile {
	for i := range profiles {
		if profiles[i].Name == class {
			return &profiles[i]
		}
	}
	return nil
}

// Required is the typed view of the required resources.
type Required struct {
	GoldenDV  *cdiv1.DataVolume
	GoldenPVC *corev1.PersistentVolumeClaim
	// GoldenPV is the golden PVC's PV; nil unless read (goldenVolumeToRead).
	GoldenPV       *corev1.PersistentVolume
	StorageClasses []storagev1.StorageClass
	// WorkerDVs (metadata and status only; nil unless read) and
	// MachineSets are sorted by name.
	WorkerDVs []cdiv1.DataVolume
	// WorkerPVCs are the claims of the pool's disks of its golden (name,
	// labels and class only); nil unless the class is looked up on them.
	WorkerPVCs []corev1.PersistentVolumeClaim
	// CloneClaims are the claims CDI runs other pools' clones of the
	// golden through (name, labels, class, timestamps and phase only:
	// observed.CloneClaim); nil unless read.
	CloneClaims []corev1.PersistentVolumeClaim
	// StorageCapacities are the CSIStorageCapacity objects; nil unless read.
	StorageCapacities []storagev1.CSIStorageCapacity
	MachineSets       []clusterv1.MachineSet
	// CloneBindings and CloneRoles are the catalogs' clone RBAC, sorted by
	// name; nil unless the grant is waited for.
	CloneBindings []rbacv1.RoleBinding
	CloneRoles    []rbacv1.ClusterRole
	// Clone is what the clone pre-flight reads.
	Clone CloneTarget
	// GoldenSnapshot is the golden's VolumeSnapshot and GoldenSnapshotContent
	// the content it is bound to; nil unless read (decide/snapshot.go).
	GoldenSnapshot        *snapshotv1.VolumeSnapshot
	GoldenSnapshotContent *snapshotv1.VolumeSnapshotContent
	// KubeVirt is what the MultiArchitecture gate reads of the KubeVirt CR;
	// zero unless read (decide/multiarch.go).
	KubeVirt KubeVirtGate
	// Instancetype is nil when the pool sets resources or it is missing.
	Instancetype *instancetypev1beta1.VirtualMachineClusterInstancetype
	// Unreadable lists, sorted, the objects that could not be converted.
	Unreadable []string
}

// sort puts the lists in name order, which Crossplane lists them in
// already, and the unreadable objects in order.
func (w *Required) sort() {
	sortByName(w.CloneClaims)
	slices.SortStableFunc(w.StorageCapacities, func(a, b storagev1.CSIStorageCapacity) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	sortByName(w.Clone.Profiles)
	slices.SortFunc(w.Clone.SnapshotClasses, func(a, b cloneplan.VolumeSnapshotClass) int { return cmp.Compare(a.Name, b.Name) })
	sortByName(w.CloneBindings)
	sortByName(w.CloneRoles)
	sortByName(w.StorageClasses)
	sortByName(w.WorkerDVs)
	sortByName(w.WorkerPVCs)
	sortByName(w.MachineSets)
	slices.Sort(w.Unreadable)
}

// typed reads an object of the given apiVersion and kind into a T.
func typed[T any, PT interface {
	*T
	runtime.Object
}](apiVersion, kind string) func(*unstructured.Unstructured) (*T, error) {
	return func(u *unstructured.Unstructured) (*T, error) {
		v := PT(new(T))
		if err := observed.Into(u, apiVersion, kind, v); err != nil {
			return nil, err
		}
		return v, nil
	}
}

// sortByName sorts objects by name, keeping the order of equal names. The
// objects are compared where they are: a comparison of values copied each
// object (a DataVolume is over a kilobyte) to the heap, twice per
// comparison. Crossplane lists them in name order already, which one pass
// tells.
func sortByName[T any, PT interface {
	*T
	GetName() string
}](objs []T) {
	name := func(i int) string { return PT(&objs[i]).GetName() }
	for i := 1; i < len(objs); i++ {
		if name(i-1) > name(i) {
			sort.SliceStable(objs, func(i, j int) bool { return name(i) < name(j) })
			return
		}
	}
}

// GoldenVolumeToRead names the golden PVC's bound PV when the pre-flight
// needs it. CDI takes a claim's CSI driver from its PV, else its class's
// provisioner (CDI v1.65.0 clone/common.go GetCommonDriver,
// GetDriverFromVolume); a provisioned PV's driver is its class's, so only a
// claim with no class or a deleted one (a statically bound golden) needs its
// PV, asked by spec.volumeName in a chained requirement.
func GoldenVolumeToRead(pvc *corev1.PersistentVolumeClaim, classes []storagev1.StorageClass) string {
	if pvc == nil || pvc.Spec.VolumeName == "" {
		return ""
	}
	if sc := pvc.Spec.StorageClassName; sc != nil && *sc != "" && FindClass(classes, *sc) != nil {
		return ""
	}
	return pvc.Spec.VolumeName
}

func Is(u *unstructured.Unstructured, namespace, name string) bool {
	return u.GetName() == name && u.GetNamespace() == namespace
}
