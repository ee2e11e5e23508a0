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

	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/cloneplan"
	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/goldensnapshot"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/observed"
	"github.com/cozystack/function-worker-image/internal/required"
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

// World is the typed view of the required resources.
type World struct {
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

// ReadWorld converts what Crossplane fetched into typed objects, ignoring
// other namespaces and names (crossplane render ignores a requirement's
// namespace) and what rd did not ask for.
func ReadWorld(p pool.Pool, img pool.Image, instanceType string, got required.Resolved, raw required.Raw, capi v1beta1.ClusterAPIVersion, rd Reads) World {
	w := World{}
	got = asked(got, rd)
	// Sized once: a StorageClass is ~1 KB as a Go value, and appending
	// every class to a growing slice copied them all several times.
	if n := len(got[ReqStorageClasses]); n > 0 {
		w.StorageClasses = make([]storagev1.StorageClass, 0, n)
	}
	if n := len(got[ReqStorageCapacities]); n > 0 {
		w.StorageCapacities = make([]storagev1.CSIStorageCapacity, 0, n)
	}
	if n := len(got[ReqMachineSets]); n > 0 {
		w.MachineSets = make([]clusterv1.MachineSet, 0, n)
	}
	cdiName := ""
	golden := func(u *unstructured.Unstructured) bool { return Is(u, img.GoldenNamespace, img.GoldenName) }
	// Each requirement: which of its objects are the ones asked for (nil:
	// all), and where a readable one goes.
	readers := []struct {
		name   string
		wanted func(*unstructured.Unstructured) bool
		read   func(*unstructured.Unstructured) error
	}{
		{ReqGoldenDataVolume, golden, into(observed.DataVolume, func(dv *cdiv1.DataVolume) { w.GoldenDV = dv })},
		{ReqGoldenPVC, golden, into(observed.PVC, func(pvc *corev1.PersistentVolumeClaim) { w.GoldenPVC = pvc })},
		{ReqStorageClasses, nil, into(observed.StorageClass, func(sc *storagev1.StorageClass) { w.StorageClasses = append(w.StorageClasses, *sc) })},
		{ReqStorageCapacities, nil, into(typed[storagev1.CSIStorageCapacity](observed.StorageAPIVersion, pool.KindCSIStorageCapacity), func(c *storagev1.CSIStorageCapacity) {
			w.StorageCapacities = append(w.StorageCapacities, *c)
		})},
		{
			ReqMachineSets,
			func(u *unstructured.Unstructured) bool {
				return u.GetNamespace() == p.Namespace && u.GetLabels()[clusterapi.LabelDeploymentName] == p.DeploymentName()
			},
			into(func(u *unstructured.Unstructured) (clusterv1.MachineSet, error) {
				return Templates.ReadMachineSet(u, capi)
			},
				func(ms clusterv1.MachineSet) { w.MachineSets = append(w.MachineSets, ms) }),
		},
		{
			ReqInstancetype,
			func(u *unstructured.Unstructured) bool { return u.GetName() == instanceType },
			into(typed[instancetypev1beta1.VirtualMachineClusterInstancetype](InstancetypeAPIVersion, pool.InstancetypeKind),
				func(it *instancetypev1beta1.VirtualMachineClusterInstancetype) { w.Instancetype = it }),
		},
		{
			ReqCloneBindings,
			func(u *unstructured.Unstructured) bool { return u.GetNamespace() == img.GoldenNamespace },
			into(typed[rbacv1.RoleBinding](pool.RbacAPIVersion, pool.KindRoleBinding), func(rb *rbacv1.RoleBinding) { w.CloneBindings = append(w.CloneBindings, *rb) }),
		},
		{ReqCloneRoles, nil, into(typed[rbacv1.ClusterRole](pool.RbacAPIVersion, pool.KindClusterRole), func(cr *rbacv1.ClusterRole) { w.CloneRoles = append(w.CloneRoles, *cr) })},
		{ReqStorageProfiles, nil, into(observed.StorageProfile, func(sp *cdiv1.StorageProfile) { w.Clone.Profiles = append(w.Clone.Profiles, *sp) })},
		{ReqSnapshotClasses, nil, into(observed.VolumeSnapshotClass, func(vsc cloneplan.VolumeSnapshotClass) {
			w.Clone.SnapshotClasses = append(w.Clone.SnapshotClasses, vsc)
		})},
		{ReqCDI, nil, into(observed.CDI, func(c *cdiv1.CDI) {
			// One CDI resource runs a cluster; should there be more, the
			// first by name decides, whatever order they came in.
			if cdiName == "" || c.Name < cdiName {
				w.Clone.Override, cdiName = c.Spec.CloneStrategyOverride, c.Name
			}
		})},
		{ReqCDIConfig, nil, into(observed.CDIConfig, func(c *cdiv1.CDIConfig) {
			if c.Status.FilesystemOverhead != nil {
				w.Clone.Overhead = c.Status.FilesystemOverhead
			}
		})},
		{ReqGoldenSnapshot, golden, into(typed[snapshotv1.VolumeSnapshot](goldensnapshot.APIVersion, goldensnapshot.Kind), func(vs *snapshotv1.VolumeSnapshot) { w.GoldenSnapshot = vs })},
		// Read after the golden's snapshot, which names it (chained).
		{
			ReqGoldenSnapshotContent,
			func(u *unstructured.Unstructured) bool {
				name := goldensnapshot.StateOf(w.GoldenSnapshot).Content
				return name != "" && Is(u, "", name)
			},
			into(typed[snapshotv1.VolumeSnapshotContent](goldensnapshot.APIVersion, goldensnapshot.ContentKind), func(c *snapshotv1.VolumeSnapshotContent) { w.GoldenSnapshotContent = c }),
		},
		// Read after the golden PVC and the classes, which say whether it
		// is needed at all (a chained requirement).
		{
			ReqGoldenPV,
			func(u *unstructured.Unstructured) bool {
				pv := GoldenVolumeToRead(w.GoldenPVC, w.StorageClasses)
				return pv != "" && Is(u, "", pv)
			},
			into(observed.PV, func(v *corev1.PersistentVolume) { w.GoldenPV = v }),
		},
	}
	for _, r := range readers {
		for _, u := range got[r.name] {
			if r.wanted != nil && !r.wanted(u) {
				continue
			}
			if err := r.read(u); err != nil {
				w.Unreadable = append(w.Unreadable, err.Error())
			}
		}
	}
	// The pool's hash is a digest of its identity: computed once, not per
	// object read.
	poolHash := p.Hash()
	if rd.Workers {
		if n := len(raw[ReqWorkerDVs]); n > 0 {
			w.WorkerDVs = make([]cdiv1.DataVolume, 0, n)
		}
		for _, s := range raw[ReqWorkerDVs] {
			// Identity, labels, the annotations clone health reads and the
			// status, and nothing else of ~6 KB.
			dv, err := observed.WorkerDataVolume(s, WorkerDVAnnotations...)
			switch {
			case err != nil:
				w.Unreadable = append(w.Unreadable, err.Error())
			case dv.Namespace == p.Namespace && dv.Labels[labels.Pool] == poolHash:
				w.WorkerDVs = append(w.WorkerDVs, dv)
			}
		}
	}
	if rd.DiskClass {
		for _, s := range raw[ReqWorkerPVCs] {
			pvc, err := observed.WorkerPVC(s)
			switch {
			case err != nil:
				w.Unreadable = append(w.Unreadable, err.Error())
			case pvc.Namespace == p.Namespace && pvc.Labels[labels.Pool] == poolHash:
				w.WorkerPVCs = append(w.WorkerPVCs, pvc)
			}
		}
	}
	if rd.Budget {
		for _, s := range raw[ReqCloneClaims] {
			pvc, err := observed.CloneClaim(s)
			switch {
			case err != nil:
				w.Unreadable = append(w.Unreadable, err.Error())
			case IsCloneClaim(pvc, img.GoldenNamespace, poolHash):
				w.CloneClaims = append(w.CloneClaims, pvc)
			}
		}
	}
	// The KubeVirt CRs, read together: the first by namespace and name
	// decides (readKubeVirt).
	var kvUnreadable []string
	w.KubeVirt, kvUnreadable = ReadKubeVirt(got[ReqKubeVirt])
	w.Unreadable = append(w.Unreadable, kvUnreadable...)
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
	return w
}

// into reads an object with read and hands a readable one to keep.
func into[T any](read func(*unstructured.Unstructured) (T, error), keep func(T)) func(*unstructured.Unstructured) error {
	return func(u *unstructured.Unstructured) error {
		v, err := read(u)
		if err != nil {
			return err
		}
		keep(v)
		return nil
	}
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
