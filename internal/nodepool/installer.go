package nodepool

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/poolspec"
	"github.com/cozystack/function-worker-image/internal/rules"
	"github.com/cozystack/function-worker-image/internal/talosimage"
)

// resolveInstallerRepository decides where the pool's workers pull their
// installer from (poolspec.Installer). It is decided only when the pool
// composes, so a factory that makes no installer is reported by the pool.
func resolveInstallerRepository(p pool, spec v1alpha1.NodePoolSpec, cfg config.Config, img image) (setting, error) {
	repo, errs := poolspec.Installer(poolspec.NodePoolLayers(field.NewPath("spec"), spec, cfg), img)
	if len(errs) > 0 {
		return setting{}, refused(p.Ref(), errors.New(rules.Message(errs)))
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

// installerCondition warns when an explicit installer repository is an Image
// Factory installer of another platform than the disk, on a Talos version
// whose upgrades take the kernel command line from the installer (1.12 on:
// CABPT sets install.grubUseUKICmdline). Such a worker upgraded with the
// metal installer becomes talos.platform=metal and stops reading its config
// drive. Composites created while the XRDs defaulted installerRepository to
// factory.talos.dev/installer carry that value in their stored spec, so this
// is what tells their owners to remove it. It warns, never holds: the
// explicit value is the platform's to choose.
func installerCondition(p pool, repo setting, diskPlatform, version string) compose.Condition {
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
