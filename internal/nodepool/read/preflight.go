package read

import (
	storagev1 "k8s.io/api/storage/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/internal/cloneplan"
)

// cloneTarget is what the pre-flight reads of the cluster: the classes, CDI's
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

// findProfile is CDI's StorageProfile of a class: it has the class's name.
func FindProfile(profiles []cdiv1.StorageProfile, class string) *cdiv1.StorageProfile {
	for i := range profiles {
		if profiles[i].Name == class {
			return &profiles[i]
		}
	}
	return nil
}
