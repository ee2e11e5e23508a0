package rules

import (
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The chart's kernel module guards (kubernetes-nodes
// templates/_helpers.tpl:112-150@c1ea547, "invalid kernelModules name",
// "invalid kernelModules parameter"). The chart needs them against shell
// injection; here the values go into YAML, but a module name modprobe cannot
// take, or a parameter with whitespace or quotes, is still a typo Talos would
// only report on the node, so the same grammar is kept.
const (
	KernelModuleNamePattern      = `^[a-z0-9_-]+$`
	KernelModuleParameterPattern = `^[^\x00-\x20\x7f$\x60\\'"]+$`
)

var (
	kernelModuleName      = regexp.MustCompile(KernelModuleNamePattern)
	kernelModuleParameter = regexp.MustCompile(KernelModuleParameterPattern)
)

// Kernel module bounds, as the XRD has them.
const (
	MaxKernelModuleName      = 64
	MaxKernelModuleParameter = 256
)

// KernelModuleName checks a kernel module name as modprobe takes it.
func KernelModuleName(path *field.Path, v string) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(path, "name the kernel module, e.g. nvidia_uvm")}
	}
	if len(v) > MaxKernelModuleName || !kernelModuleName.MatchString(v) {
		return field.ErrorList{field.Invalid(path, Quoted(v), fmt.Sprintf("is not a kernel module name (lowercase letters, digits, '_' and '-', at most %d characters), e.g. nvidia_uvm", MaxKernelModuleName))}
	}
	return nil
}

// KernelModuleParameter checks one module parameter, a bare key=value.
func KernelModuleParameter(path *field.Path, v string) field.ErrorList {
	if len(v) > MaxKernelModuleParameter || !kernelModuleParameter.MatchString(v) {
		return field.ErrorList{field.Invalid(path, Quoted(v), fmt.Sprintf("is not a module parameter: write a bare key=value of at most %d characters with no whitespace, quotes, backslash, backtick or $, e.g. NVreg_EnableGpuFirmware=1 (a semicolon-separated value such as NVreg_RegistryDwords=PowerMizerEnable=0x1;PerfLevelSrc=0x2222 is fine)", MaxKernelModuleParameter))}
	}
	return nil
}
