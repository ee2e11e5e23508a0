package rules

import (
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// kubernetesRelease is vMAJOR.MINOR.PATCH, the version a Machine runs and the
// tag of Talos' kubelet image (ghcr.io/siderolabs/kubelet:<release>).
var kubernetesRelease = regexp.MustCompile(`^v` + number + `\.` + number + `\.` + number + `$`)

// KubernetesReleaseRow checks one row of the Kubernetes release table: a
// minor and the patch release its pools run, which must be a release of that
// very minor. A release of another minor would run workers on a Kubernetes
// the support matrix never checked; a pre-release has no kubelet image a
// platform ships.
func KubernetesReleaseRow(path *field.Path, minor, release string) field.ErrorList {
	errs := KubernetesMinor(path.Child("minor"), minor)
	if !kubernetesRelease.MatchString(release) {
		errs = append(errs, field.Invalid(path.Child("release"), Quoted(release), "is not a Kubernetes release such as v1.35.6; write vMAJOR.MINOR.PATCH without leading zeros or suffix"))
	}
	if len(errs) > 0 {
		return errs
	}
	m := kubernetesRelease.FindStringSubmatch(release)
	if "v"+m[1]+"."+m[2] != minor {
		return field.ErrorList{field.Invalid(path.Child("release"), Quoted(release), "is not a release of minor "+minor+"; name a "+minor+".PATCH release")}
	}
	return nil
}
