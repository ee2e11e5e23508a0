package harness

import "context"

// InstallInstanceTypes creates u1.medium as KubeVirt's common instance types
// define it (1 vCPU, 4Gi): the pools' default instance type, whose size the
// node pool mode reads to compute the kubelet reservations, and without
// which it holds the pool.
func (cp *ControlPlane) InstallInstanceTypes(ctx context.Context) error {
	return cp.Apply(ctx, MustObject(`
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterInstancetype
metadata:
  name: u1.medium
spec:
  cpu:
    guest: 1
  memory:
    guest: 4Gi
`))
}
