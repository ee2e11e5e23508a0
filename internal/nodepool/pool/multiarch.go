package pool

// VmArchitecture is the spec.template.spec.architecture a pool's VM names:
// the pool's architecture when it is not the Input's image.arch, else none,
// so no template of a pool of the Input's architecture changes. The one
// decision of both the VM template (vmtemplate.go) and this gate.
func VmArchitecture(poolArch, inputArch string) string {
	if poolArch == inputArch {
		return ""
	}
	return poolArch
}
