package pool

import (
	"fmt"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
)

// Refused is the fatal error of the pool ref ("<namespace>/<name>"): every
// fatal result of this mode names the composite first, as the tenant
// cluster's and the catalog's do, so that a message read from an event or a
// log says which pool to fix.
func Refused(ref string, err error) error {
	return fmt.Errorf("%s %q: %w", v1alpha1.KindNodePool, ref, err)
}
