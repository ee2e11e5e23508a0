package read

// Instance type identifiers. The chart reads the same version
// (nodegroup.yaml:301@69da032, lookup "instancetype.kubevirt.io/v1beta1").
const (
	InstancetypeAPIVersion = "instancetype.kubevirt.io/v1beta1"
	ReqInstancetype        = "instancetype"
)
