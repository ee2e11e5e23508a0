// Package rules holds the product's validation rules, each defined once and
// used by every mode: a rule takes the field path it checks and returns a
// field.ErrorList (k8s.io/apimachinery util/validation/field), so the tenant
// cluster and the node pool report the same problem from the same code, each
// at its own path.
package rules

import (
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// number is a decimal without a leading zero (0 itself is allowed), of at
// most nine digits: nine always fit an int, so no version that passes can
// overflow where it is compared.
const number = `(0|[1-9][0-9]{0,8})`

var (
	kubernetesMinor   = regexp.MustCompile(`^v` + number + `\.` + number + `$`)
	kubernetesRelease = regexp.MustCompile(`^v` + number + `\.` + number + `\.` + number + `$`)
)

// KubernetesMinor checks a Kubernetes minor such as v1.35: exactly
// vMAJOR.MINOR, decimal numbers without leading zeros, at most nine digits
// each, nothing before or after. A tenant cluster and the Input name a minor:
// Talos picks the patch of the Kubernetes it installs.
func KubernetesMinor(path *field.Path, v string) field.ErrorList {
	if kubernetesMinor.MatchString(v) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, quoted(v), "is not a Kubernetes minor such as v1.35")}
}

// KubernetesVersion checks what a node pool's spec.version may be: a minor
// (KubernetesMinor) or a release such as v1.35.2, with the same number rules.
func KubernetesVersion(path *field.Path, v string) field.ErrorList {
	if kubernetesMinor.MatchString(v) || kubernetesRelease.MatchString(v) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, quoted(v), "is not a Kubernetes version such as v1.35 or v1.35.2")}
}

// IsKubernetesRelease reports whether a valid KubernetesVersion names a
// release (has a patch) rather than a minor.
func IsKubernetesRelease(v string) bool { return kubernetesRelease.MatchString(v) }

// maxQuoted bounds a value quoted in a message.
const maxQuoted = 64

// quoted is v cut to maxQuoted bytes on a rune boundary, so that a message
// quoting a bad value is short and always valid UTF-8.
func quoted(v string) string {
	if len(v) <= maxQuoted {
		return v
	}
	cut := maxQuoted
	for cut > 0 && !isRuneStart(v[cut]) {
		cut--
	}
	return strings.ToValidUTF8(v[:cut], "") + "..."
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
