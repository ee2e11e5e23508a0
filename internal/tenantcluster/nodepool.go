package tenantcluster

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/labels"
)

// xNodePool is the desired XNodePool: identity and spec, nothing observed.
type xNodePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              v1alpha1.NodePoolSpec `json:"spec"`
}

// nodePool renders a pool's XNodePool from its plan alone: nothing observed
// goes into it, so an unchanged pool renders byte-identically whatever
// happens to the others, and its readiness is set by the caller. Empty
// objects are kept: osImage {builtin: {}} means "clone, with the defaults".
func nodePool(cluster string, p Pool) (*resource.DesiredComposed, error) {
	u, err := compose.ToDesired(xNodePool{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.Group + "/" + v1alpha1.Version, Kind: v1alpha1.KindNodePool},
		ObjectMeta: metav1.ObjectMeta{Name: labels.PoolName(cluster, p.Name)},
		Spec:       p.Spec,
	})
	if err != nil {
		return nil, fmt.Errorf("cannot render the XNodePool of pool %q: %w", p.Name, err)
	}
	return &resource.DesiredComposed{Resource: u}, nil
}
