package rules

import (
	"net/netip"
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The rules of the Input's join options (the Join bootstrap mode): what
// becomes part of an object name the function requires, and the tenant
// network written into every Join worker's Talos config.

var (
	nameSuffix = regexp.MustCompile(`^([-a-z0-9]*[a-z0-9])?$`)
	apiVersion = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?v[0-9]+((alpha|beta)[0-9]+)?$`)
	kind       = regexp.MustCompile(`^[A-Z][A-Za-z0-9]{0,62}$`)
)

// MaxNameSuffix bounds a suffix appended to a cluster name (at most 63
// characters) so that the Secret it names stays well inside 253.
const MaxNameSuffix = 63

// NameSuffix checks a suffix the function appends to a cluster's name to
// name a Secret or Service it requires: lowercase letters, digits and -,
// not ending in -, or empty (the cluster's name itself).
func NameSuffix(path *field.Path, v string) field.ErrorList {
	if len(v) > MaxNameSuffix || !nameSuffix.MatchString(v) {
		return field.ErrorList{field.Invalid(path, Quoted(v), "is not a name suffix such as -talos-secrets: lowercase letters, digits and -, at most 63 characters, not ending in -; it is appended to the cluster's name")}
	}
	return nil
}

// Subnet checks a CIDR written into the workers' Talos config as the tenant
// cluster's pod or service network: an IPv4 or IPv6 prefix in its canonical
// form (10.243.0.0/16, not 10.243.1.0/16), which is how Talos and the
// control plane compare it.
func Subnet(path *field.Path, v string) field.ErrorList {
	p, err := netip.ParsePrefix(v)
	if err != nil {
		return field.ErrorList{field.Invalid(path, Quoted(v), "is not a CIDR such as 10.243.0.0/16; it must be the control plane's network")}
	}
	if p.Masked() != p {
		return field.ErrorList{field.Invalid(path, Quoted(v), "has host bits set; write the network "+p.Masked().String())}
	}
	return nil
}

// DNSDomain checks a cluster DNS domain such as cluster.local.
func DNSDomain(path *field.Path, v string) field.ErrorList {
	return subdomainName(path, v, "a DNS domain", "write a domain such as cluster.local")
}

// APIVersionKind checks the apiVersion and kind of an object the function
// requires by name.
func APIVersionKind(path *field.Path, apiVersionField, kindField, av, k string) field.ErrorList {
	var errs field.ErrorList
	if len(av) > 253 || !apiVersion.MatchString(av) {
		errs = append(errs, field.Invalid(path.Child(apiVersionField), Quoted(av), "is not an apiVersion such as controlplane.cluster.x-k8s.io/v1alpha1"))
	}
	if !kind.MatchString(k) {
		errs = append(errs, field.Invalid(path.Child(kindField), Quoted(k), "is not a kind such as KamajiControlPlane"))
	}
	return errs
}
