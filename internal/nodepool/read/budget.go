package read

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/cozystack/function-worker-image/internal/labels"
)

// reqCloneClaims are the claims CDI makes in the golden's namespace for the
// clones of the pool's golden that run now (clonebudget.InFlight.Others).
const ReqCloneClaims = "golden-clone-claims"

// isCloneClaim reports a claim CDI made in the golden's namespace for a
// clone of another pool's disk: it carries the target's labels, so a pool
// label, and is not the golden's own claim.
func IsCloneClaim(pvc corev1.PersistentVolumeClaim, goldenNamespace, poolHash string) bool {
	owner := pvc.Labels[labels.Pool]
	return pvc.Namespace == goldenNamespace && owner != "" && owner != poolHash
}
