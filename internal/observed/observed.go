// Package observed converts the unstructured objects Crossplane hands the
// function into typed views, once, at the edge, so decisions never index
// map[string]any; a malformed object is reported, never panicked on.
package observed

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/internal/cloneplan"
)

// GVKs the function reads and writes.
const (
	CDIAPIVersion      = "cdi.kubevirt.io/v1beta1"
	KindDataVolume     = "DataVolume"
	KindStorageProfile = "StorageProfile"
	KindCDI            = "CDI"
	KindCDIConfig      = "CDIConfig"
	KindPVC            = "PersistentVolumeClaim"
	KindPV             = "PersistentVolume"
	KindStorageClass   = "StorageClass"
	StorageAPIVersion  = "storage.k8s.io/v1"
	CoreAPIVersion     = "v1"
	// SnapshotAPIVersion is the external-snapshotter's API, read untyped so
	// its Go module is not a dependency.
	SnapshotAPIVersion      = "snapshot.storage.k8s.io/v1"
	KindVolumeSnapshotClass = "VolumeSnapshotClass"
	// InfraAPIVersion and KindKubevirtMachineTemplate are CAPK's template,
	// composed by a node pool and read by the catalog (who pins a golden).
	InfraAPIVersion             = "infrastructure.cluster.x-k8s.io/v1alpha1"
	KindKubevirtMachineTemplate = "KubevirtMachineTemplate"
)

// Into converts u into into, refusing another kind so that a misrouted
// requirement never passes as the wanted type.
func Into(u *unstructured.Unstructured, apiVersion, kind string, into runtime.Object) error {
	if err := isKind(u, apiVersion, kind); err != nil {
		return err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), into); err != nil {
		return fmt.Errorf("cannot read %s %q: %w", kind, Ref(u), err)
	}
	return nil
}

// DataVolume converts u to a CDI DataVolume.
func DataVolume(u *unstructured.Unstructured) (*cdiv1.DataVolume, error) {
	dv := &cdiv1.DataVolume{}
	return dv, Into(u, CDIAPIVersion, KindDataVolume, dv)
}

// PVC converts u to a PersistentVolumeClaim.
func PVC(u *unstructured.Unstructured) (*corev1.PersistentVolumeClaim, error) {
	pvc := &corev1.PersistentVolumeClaim{}
	return pvc, Into(u, CoreAPIVersion, KindPVC, pvc)
}

// PV converts u to a PersistentVolume.
func PV(u *unstructured.Unstructured) (*corev1.PersistentVolume, error) {
	pv := &corev1.PersistentVolume{}
	return pv, Into(u, CoreAPIVersion, KindPV, pv)
}

// StorageClass converts u to a StorageClass.
func StorageClass(u *unstructured.Unstructured) (*storagev1.StorageClass, error) {
	sc := &storagev1.StorageClass{}
	return sc, Into(u, StorageAPIVersion, KindStorageClass, sc)
}

// StorageProfile converts u to CDI's StorageProfile of a StorageClass.
func StorageProfile(u *unstructured.Unstructured) (*cdiv1.StorageProfile, error) {
	sp := &cdiv1.StorageProfile{}
	return sp, Into(u, CDIAPIVersion, KindStorageProfile, sp)
}

// CDI converts u to the CDI resource (spec.cloneStrategyOverride).
func CDI(u *unstructured.Unstructured) (*cdiv1.CDI, error) {
	cr := &cdiv1.CDI{}
	return cr, Into(u, CDIAPIVersion, KindCDI, cr)
}

// CDIConfig converts u to CDI's CDIConfig (the filesystem overhead).
func CDIConfig(u *unstructured.Unstructured) (*cdiv1.CDIConfig, error) {
	cfg := &cdiv1.CDIConfig{}
	return cfg, Into(u, CDIAPIVersion, KindCDIConfig, cfg)
}

// VolumeSnapshotClass reads what CDI reads of a VolumeSnapshotClass: name,
// driver (a top-level field) and the default annotation.
func VolumeSnapshotClass(u *unstructured.Unstructured) (cloneplan.VolumeSnapshotClass, error) {
	if err := isKind(u, SnapshotAPIVersion, KindVolumeSnapshotClass); err != nil {
		return cloneplan.VolumeSnapshotClass{}, err
	}
	driver, ok := u.Object["driver"].(string)
	if !ok || driver == "" {
		return cloneplan.VolumeSnapshotClass{}, fmt.Errorf("cannot read %s %q: driver is %T %v, not a driver name", KindVolumeSnapshotClass, Ref(u), u.Object["driver"], u.Object["driver"])
	}
	return cloneplan.VolumeSnapshotClass{
		Name:    u.GetName(),
		Driver:  driver,
		Default: u.GetAnnotations()[cloneplan.AnnDefaultSnapshotClass] == "true",
	}, nil
}

// isKind refuses a missing object and one of another kind.
func isKind(u *unstructured.Unstructured, apiVersion, kind string) error {
	if u == nil {
		return fmt.Errorf("no object")
	}
	if u.GetAPIVersion() != apiVersion || u.GetKind() != kind {
		return fmt.Errorf("%s %q is a %s %s, not a %s %s", u.GetKind(), Ref(u), u.GetAPIVersion(), u.GetKind(), apiVersion, kind)
	}
	return nil
}

// Ref names an object for messages: "<namespace>/<name>", or its name.
func Ref(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return ns + "/" + u.GetName()
	}
	return u.GetName()
}
