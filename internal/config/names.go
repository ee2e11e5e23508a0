package config

import (
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation"
)

var pathSegment = regexp.MustCompile(`^[a-z0-9]([-a-z0-9_]*[a-z0-9])?$`)

func validateDNSLabel(field, v string) error {
	if errs := validation.IsDNS1123Label(v); len(errs) > 0 {
		return fmt.Errorf("input: %s %q is not a valid namespace name: %s", field, v, errs[0])
	}
	return nil
}

func validatePathSegment(field, v string) error {
	if len(v) > 63 || !pathSegment.MatchString(v) {
		return fmt.Errorf("input: %s %q is not a plain lowercase identifier such as openstack or amd64; it is part of the image URL", field, v)
	}
	return nil
}

// validateServiceAccountName checks a ServiceAccount name: a DNS subdomain,
// as the API server validates it (apimachinery's path-segment and subdomain
// rules for ServiceAccount.metadata.name).
func validateServiceAccountName(field, v string) error {
	if errs := validation.IsDNS1123Subdomain(v); len(errs) > 0 {
		return fmt.Errorf("input: %s %q is not a valid ServiceAccount name: %s; name the account the worker VMs run as (default %q)", field, v, errs[0], "default")
	}
	return nil
}
