package decide

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/poolspec"
	"github.com/cozystack/function-worker-image/internal/rules"
	"github.com/cozystack/function-worker-image/internal/talosimage"
)

// ResolveInstallerRepository is the workers' installer (poolspec.Installer),
// decided in Compose so that the pool reports a factory that makes none.
func ResolveInstallerRepository(p pool.Pool, spec v1alpha1.NodePoolSpec, cfg config.Config, img pool.Image) (pool.Setting, error) {
	repo, errs := poolspec.Installer(poolspec.NodePoolLayers(field.NewPath("spec"), spec, cfg), img)
	if len(errs) > 0 {
		return pool.Setting{}, pool.Refused(p.Ref(), errors.New(rules.Message(errs)))
	}
	return repo, nil
}

// ConditionInstallerMatchesDisk says whether the pool's installer is the
// flavour of the disk it boots.
const ConditionInstallerMatchesDisk = "InstallerMatchesDisk"

// Reasons of ConditionInstallerMatchesDisk.
const (
	ReasonInstallerMatches         = "InstallerMatchesDisk"
	ReasonInstallerOtherPlatform   = "InstallerOfAnotherPlatform"
	ReasonInstallerPlatformUnknown = "InstallerPlatformUnknown"
)

// InstallerCondition warns when an explicit installer is a factory installer
// of another platform than the disk on Talos 1.12 or later, where a worker
// so upgraded stops reading its config drive
// (talosimage.DefaultInstallerRepository); stored specs may carry the old
// default factory.talos.dev/installer. It never holds: the value is explicit.
func InstallerCondition(p pool.Pool, repo pool.Setting, diskPlatform, version string) compose.Condition {
	ok := compose.Condition{Type: ConditionInstallerMatchesDisk, Status: compose.StatusTrue, Reason: ReasonInstallerMatches,
		Message: fmt.Sprintf("Node pool %q upgrades with installer %s, the flavour of its %s disk.", p.Ref(), repo.Value, diskPlatform)}
	platform, known := talosimage.InstallerPlatform(repo.Value)
	switch {
	case !talosimage.AtLeast(version, 1, 12):
		return ok
	case !known:
		return compose.Condition{Type: ConditionInstallerMatchesDisk, Status: compose.StatusUnknown, Reason: ReasonInstallerPlatformUnknown,
			Message: fmt.Sprintf("Node pool %q upgrades with installer repository %q (from %s), which is not named like an Image Factory installer, so whether it is the %s flavour of the disk cannot be told; from Talos 1.12 an upgrade takes talos.platform from the installer.", p.Ref(), repo.Value, repo.Field, diskPlatform)}
	case platform != diskPlatform:
		return compose.Condition{Type: ConditionInstallerMatchesDisk, Status: compose.StatusFalse, Reason: ReasonInstallerOtherPlatform,
			Message: fmt.Sprintf("Node pool %q boots %s disks but %s %q is the %s installer; from Talos 1.12 an upgrade takes the kernel command line, talos.platform included, from the installer, so its workers would come back as %s and stop reading their config drive. Remove %s to let the function derive the %s installer of the pool's factory, or set it to a repository named %s-installer.", p.Ref(), diskPlatform, repo.Field, repo.Value, platform, platform, repo.Field, diskPlatform, diskPlatform)}
	}
	return ok
}
