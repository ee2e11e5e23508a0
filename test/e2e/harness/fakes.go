package harness

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Cluster API, CABPT and CAPK run (capi.go); for a real Machine, the
// KubeVirt stand-in (nodestandins.go) creates its worker disk. What remains here is for the
// scenarios that assert CDI's handling of a worker disk without a Cluster
// or Machine: they create the disk CAPK and KubeVirt would create for a
// named machine of a template, by hand. CDI is not played: it runs
// (cdi.go), with the provisioner and kubelet stand-ins of standins.go.

// FakeCAPIManager is the field manager of the worker disks the scenarios
// create by hand as CAPK and KubeVirt.
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
	disk, err := workerDisk(dvts, ns, machine)
	if err != nil {
		return nil, fmt.Errorf("KubevirtMachineTemplate %s/%s: %w", ns, template, err)
	}
	return disk, nil
}

// workerDisk returns the DataVolume KubeVirt creates for the first of a
// VirtualMachine template's dataVolumeTemplates when CAPK names the VM vm:
// <vm>-<template name> (CAPK pkg/kubevirt/utils.go
// prefixDataVolumeTemplates), with the template's labels, annotations and
// spec (KubeVirt pkg/storage/types/dv.go).
func workerDisk(dvts []any, ns, vm string) (*unstructured.Unstructured, error) {
	if len(dvts) == 0 {
		return nil, fmt.Errorf("no virtualMachineTemplate.spec.dataVolumeTemplates")
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
			"name":        vm + "-" + tmplName,
			"namespace":   ns,
			"labels":      labels,
			"annotations": ann,
		},
		"spec": spec,
	}}, nil
}
