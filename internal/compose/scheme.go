package compose

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/crossplane/function-sdk-go/resource/composed"
)

// The typed objects modes compose must be known to composed.Scheme, which
// composed.From uses to set their apiVersion and kind.
func init() {
	for _, add := range []func(*runtime.Scheme) error{cdiv1.AddToScheme, rbacv1.AddToScheme} {
		if err := add(composed.Scheme); err != nil {
			panic(err)
		}
	}
}
