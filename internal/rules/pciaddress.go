package rules

import (
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PCIAddressPattern is a guest PCI address domain:bus:slot.function in
// lowercase hex, the form KubeVirt's disk pciAddress takes (the XRD carries
// the same pattern; xrd_test holds them together).
const PCIAddressPattern = `^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`

var pciAddress = regexp.MustCompile(PCIAddressPattern)

// PCIAddress checks a system disk's guest PCI address. An empty value
// (omitted) passes: it takes the default.
func PCIAddress(path *field.Path, v string) field.ErrorList {
	if v == "" || pciAddress.MatchString(v) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, Quoted(v), "is not a PCI address domain:bus:slot.function in lowercase hex, such as 0000:07:00.0")}
}
