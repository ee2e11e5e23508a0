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
	return cp.ApplyAs(ctx, StorageAdminManager, MustObject(fmt.Sprintf(`
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata:
  name: %s
spec:
  attachRequired: false
  podInfoOnMount: false
  volumeLifecycleModes: [Persistent]
`, CSIDriverName)), StorageClassObject(DefaultStorageClass, true, true))
}

// StorageClassObject returns a StorageClass of the suite's CSI driver with
// Immediate binding, marked default when def, allowing volume expansion
// when expand.
func StorageClassObject(name string, def, expand bool) *unstructured.Unstructured {
	sc := MustObject(fmt.Sprintf(`
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: %s
provisioner: %s
reclaimPolicy: Delete
volumeBindingMode: Immediate
allowVolumeExpansion: %t
`, name, CSIDriverName, expand))
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
	deadline := time.Now().Add(timeout)
	var last error
	for {
		last = cp.configureStorageProfile(ctx, class, cloneStrategy)
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

func (cp *ControlPlane) configureStorageProfile(ctx context.Context, class, cloneStrategy string) error {
	sp, err := cp.Get(ctx, StorageProfileKind, "", class)
	if err != nil {
		return err
	}
	if sp == nil {
		return fmt.Errorf("cdi-controller has not created StorageProfile %s yet", class)
	}
	spec := MustObject(fmt.Sprintf(`
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
	if err := cp.ApplyAs(ctx, StorageAdminManager, spec); err != nil {
		return err
	}
	if sp, err = cp.Existing(ctx, StorageProfileKind, "", class); err != nil {
		return err
	}
	got, _, _ := unstructured.NestedString(sp.Object, "status", "cloneStrategy")
	sets, _, _ := unstructured.NestedSlice(sp.Object, "status", "claimPropertySets")
	if got != cloneStrategy || len(sets) != 1 {
		return fmt.Errorf("StorageProfile %s status is %v; waiting for CDI to take the spec", class, sp.Object["status"])
	}
	return nil
}
