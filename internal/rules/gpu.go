package rules

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// GPUName checks a GPU's device name, the extended resource name KubeVirt's
// permittedHostDevices advertise (e.g. nvidia.com/AD102GL_L40S): a
// qualified name, which is what KubeVirt's device plugins register.
func GPUName(path *field.Path, v string) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(path, "name the GPU's resource, e.g. nvidia.com/AD102GL_L40S")}
	}
	if errs := validation.IsQualifiedName(v); len(errs) > 0 {
		return field.ErrorList{field.Invalid(path, Quoted(v), fmt.Sprintf("is not a device resource name (%s); use the name KubeVirt's permittedHostDevices list, e.g. nvidia.com/AD102GL_L40S", errs[0]))}
	}
	return nil
}
