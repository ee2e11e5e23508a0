package render

import (
	"fmt"

	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
)

// WithGPUs passes the pool's GPUs through to the VM, named gpu1, gpu2, ...
// as the chart names them (nodegroup.yaml:143-150@69da032).
func WithGPUs(vmi *kubevirtv1.VirtualMachineInstanceSpec, gpus []v1alpha1.GPU) {
	for i, g := range gpus {
		vmi.Domain.Devices.GPUs = append(vmi.Domain.Devices.GPUs, kubevirtv1.GPU{Name: fmt.Sprintf("gpu%d", i+1), DeviceName: g.Name})
	}
}
