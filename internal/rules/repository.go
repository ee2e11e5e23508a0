package rules

import (
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// InstallerRepositoryPattern is a registry repository host[:port]/path,
// lowercase, as an image reference names it (distribution's reference
// grammar, restricted to what the installer image needs).
const InstallerRepositoryPattern = `^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]+)?(/[a-z0-9]([-a-z0-9._]*[a-z0-9])?)*/?$`

// maxRepositoryLength is the XRDs' maxLength of a repository, a trailing slash included.
const maxRepositoryLength = 255

var repository = regexp.MustCompile(InstallerRepositoryPattern)

// InstallerRepository checks the repository a worker pulls its installer
// image from. A trailing slash is tolerated: the image name is joined to it.
func InstallerRepository(path *field.Path, v string) field.ErrorList {
	if strings.TrimSuffix(v, "/") == "" {
		v = ""
	}
	return bounded(path, v, maxRepositoryLength, repository,
		"set a registry repository such as factory.talos.dev/openstack-installer",
		"write a registry repository such as factory.talos.dev/openstack-installer",
		"is not a lowercase registry repository such as factory.talos.dev/openstack-installer; it becomes the worker's installer image")
}
