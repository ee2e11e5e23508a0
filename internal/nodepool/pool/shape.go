package pool

import (
	"cmp"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/defaults"
	"github.com/cozystack/function-worker-image/internal/matrix"
	"github.com/cozystack/function-worker-image/internal/poolspec"
)

// Class is a resolved StorageClass and where it came from.
type Class struct {
	Name string
	// From says where Name came from, for messages.
	From string
	// Default is set when Name is today's default class.
	Default bool
}

// VMArchitecture is the spec.template.spec.architecture a pool's VM names:
// the pool's architecture when it is not the Input's image.arch, else none,
// so no template of a pool of the Input's architecture changes. The one
// decision of both the VM template (render/vmtemplate.go) and this gate.
func VMArchitecture(poolArch, inputArch string) string {
	if poolArch == inputArch {
		return ""
	}
	return poolArch
}

// Source types, as written to status.image.sourceType.
const (
	SourceClone = poolspec.SourceClone
	SourceHTTP  = poolspec.SourceHTTP
)

// SourceType is where a pool's boot disk comes from (poolspec).
type SourceType = poolspec.SourceType

// Setting is a resolved value and the field it came from.
type Setting = poolspec.Setting

// Image is what a pool's osImage resolves to (poolspec.ResolveImage).
type Image = poolspec.Image

// Shape is everything else a pool's spec resolves to: what poolspec sized
// and parsed (replicas, instance type or resources, disk, kubelet
// reservations, Pod resources, Cluster API knobs) and the rest with its
// defaults.
type Shape struct {
	poolspec.Size
	// DeclaredClass is spec.storageClass; empty means "resolve it".
	DeclaredClass string
	// KubernetesVersion is spec.version, a minor.
	KubernetesVersion Setting
	// MachineVersion is the Kubernetes release the Machines run.
	MachineVersion string
	// TalosVersion is the pool's default Talos version (spec.talos.version,
	// else the Input's), checked against the matrix even when osImage
	// overrides it.
	TalosVersion Setting
	// InstallerRepository is where the workers pull their installer from;
	// resolveInstallerRepository fills it in, as it depends on the image.
	InstallerRepository Setting
	Mirrors             map[string]v1alpha1.RegistryMirror
	// VM is the worker VM details (render/vmtemplate.go).
	VM VM
	// GPUs are passed through to the VM (withGPUs, decide/reservations.go).
	GPUs []v1alpha1.GPU
}

// ResolveShape applies the defaults to the pool's shape, which readPool has
// validated and sized (poolspec.NodePool).
func ResolveShape(spec v1alpha1.NodePoolSpec, size poolspec.Size, cfg config.Config) Shape {
	s := Shape{
		Size:              size,
		DeclaredClass:     spec.StorageClass,
		KubernetesVersion: poolspec.First(Setting{Value: spec.Version, Field: "spec.version"}, Setting{Value: cfg.KubernetesVersion, Field: "Input talos.kubernetesVersion"}),
		TalosVersion:      poolspec.First(Setting{Value: spec.Talos.Version, Field: "spec.talos.version"}, Setting{Value: cfg.TalosVersion, Field: "Input talos.version"}),
		Mirrors:           spec.Talos.RegistryMirrors,
		VM:                resolveVMTemplate(spec, size.Pod, cfg),
		GPUs:              spec.GPUs,
	}
	// Cluster API needs a full semantic version: the minor's shipped patch
	// release (matrix.Release); the Talos/Kubernetes pairing is checked on
	// the minor.
	s.MachineVersion = matrix.Release(cfg, s.KubernetesVersion.Value)
	return s
}

// VM is the resolved worker VM details of a pool.
type VM struct {
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
func resolveVMTemplate(spec v1alpha1.NodePoolSpec, pod poolspec.PodResources, cfg config.Config) VM {
	v := VM{
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
	v.Architecture = VMArchitecture(spec.Architecture, cfg.Arch)
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
