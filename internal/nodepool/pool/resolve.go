package pool

import (
	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/matrix"
	"github.com/cozystack/function-worker-image/internal/poolspec"
)

// SourceType is where a pool's boot disk comes from (poolspec).
type SourceType = poolspec.SourceType

// Source types, as written to status.image.sourceType.
const (
	SourceClone = poolspec.SourceClone
	SourceHTTP  = poolspec.SourceHTTP
)

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
	// VM is the worker VM details (vmtemplate.go).
	VM VmTemplate
	// GPUs are passed through to the VM (withGPUs, reservations.go).
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
