package pool

import (
	"cmp"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/defaults"
	"github.com/cozystack/function-worker-image/internal/poolspec"
)

// VmTemplate is the resolved worker VM details of a pool.
type VmTemplate struct {
	Roles            []string
	LogSerialConsole bool
	// PodResources are as poolspec parsed them.
	poolspec.PodResources
	PCIAddress                string
	LogicalBlock, PhysicalBlk uint
	TopologySpread            []corev1.TopologySpreadConstraint
	// ApplicationLabels puts cozystack's application lineage labels on the
	// virt-launcher Pod (the Input's scheduling.applicationLabels).
	ApplicationLabels bool
	// FactoryCA is the Image Factory CA bundle the pool's HTTP disks are
	// verified against: its spec.talos.imageFactoryCA, else the Input's;
	// "" for none.
	FactoryCA string
	// Architecture is the VM's spec.architecture: the pool's, written only
	// when it is not the Input's, so no template of a pool that writes none
	// changes. KubeVirt schedules the VM on a node of it.
	Architecture string
}

// resolveVMTemplate applies the defaults to a spec poolspec has validated,
// beside the Pod resources it parsed.
func resolveVMTemplate(spec v1alpha1.NodePoolSpec, pod poolspec.PodResources, cfg config.Config) VmTemplate {
	v := VmTemplate{
		Roles:             spec.Roles,
		LogSerialConsole:  spec.LogSerialConsole,
		PodResources:      pod,
		PCIAddress:        defaults.SystemDiskPCIAddress,
		LogicalBlock:      uint(defaults.SystemDiskLogicalBlockSize),
		PhysicalBlk:       uint(defaults.SystemDiskPhysicalBlockSize),
		TopologySpread:    cfg.TopologySpread,
		ApplicationLabels: cfg.ApplicationLabels,
		// poolspec.Talos has checked the pool's bundle; CABundle trims
		// it, as config does the Input's.
		FactoryCA: cmp.Or(strings.TrimSpace(spec.Talos.ImageFactoryCA), cfg.ImageFactoryCA),
	}
	v.Architecture = VmArchitecture(spec.Architecture, cfg.Arch)
	if d := spec.Disk; d != nil {
		if d.PCIAddress != "" {
			v.PCIAddress = d.PCIAddress
		}
		if b := d.BlockSize; b != nil {
			if b.Logical != 0 {
				v.LogicalBlock = uint(b.Logical)
			}
			if b.Physical != 0 {
				v.PhysicalBlk = uint(b.Physical)
			}
		}
	}
	return v
}
