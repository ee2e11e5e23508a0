package harness

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Field managers of the controllers the suite plays.
const (
	FakeCDIManager  = "fake-cdi"
	FakeCAPIManager = "fake-capi"
)

// CDI phases of a DataVolume.
const (
	PhaseImportInProgress = "ImportInProgress"
	PhaseCloneInProgress  = "CloneInProgress"
	PhaseSucceeded        = "Succeeded"
	PhaseFailed           = "Failed"
)

// DefaultStorageClass is the StorageClass the suite marks as the cluster
// default.
const DefaultStorageClass = "e2e-replicated"

// InstallDefaultStorageClass creates the cluster's default StorageClass.
// Nothing provisions it: the fake CDI binds PVCs itself.
func (cp *ControlPlane) InstallDefaultStorageClass(ctx context.Context) error {
	return cp.Apply(ctx, MustObject(fmt.Sprintf(`
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: %s
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: e2e.invalid/none
volumeBindingMode: Immediate
`, DefaultStorageClass)))
}

// SetDataVolumePhase plays CDI for the DataVolume ns/name: it makes sure
// the DataVolume's PVC exists (owned by the DataVolume, on the DataVolume's
// class or the default one, bound once the phase is Succeeded) and writes
// the DataVolume's status phase and progress. cloneType, if not empty, is
// recorded on the PVC the way CDI does for clone targets.
func (cp *ControlPlane) SetDataVolumePhase(ctx context.Context, ns, name, phase, progress, cloneType string) error {
	dv, err := cp.Get(ctx, DataVolume, ns, name)
	if err != nil {
		return err
	}
	if dv == nil {
		return fmt.Errorf("DataVolume %s/%s does not exist", ns, name)
	}
	if err := cp.ensureDataVolumePVC(ctx, dv, phase == PhaseSucceeded, cloneType); err != nil {
		return err
	}
	st := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": dv.GetAPIVersion(),
		"kind":       dv.GetKind(),
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"status": map[string]any{
			"phase":     phase,
			"progress":  progress,
			"claimName": name,
		},
	}}
	return cp.ApplyStatus(ctx, FakeCDIManager, st)
}

func (cp *ControlPlane) ensureDataVolumePVC(ctx context.Context, dv *unstructured.Unstructured, bound bool, cloneType string) error {
	class, size, modes := dataVolumeStorage(dv)
	if class == "" {
		class = DefaultStorageClass
	}
	ann := map[string]any{}
	if cloneType != "" {
		ann["cdi.kubevirt.io/cloneType"] = cloneType
	}
	labels := map[string]any{}
	for k, v := range dv.GetLabels() {
		labels[k] = v
	}
	pvc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "PersistentVolumeClaim",
		"metadata": map[string]any{
			"name":        dv.GetName(),
			"namespace":   dv.GetNamespace(),
			"labels":      labels,
			"annotations": ann,
			"ownerReferences": []any{map[string]any{
				"apiVersion":         dv.GetAPIVersion(),
				"kind":               dv.GetKind(),
				"name":               dv.GetName(),
				"uid":                string(dv.GetUID()),
				"controller":         true,
				"blockOwnerDeletion": true,
			}},
		},
		"spec": map[string]any{
			"accessModes":      modes,
			"storageClassName": class,
			"resources":        map[string]any{"requests": map[string]any{"storage": size}},
		},
	}}
	if err := cp.ApplyAs(ctx, FakeCDIManager, pvc); err != nil {
		return err
	}
	if !bound {
		return nil
	}
	return cp.ApplyStatus(ctx, FakeCDIManager, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "PersistentVolumeClaim",
		"metadata":   map[string]any{"name": dv.GetName(), "namespace": dv.GetNamespace()},
		"status": map[string]any{
			"phase":       "Bound",
			"accessModes": modes,
			"capacity":    map[string]any{"storage": size},
		},
	}})
}

// dataVolumeStorage reads class, size and access modes from a DataVolume's
// spec.storage or spec.pvc, with CDI's defaults for what is missing.
func dataVolumeStorage(dv *unstructured.Unstructured) (class, size string, modes []any) {
	for _, field := range []string{"storage", "pvc"} {
		s, ok, _ := unstructured.NestedMap(dv.Object, "spec", field)
		if !ok {
			continue
		}
		class, _, _ = unstructured.NestedString(s, "storageClassName")
		size, _, _ = unstructured.NestedString(s, "resources", "requests", "storage")
		modes, _, _ = unstructured.NestedSlice(s, "accessModes")
		break
	}
	if size == "" {
		size = "1Gi"
	}
	if len(modes) == 0 {
		modes = []any{"ReadWriteOnce"}
	}
	return class, size, modes
}

// CreateWorkerDisk plays CAPK and CDI for one worker of a pool: it creates
// the DataVolume that CAPK would create from the KubevirtMachineTemplate's
// first dataVolumeTemplate (same labels and annotations, spec copied), with
// name <machine>-<template DataVolume name>, and marks it Succeeded; a disk
// whose source is a PVC is recorded as a csi-clone, the way CDI records a
// smart clone. It returns the DataVolume's name.
func (cp *ControlPlane) CreateWorkerDisk(ctx context.Context, ns, template, machine string) (string, error) {
	kmt, err := cp.Get(ctx, KubevirtMachineTemplate, ns, template)
	if err != nil {
		return "", err
	}
	if kmt == nil {
		return "", fmt.Errorf("KubevirtMachineTemplate %s/%s does not exist", ns, template)
	}
	dvts, _, _ := unstructured.NestedSlice(kmt.Object, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates")
	if len(dvts) == 0 {
		return "", fmt.Errorf("KubevirtMachineTemplate %s/%s has no spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates", ns, template)
	}
	dvt, _ := dvts[0].(map[string]any)
	tmplName, _, _ := unstructured.NestedString(dvt, "metadata", "name")
	spec, _, _ := unstructured.NestedMap(dvt, "spec")
	labels, _, _ := unstructured.NestedMap(dvt, "metadata", "labels")
	ann, _, _ := unstructured.NestedMap(dvt, "metadata", "annotations")
	name := machine + "-" + tmplName
	dv := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": DataVolume.GroupVersion().String(),
		"kind":       DataVolume.Kind,
		"metadata": map[string]any{
			"name":        name,
			"namespace":   ns,
			"labels":      labels,
			"annotations": ann,
		},
		"spec": spec,
	}}
	if err := cp.ApplyAs(ctx, FakeCAPIManager, dv); err != nil {
		return "", err
	}
	cloneType := ""
	if _, clone, _ := unstructured.NestedMap(spec, "source", "pvc"); clone {
		cloneType = "csi-clone"
	}
	return name, cp.SetDataVolumePhase(ctx, ns, name, PhaseSucceeded, "100.0%", cloneType)
}

// CreateMachineSet plays the MachineDeployment controller: it creates a
// MachineSet of MachineDeployment md in cluster that references the
// KubevirtMachineTemplate infraTemplate and the bootstrap template
// bootstrapTemplate, labelled the way Cluster API labels them.
func (cp *ControlPlane) CreateMachineSet(ctx context.Context, ns, name, cluster, md, infraTemplate, bootstrapTemplate string) error {
	return cp.ApplyAs(ctx, FakeCAPIManager, MustObject(fmt.Sprintf(`
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineSet
metadata:
  name: %[2]s
  namespace: %[1]s
  labels:
    cluster.x-k8s.io/cluster-name: %[3]s
    cluster.x-k8s.io/deployment-name: %[4]s
spec:
  clusterName: %[3]s
  replicas: 1
  selector:
    matchLabels:
      cluster.x-k8s.io/cluster-name: %[3]s
      cluster.x-k8s.io/deployment-name: %[4]s
  template:
    metadata:
      labels:
        cluster.x-k8s.io/cluster-name: %[3]s
        cluster.x-k8s.io/deployment-name: %[4]s
    spec:
      clusterName: %[3]s
      bootstrap:
        configRef:
          apiVersion: bootstrap.cluster.x-k8s.io/v1alpha3
          kind: TalosConfigTemplate
          name: %[6]s
          namespace: %[1]s
      infrastructureRef:
        apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
        kind: KubevirtMachineTemplate
        name: %[5]s
        namespace: %[1]s
`, ns, name, cluster, md, infraTemplate, bootstrapTemplate)))
}
