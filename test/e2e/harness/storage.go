package harness

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// CSIDriverName is the CSI driver of every StorageClass the suite creates:
// the name the provisioner stand-in (standins.go) answers to, and of the
// CSIDriver object that makes CDI take its populator paths. CDI uses its
// import and clone populators only for a class whose provisioner has a
// CSIDriver object (pkg/controller/datavolume/controller-base.go
// shouldUseCDIPopulator, datavolume/util.go storageClassCSIDriverExists);
// without one a clone falls back to a host-assisted copy with reason
// NoPopulator. The name is the suite's own, in no table of CDI's
// (pkg/storagecapabilities): CDI then detects nothing for the class, and
// the suite sets the StorageProfile's spec as a cluster admin does.
const CSIDriverName = "csi.e2e.workerimage.cozystack.io"

// DefaultStorageClass is the StorageClass the suite marks as the cluster
// default. It allows volume expansion and its StorageProfile says
// csi-clone, so CDI clones a 6Gi golden into a 20Gi worker disk by a CSI
// clone and a resize (pkg/controller/clone/planner.go
// validateAdvancedClonePVC), the path the function expects of a class it
// does not hold.
const DefaultStorageClass = "e2e-replicated"

// StorageAdminManager is the field manager of what the suite writes as a
// cluster's storage admin: StorageClasses and StorageProfile specs.
const StorageAdminManager = "e2e-storage-admin"

// InstallStorage creates the CSIDriver object of CSIDriverName and the
// default StorageClass. ConfigureStorageProfile must follow once CDI runs.
func (cp *ControlPlane) InstallStorage(ctx context.Context) error {
	return cp.ApplyAs(ctx, StorageAdminManager, csiDriverObject(CSIDriverName), StorageClassObject(DefaultStorageClass, true, true))
}

// csiDriverObject returns the CSIDriver object of a driver of the
// stand-ins: no attach (the kubelet stand-in mounts nothing), persistent
// volumes only.
func csiDriverObject(driver string) *unstructured.Unstructured {
	return MustObject(fmt.Sprintf(`
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata:
  name: %s
spec:
  attachRequired: false
  podInfoOnMount: false
  volumeLifecycleModes: [Persistent]
`, driver))
}

// StorageClassObject returns a StorageClass of the suite's CSI driver with
// Immediate binding, marked default when def, allowing volume expansion
// when expand.
func StorageClassObject(name string, def, expand bool) *unstructured.Unstructured {
	return storageClassOf(name, CSIDriverName, def, expand)
}

// storageClassOf returns a StorageClass of provisioner with Immediate
// binding and reclaim policy Delete.
func storageClassOf(name, provisioner string, def, expand bool) *unstructured.Unstructured {
	sc := MustObject(fmt.Sprintf(`
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: %s
provisioner: %s
reclaimPolicy: Delete
volumeBindingMode: Immediate
allowVolumeExpansion: %t
`, name, provisioner, expand))
	if def {
		sc.SetAnnotations(map[string]string{"storageclass.kubernetes.io/is-default-class": "true"})
	}
	return sc
}

// ConfigureStorageProfile waits until CDI's StorageProfile controller has
// created the profile of class (storageprofile-controller.go
// reconcileStorageProfile creates one per StorageClass), then sets its
// spec as a storage admin does for a driver CDI knows nothing about: one
// claim property set (ReadWriteOnce, Filesystem: without one a DataVolume
// that names no access mode gets ErrClaimNotValid "no accessMode specified
// in StorageProfile", datavolume/util.go getDefaultVolumeAndAccessMode) and
// cloneStrategy (without it CDI computes snapshot, then copy for want of a
// VolumeSnapshotClass: reconcileCloneStrategy). It waits until CDI has
// copied both into the profile's status, which is CDI's to write.
func (cp *ControlPlane) ConfigureStorageProfile(ctx context.Context, p interface{ Exited() (bool, error) }, class, cloneStrategy string, timeout time.Duration) error {
	return cp.configureStorageProfileUntil(ctx, p, class, timeout, storageProfileSpec(class, cloneStrategy), func(status map[string]any) error {
		if got, _ := status["cloneStrategy"].(string); got != cloneStrategy {
			return fmt.Errorf("status.cloneStrategy %q, want %q", got, cloneStrategy)
		}
		return nil
	})
}

// storageProfileSpec is the StorageProfile spec ConfigureStorageProfile
// applies.
func storageProfileSpec(class, cloneStrategy string) *unstructured.Unstructured {
	return MustObject(fmt.Sprintf(`
apiVersion: cdi.kubevirt.io/v1beta1
kind: StorageProfile
metadata:
  name: %s
spec:
  cloneStrategy: %s
  claimPropertySets:
  - accessModes: [ReadWriteOnce]
    volumeMode: Filesystem
`, class, cloneStrategy))
}

// configureStorageProfileUntil applies spec to the StorageProfile of class
// as the storage admin once cdi-controller (p) has created it, until CDI
// has copied the claim property set into the profile's status and
// statusOK accepts the rest of it.
func (cp *ControlPlane) configureStorageProfileUntil(ctx context.Context, p interface{ Exited() (bool, error) }, class string, timeout time.Duration, spec *unstructured.Unstructured, statusOK func(map[string]any) error) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		last = cp.configureStorageProfile(ctx, class, spec, statusOK)
		if last == nil {
			return nil
		}
		if exited, _ := p.Exited(); exited {
			return fmt.Errorf("cdi-controller exited while waiting for StorageProfile %s: %w", class, last)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("StorageProfile %s not configured within %s: %w", class, timeout, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (cp *ControlPlane) configureStorageProfile(ctx context.Context, class string, spec *unstructured.Unstructured, statusOK func(map[string]any) error) error {
	sp, err := cp.Get(ctx, StorageProfileKind, "", class)
	if err != nil {
		return err
	}
	if sp == nil {
		return fmt.Errorf("cdi-controller has not created StorageProfile %s yet", class)
	}
	if err := cp.ApplyAs(ctx, StorageAdminManager, spec); err != nil {
		return err
	}
	if sp, err = cp.Existing(ctx, StorageProfileKind, "", class); err != nil {
		return err
	}
	status, _, _ := unstructured.NestedMap(sp.Object, "status")
	sets, _, _ := unstructured.NestedSlice(sp.Object, "status", "claimPropertySets")
	if len(sets) != 1 {
		return fmt.Errorf("StorageProfile %s status is %v; waiting for CDI to take the spec's claim property set", class, status)
	}
	if err := statusOK(status); err != nil {
		return fmt.Errorf("StorageProfile %s status is %v; waiting for CDI to take the spec: %w", class, status, err)
	}
	return nil
}

// The snapshot driver: a second CSI driver of the stand-ins, for the
// scenarios that take and restore VolumeSnapshots. It has a
// VolumeSnapshotClass, CSIDriverName has none: the scenarios that rely on
// CDI finding no snapshot class for the default class (the clone
// pre-flight's NoVolumeSnapshotClass, a host-assisted copy's fallback
// reason) are unaffected by it. The provisioner stand-in serves both drivers
// with the same rules; only this one also plays csi-snapshotter
// (snapshotter.go).
const (
	// SnapshotCSIDriverName is the snapshot driver's name: its CSIDriver
	// object (CDI takes its populator paths only for a provisioner with one,
	// datavolume/controller-base.go shouldUseCDIPopulator), the
	// provisioner of SnapshotStorageClass and the driver of
	// SnapshotClassName.
	SnapshotCSIDriverName = "snapshot.csi.e2e.workerimage.cozystack.io"
	// SnapshotStorageClass is the snapshot driver's StorageClass: Immediate
	// binding, volume expansion allowed, not the default. Its
	// StorageProfile says cloneStrategy snapshot and
	// dataImportCronSourceFormat snapshot.
	SnapshotStorageClass = "e2e-snapshot"
	// SnapshotClassName is the snapshot driver's VolumeSnapshotClass,
	// deletionPolicy Delete, marked the driver's default (CDI picks the
	// default class of the driver when several match:
	// pkg/controller/common/util.go GetSnapshotClassForSmartClone).
	SnapshotClassName = "e2e-snapshot"
	// annDefaultSnapshotClass marks a default VolumeSnapshotClass
	// (external-snapshotter pkg/utils/util.go
	// IsDefaultSnapshotClassAnnotation; CDI's AnnDefaultSnapshotClass).
	annDefaultSnapshotClass = "snapshot.storage.kubernetes.io/is-default-class"
)

// InstallSnapshotStorage installs, as a cluster's storage admin does, the
// snapshot driver's CSIDriver object, its VolumeSnapshotClass
// (SnapshotClassName) and its StorageClass (SnapshotStorageClass), in that
// order, so that cdi-controller finds the snapshot class on its first
// reconcile of the new class's StorageProfile. It then sets that profile's
// spec (the claim property set ConfigureStorageProfile sets, cloneStrategy
// snapshot and dataImportCronSourceFormat snapshot) and waits until
// cdi-controller (p) has reconciled it: status.snapshotClass names
// SnapshotClassName (storageprofile-controller.go reconcileStorageProfile,
// from GetSnapshotClassForSmartClone: a class of the class's provisioner),
// and status.cloneStrategy and status.dataImportCronSourceFormat say
// snapshot (reconcileCloneStrategy and reconcileDataImportCronSourceFormat
// return the spec's value). Idempotent: every scenario that needs it calls
// it; the objects stay for the rest of the run.
func (cp *ControlPlane) InstallSnapshotStorage(ctx context.Context, p interface{ Exited() (bool, error) }, timeout time.Duration) error {
	vsc := MustObject(fmt.Sprintf(`
apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshotClass
metadata:
  name: %s
  annotations:
    %s: "true"
driver: %s
deletionPolicy: Delete
`, SnapshotClassName, annDefaultSnapshotClass, SnapshotCSIDriverName))
	if err := cp.ApplyAs(ctx, StorageAdminManager, csiDriverObject(SnapshotCSIDriverName), vsc, storageClassOf(SnapshotStorageClass, SnapshotCSIDriverName, false, true)); err != nil {
		return err
	}
	spec := storageProfileSpec(SnapshotStorageClass, "snapshot")
	_ = unstructured.SetNestedField(spec.Object, "snapshot", "spec", "dataImportCronSourceFormat")
	return cp.configureStorageProfileUntil(ctx, p, SnapshotStorageClass, timeout, spec, func(status map[string]any) error {
		for field, want := range map[string]string{"snapshotClass": SnapshotClassName, "cloneStrategy": "snapshot", "dataImportCronSourceFormat": "snapshot", "provisioner": SnapshotCSIDriverName} {
			if got, _ := status[field].(string); got != want {
				return fmt.Errorf("status.%s %q, want %q", field, got, want)
			}
		}
		return nil
	})
}

// InstallSnapshotDriverClass installs a StorageClass name of the snapshot
// driver (Immediate binding, volume expansion allowed, not the default) and
// sets its StorageProfile as a storage admin does: the claim property set,
// cloneStrategy csi-clone (the provisioner stand-in clones PVCs of either
// driver) and dataImportCronSourceFormat format, then waits until
// cdi-controller (p) reports both in the profile's status. Called again
// with another format it flips the profile of a class in use, which is how
// a cluster comes to prefer snapshot sources under running pools. It needs
// InstallSnapshotStorage's CSIDriver and VolumeSnapshotClass: without a
// VolumeSnapshotClass CDI reports pvc whatever the spec says
// (storageprofile-controller.go reconcileDataImportCronSourceFormat).
func (cp *ControlPlane) InstallSnapshotDriverClass(ctx context.Context, p interface{ Exited() (bool, error) }, name, format string, timeout time.Duration) error {
	if err := cp.ApplyAs(ctx, StorageAdminManager, storageClassOf(name, SnapshotCSIDriverName, false, true)); err != nil {
		return err
	}
	spec := storageProfileSpec(name, "csi-clone")
	_ = unstructured.SetNestedField(spec.Object, format, "spec", "dataImportCronSourceFormat")
	return cp.configureStorageProfileUntil(ctx, p, name, timeout, spec, func(status map[string]any) error {
		for field, want := range map[string]string{"cloneStrategy": "csi-clone", "dataImportCronSourceFormat": format, "provisioner": SnapshotCSIDriverName} {
			if got, _ := status[field].(string); got != want {
				return fmt.Errorf("status.%s %q, want %q", field, got, want)
			}
		}
		return nil
	})
}
