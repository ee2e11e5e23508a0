package rules

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// number is a decimal without a leading zero (0 itself is allowed), of at
// most nine digits: nine always fit an int, so no version that passes can
// overflow where it is compared.
const number = `(0|[1-9][0-9]{0,8})`

// preRelease is a Talos pre-release such as -alpha.0 or -beta.1: dot
// separated identifiers, none empty, a numeric one without a leading zero
// (semver 2.0.0 §9). Talos tags are lowercase; an uppercase or empty
// identifier would make the golden name an invalid DNS-1123 subdomain.
const preRelease = `(-(0|[1-9][0-9]*|[0-9]*[a-z][0-9a-z]*)(\.(0|[1-9][0-9]*|[0-9]*[a-z][0-9a-z]*))*)?`

// MaxVersionLength bounds a Talos version: it is interpolated into the
// golden DataVolume name, which must stay inside 253 characters with the
// schematic.
const MaxVersionLength = 64

// KubernetesMinorPattern is a Kubernetes minor, shared with the XRDs.
const KubernetesMinorPattern = `^v` + number + `\.` + number + `$`

var (
	// kubernetesMinor is vMAJOR.MINOR, which is also how a Talos minor is
	// written (a support-matrix row).
	kubernetesMinor = regexp.MustCompile(KubernetesMinorPattern)
	talosRelease    = regexp.MustCompile(TalosVersionPattern)
)

// TalosVersionPattern is the pattern of a Talos release, shared by the code
// and the XRD schemas (Go's RE2 and the API server's OpenAPI pattern agree on
// it).
const TalosVersionPattern = `^v` + number + `\.` + number + `\.` + number + preRelease + `$`

// KubernetesMinor checks a Kubernetes minor such as v1.35: exactly
// vMAJOR.MINOR, decimal numbers without leading zeros, at most nine digits
// each, nothing before or after. A tenant cluster, a node pool and the Input
// name a minor, as the XRDs do: Talos picks the patch of the Kubernetes it
// installs.
func KubernetesMinor(path *field.Path, v string) field.ErrorList {
	if kubernetesMinor.MatchString(v) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, Quoted(v), "is not a Kubernetes minor such as v1.35; write vMAJOR.MINOR without leading zeros, Talos picks the patch")}
}

// TalosVersion checks a Talos release such as v1.13.6 or v1.14.0-alpha.0:
// the Image Factory publishes artifacts for nothing else, and the version is
// interpolated into the golden's name, the disk URL and the installer image.
func TalosVersion(path *field.Path, v string) field.ErrorList {
	return bounded(path, v, MaxVersionLength, talosRelease,
		"set a Talos release such as v1.13.6",
		"use a Talos release such as v1.13.6",
		"is not a vMAJOR.MINOR.PATCH Talos release (e.g. v1.13.6 or v1.14.0-alpha.0, no leading zeros); the Image Factory publishes no artifact for anything else")
}

// TalosMinor checks a Talos minor such as v1.13, as a support-matrix row
// names it.
func TalosMinor(path *field.Path, v string) field.ErrorList {
	if kubernetesMinor.MatchString(v) { // a minor is vMAJOR.MINOR for Talos too
		return nil
	}
	return field.ErrorList{field.Invalid(path, Quoted(v), "is not a Talos minor such as v1.13; a support-matrix row names a minor, without patch, suffix or leading zeros")}
}

// Version is the (major, minor) of a Talos or Kubernetes version: every
// check the function makes on a version (the support matrix, the installer
// naming, the Join control-plane guard) compares these two numbers alone.
type Version struct{ Major, Minor int }

// Compare orders versions by major, then minor, as cmp.Compare does.
func (v Version) Compare(o Version) int {
	return cmp.Or(cmp.Compare(v.Major, o.Major), cmp.Compare(v.Minor, o.Minor))
}

// String is vMAJOR.MINOR, how a minor is written.
func (v Version) String() string { return fmt.Sprintf("v%d.%d", v.Major, v.Minor) }

// ParseMinor is the Version of a version these rules accepted: a Talos
// release or minor, or a Kubernetes minor. ok is false for anything else,
// so a caller can never compare a version that slipped past its rule.
func ParseMinor(v string) (Version, bool) {
	for _, re := range []*regexp.Regexp{talosRelease, kubernetesMinor} {
		if m := re.FindStringSubmatch(v); m != nil {
			return atoiVersion(m[1], m[2])
		}
	}
	return Version{}, false
}

// leadingMinor is a version's leading major.minor, with or without the v,
// ended by a dot or the string.
var leadingMinor = regexp.MustCompile(`^v?` + number + `\.` + number + `(\.|$)`)

// LeadingMinor is the Version a version that no rule here checked starts
// with, such as a control plane's spec.version (Kamaji writes v1.35.6, the
// kubernetes-nodes chart reads 1.35 too). ok is false when there is none.
func LeadingMinor(v string) (Version, bool) {
	m := leadingMinor.FindStringSubmatch(v)
	if m == nil {
		return Version{}, false
	}
	return atoiVersion(m[1], m[2])
}

// atoiVersion converts numbers the patterns bounded to nine digits, which
// always fit an int.
func atoiVersion(major, minor string) (Version, bool) {
	maj, err1 := strconv.Atoi(major)
	mnr, err2 := strconv.Atoi(minor)
	return Version{Major: maj, Minor: mnr}, err1 == nil && err2 == nil
}
