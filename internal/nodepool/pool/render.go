package pool

// Names inside the VM template. CAPK prefixes each DataVolume template name
// with the machine name, so every worker gets its own disk-system disk.
const (
	DiskTemplateName = "disk-system"
	SystemVolume     = "system"
	// HashLength hex characters of sha256 name a template: 40 bits make an
	// accidental collision between two revisions of one pool negligible.
	HashLength = 10
	// InstancetypeKind is the cluster-wide KubeVirt instance type kind.
	InstancetypeKind = "VirtualMachineClusterInstancetype"
	// CheckStrategyNone: Talos has no SSH for CAPK's bootstrap sentinel check.
	CheckStrategyNone = "none"
)
