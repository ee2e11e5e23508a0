package tenantcluster

import (
	"fmt"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
)

// nodePool renders a pool's XNodePool from its plan alone: nothing observed
// goes into it, so an unchanged pool renders byte-identically whatever
// happens to the others, and its readiness is set by the caller.
func nodePool(cluster string, p Pool) (*resource.DesiredComposed, error) {
	u := composed.New()
	u.SetAPIVersion(v1alpha1.Group + "/" + v1alpha1.Version)
	u.SetKind(v1alpha1.KindNodePool)
	u.SetName(nodePoolName(cluster, p.Name))
	if err := u.SetValue("spec", p.Spec); err != nil {
		return nil, fmt.Errorf("cannot render the XNodePool of pool %q: %w", p.Name, err)
	}
	return &resource.DesiredComposed{Resource: u}, nil
}
