package nodepool

import (
	"fmt"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/talosimage"
)

// resolveInstallerRepository decides where the pool's workers pull their
// installer from: spec.talos.installerRepository, else the Input's
// talos.installerRepository, each verbatim; else the Image Factory installer
// that matches the disk the pool boots, on the pool's factory, for the
// platform of the disk image (Input image.platform) and the resolved version
// (talosimage.DefaultInstallerRepository says why the flavour matters).
//
// The pool's factory is its resolved image factory URL
// (spec.osImage.factory.imageFactoryURL, spec.talos.imageFactoryURL, the
// Input's), on the clone path too: the golden was imported from the
// catalog's factory, which the pool cannot see without making its template
// depend on observed state, and a platform points its pools and catalog at
// the same factory.
func resolveInstallerRepository(p pool, spec v1alpha1.NodePoolSpec, cfg config.Config, img image) (setting, error) {
	explicit := first(setting{spec.Talos.InstallerRepository, "spec.talos.installerRepository"}, setting{cfg.InstallerRepository, "Input talos.installerRepository"})
	if explicit.Value != "" {
		if err := talosimage.ValidateInstallerRepository(explicit.Value); err != nil {
			return setting{}, fieldError(p, explicit.Field, err)
		}
		return explicit, nil
	}
	repo, err := talosimage.DefaultInstallerRepository(img.FactoryURL.Value, cfg.Platform, img.Version.Value)
	if err == nil {
		err = talosimage.ValidateInstallerRepository(repo)
	}
	if err != nil {
		return setting{}, fmt.Errorf("node pool %q: %s: %w; the default installer repository is derived from this URL, so fix it or set spec.talos.installerRepository", p.Ref(), img.FactoryURL.Field, err)
	}
	return setting{repo, img.FactoryURL.Field + " and Input image.platform"}, nil
}
