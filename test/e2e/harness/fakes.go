package harness

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The suite plays the controllers that have no process here and whose work
// the function only reads: Cluster API's MachineDeployment controller
// (MachineSets) and the KubeVirt provider with KubeVirt (a worker's
// DataVolume). CDI is not played: it runs (cdi.go), with the provisioner
// and kubelet stand-ins of standins.go.

// FakeCAPIManager is the field manager of what the suite writes as Cluster
// API and CAPK.
const FakeCAPIManager = "fake-capi"

// CreateWorkerDisk plays CAPK and KubeVirt for one worker of a pool: it
// creates the DataVolume that KubeVirt creates for the VirtualMachine CAPK
// makes from the KubevirtMachineTemplate's first dataVolumeTemplate, named
// <machine>-<template DataVolume name> (CAPK pkg/kubevirt/utils.go renames
// it; KubeVirt copies its labels, annotations and spec, pkg/storage/types/
// dv.go). CDI then imports or clones it. It returns the DataVolume's name.
func (cp *ControlPlane) CreateWorkerDisk(ctx context.Context, ns, template, machine string) (string, error) {
	return cp.CreateWorkerDiskWith(ctx, ns, template, machine, nil)
}

// CreateWorkerDiskWith is CreateWorkerDisk with edit applied to the
// DataVolume before it is created (a scenario's stand-in for a template
// whose clone source went away, for instance).
func (cp *ControlPlane) CreateWorkerDiskWith(ctx context.Context, ns, template, machine string, edit func(dv *unstructured.Unstructured)) (string, error) {
	dv, err := cp.WorkerDisk(ctx, ns, template, machine)
	if err != nil {
		return "", err
	}
	if edit != nil {
		edit(dv)
	}
	return dv.GetName(), cp.ApplyAs(ctx, FakeCAPIManager, dv)
}

// WorkerDisk returns, without creating it, the DataVolume CreateWorkerDisk
// creates.
func (cp *ControlPlane) WorkerDisk(ctx context.Context, ns, template, machine string) (*unstructured.Unstructured, error) {
	kmt, err := cp.Get(ctx, KubevirtMachineTemplate, ns, template)
	if err != nil {
		return nil, err
	}
	if kmt == nil {
		return nil, fmt.Errorf("KubevirtMachineTemplate %s/%s does not exist", ns, template)
	}
	dvts, _, _ := unstructured.NestedSlice(kmt.Object, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates")
	if len(dvts) == 0 {
		return nil, fmt.Errorf("KubevirtMachineTemplate %s/%s has no spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates", ns, template)
	}
	dvt, _ := dvts[0].(map[string]any)
	tmplName, _, _ := unstructured.NestedString(dvt, "metadata", "name")
	spec, _, _ := unstructured.NestedMap(dvt, "spec")
	labels, _, _ := unstructured.NestedMap(dvt, "metadata", "labels")
	ann, _, _ := unstructured.NestedMap(dvt, "metadata", "annotations")
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": DataVolume.GroupVersion().String(),
		"kind":       DataVolume.Kind,
		"metadata": map[string]any{
			"name":        machine + "-" + tmplName,
			"namespace":   ns,
			"labels":      labels,
			"annotations": ann,
		},
		"spec": spec,
	}}, nil
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
