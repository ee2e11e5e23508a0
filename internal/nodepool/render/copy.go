package render

import (
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
)

// DiskSource is what a new clone template's disk is made from: by default
// a clone of the golden's PVC as CDI plans it.
type DiskSource struct {
	// FromSnapshot restores the golden's VolumeSnapshot (snapshot.go).
	FromSnapshot bool
	// Copy asks CDI for a host-assisted copy of the golden's PVC.
	Copy *read.CopyPath
}

// ClonesPVC reports the default: what Requirements renders.
func (d DiskSource) ClonesPVC() bool { return !d.FromSnapshot && d.Copy == nil }

// copyAnnotations are what a disk template of the copy path carries beside
// diskAnnotations: CDI's cloneType, which asks CDI for the copy, and the
// golden's class, which says on the disk and its template that the copy was
// chosen and from where (copyOf, cloneHealth).
func copyAnnotations(c *read.CopyPath) map[string]string {
	return map[string]string{
		labels.AnnCDICloneType:         string(cdiv1.CloneStrategyHostAssisted),
		labels.AnnCopyFromStorageClass: c.GoldenClass,
	}
}
