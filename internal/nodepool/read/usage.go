package read

import (
	"strings"

	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
)

// Deletion protection of the goldens a pool's templates clone from. The
// webhook nousages.protection.crossplane.io refuses DELETE of any object
// labelled crossplane.io/in-use: "true" (Crossplane v2.2.0
// cluster/webhookconfigurations/usage.yaml), which the usage controller sets
// on a Usage's `of` (internal/controller/protection/usage/reconciler.go). So
// while a template clones a golden, neither the catalog, nor its garbage
// collection, nor kubectl deletes the golden; replayDeletion reissues a
// refused delete once the golden's last Usage goes.
//
// The pool, not the garbage collector, removes a Usage: the XNodePool owns
// it, so it outlives its template. Crossplane strips the
// crossplane.io/composite label from a resource it deletes as no longer
// desired (composition_functions.go, DeletingComposedResourceGarbageCollector),
// and a deleted Usage waits for its `by` only while it has that label
// (reconciler.go, meta.WasDeleted), so a dropped Usage lets go at once. When
// the XNodePool is collected the label stays and each Usage waits for its
// `by`, the template: a golden is pinned exactly as long as a template
// cloning it exists.
//
// The golden's PVC is protected too: a clone reads it, and it can be
// deleted apart from its DataVolume. So is the golden's VolumeSnapshot,
// for a template that restores its disks from it (snapshot.go).

// Usage identity.
const (
	UsageAPIVersion = "protection.crossplane.io/v1beta1"
	KindUsage       = "Usage"
	PrefixUsage     = "usage-"
)

// cloneSource is the golden a template clones from, read back from the
// annotations every clone template carries: kept templates may clone an
// older golden than the spec names now.
func CloneSource(u *composed.Unstructured) (namespace, name string, ok bool) {
	a := u.GetAnnotations()
	if a[labels.AnnSourceType] != string(pool.SourceClone) {
		return "", "", false
	}
	namespace, name, ok = strings.Cut(a[labels.AnnGolden], "/")
	return namespace, name, ok && namespace != "" && name != ""
}
