// Package labels holds the label and annotation keys the function writes and
// selects on. Golden and pool names can exceed the 63-character label value
// limit (a real golden name is about 85 characters), so full names go in
// annotations and labels carry a short hash of them.
package labels

import (
	"crypto/sha256"
	"encoding/hex"
)

// Prefix of every key the function owns.
const Prefix = "workerimage.cozystack.io/"

// Label keys.
const (
	// Golden labels a golden DataVolume, and every template and worker disk
	// that clones it, with GoldenHash of the golden.
	Golden = Prefix + "golden"
	// Pool labels a pool's templates and worker disks with PoolHash.
	Pool = Prefix + "pool"
	// CloneRBAC marks the clone ClusterRole and RoleBinding of a catalog, so
	// that node pools can read them to know whether their VMs may clone.
	CloneRBAC = Prefix + "clone-rbac"
	// CloneGrantRequest labels a pool's Usage of a golden DataVolume with
	// GoldenHash while the pool's VM service account may not clone that
	// golden: the catalog binds the namespaces that ask.
	CloneGrantRequest = Prefix + "clone-grant-request"
	// ManagedBy marks objects this function composes.
	ManagedBy      = "app.kubernetes.io/managed-by"
	ManagedByValue = "function-worker-image"
)

// Annotation keys.
const (
	// AnnGolden carries "<namespace>/<name>" of the golden.
	AnnGolden = Prefix + "golden"
	// AnnPool carries "<namespace>/<cluster>-<pool>".
	AnnPool = Prefix + "pool"
	// AnnSchematicID and AnnTalosVersion record what a golden holds.
	AnnSchematicID  = Prefix + "schematic-id"
	AnnTalosVersion = Prefix + "talos-version"
	// AnnSourceType records whether a template clones or imports.
	AnnSourceType = Prefix + "source-type"
	// AnnCopyFromStorageClass marks a worker disk (and its template) that
	// copies its golden from another StorageClass because the Input chose
	// it, with the golden's class (nodepool copy.go).
	AnnCopyFromStorageClass = Prefix + "copy-from-storage-class"
	// AnnImportPermanentError keeps on a golden DataVolume a permanent
	// importer error, which CDI clears on each importer restart (cdistate).
	AnnImportPermanentError = Prefix + "import-permanent-error"
	// AnnImportStalled marks a golden DataVolume whose import the catalog
	// found stalled, with the phase, progress and restarts it stalled at
	// and the bound (stall.Mark), for the pools that clone it.
	AnnImportStalled = Prefix + "import-stalled"
	// AnnTeardown "true" on an XNodePool has its pool remove its workers and
	// composed objects while the XNodePool stays: an XTenantCluster sets it
	// on a pool that left spec.nodePools and deletes it once released.
	AnnTeardown = Prefix + "teardown"
)

// Crossplane's deletion protection keys (github.com/crossplane/crossplane/v2
// v2.2.0: internal/protection/usage.go and
// internal/controller/protection/usage/reconciler.go; neither is exported).
const (
	// InUse is set to "true" by Crossplane's usage controller on the `of`
	// object of a Usage; the webhook nousages.protection.crossplane.io
	// refuses DELETE of an object that carries it while a Usage names it.
	InUse = "crossplane.io/in-use"
	// AnnDeletionAttempt is the webhook's record of a refused DELETE, with
	// its propagation policy (internal/webhook/protection/usage/handler.go),
	// which a Usage with replayDeletion re-issues once it goes.
	AnnDeletionAttempt = "usage.crossplane.io/deletion-attempt-with-policy"
)

// CrossplaneInUse is the same label as InUse; the webhook selects on it
// (Crossplane v2.2.0 cluster/webhookconfigurations/usage.yaml).
const CrossplaneInUse = "crossplane.io/in-use"

// CDI annotation keys. The CDI API module does not export these.
const (
	AnnCDIBindImmediate = "cdi.kubevirt.io/storage.bind.immediate.requested"
	// AnnCDICloneType is set by CDI on a clone target PVC: copy, snapshot or csi-clone.
	AnnCDICloneType = "cdi.kubevirt.io/cloneType"
	// AnnCDICloneFallbackReason is set by CDI when it falls back to a host-assisted copy.
	AnnCDICloneFallbackReason = "cdi.kubevirt.io/cloneFallbackReason"
	// AnnCDIUsePopulator decides between CDI's volume populators and its
	// legacy path for a DataVolume (datavolume/controller-base.go
	// shouldUseCDIPopulator, v1.65: the annotation wins; without it,
	// populators whenever the class's provisioner has a CSIDriver object).
	AnnCDIUsePopulator = "cdi.kubevirt.io/storage.usePopulator"
)

// hashLength is long enough that two goldens of one platform never collide in
// practice, and short enough to be read in kubectl output.
const hashLength = 16

// Hash returns the short, label-safe hash of a name.
func Hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:hashLength]
}

// GoldenRef is the "<namespace>/<name>" annotation value of a golden.
func GoldenRef(namespace, name string) string { return namespace + "/" + name }

// GoldenHash is the Golden label value of a golden.
func GoldenHash(namespace, name string) string { return Hash(GoldenRef(namespace, name)) }

// OfGolden are the labels of what the catalog composes of a golden (its
// DataVolume and its VolumeSnapshot): the golden's hash, which pools and
// requirements select by, and the manager.
func OfGolden(namespace, name string) map[string]string {
	return map[string]string{Golden: GoldenHash(namespace, name), ManagedBy: ManagedByValue}
}

// PoolName is "<cluster>-<pool>", the name of a pool's XNodePool (when a
// tenant cluster composes it) and of its MachineDeployment.
func PoolName(cluster, pool string) string { return cluster + "-" + pool }

// PoolRef is the "<namespace>/<cluster>-<pool>" annotation value of a pool.
func PoolRef(namespace, cluster, pool string) string {
	return namespace + "/" + PoolName(cluster, pool)
}

// PoolHash is the Pool label value of a pool.
func PoolHash(namespace, cluster, pool string) string { return Hash(PoolRef(namespace, cluster, pool)) }
