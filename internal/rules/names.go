package rules

import (
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Namespace checks a namespace name (a DNS-1123 label, as the API server
// validates Namespace.metadata.name). fix says what to set instead.
func Namespace(path *field.Path, v, fix string) field.ErrorList {
	return dnsLabelName(path, v, "a namespace name", fix)
}

// StorageClass checks a StorageClass name. An empty value passes: it means
// the cluster's default class.
func StorageClass(path *field.Path, v string) field.ErrorList {
	if v == "" {
		return nil
	}
	return subdomainName(path, v, "a StorageClass name", "name an existing StorageClass, or leave it empty for the cluster default")
}

// SecretName checks the name of a Secret the function names but never
// reads; empty passes (none).
func SecretName(path *field.Path, v string) field.ErrorList {
	if v == "" {
		return nil
	}
	return subdomainName(path, v, "a Secret name", "name a Secret in the golden namespace")
}

// InstanceType checks a VirtualMachineClusterInstancetype name.
func InstanceType(path *field.Path, v string) field.ErrorList {
	return subdomainName(path, v, "a VirtualMachineClusterInstancetype name", "name an instance type the cluster offers, such as u1.medium")
}

// ServiceAccount checks a ServiceAccount name (a DNS-1123 subdomain, as the
// API server validates ServiceAccount.metadata.name).
func ServiceAccount(path *field.Path, v, fix string) field.ErrorList {
	return subdomainName(path, v, "a ServiceAccount name", fix)
}

// ObjectNameLabel checks a name that becomes both an object name and the
// value of a label, so it must be a DNS-1123 label: a MachineDeployment's
// name is also its cluster.x-k8s.io/deployment-name label. what names the
// object, built says where the name came from, fix what to change.
func ObjectNameLabel(path *field.Path, v, what, fix string) field.ErrorList {
	return dnsLabelName(path, v, what, fix)
}

var pathSegment = regexp.MustCompile(`^[a-z0-9]([-a-z0-9_]*[a-z0-9])?$`)

// PathSegment checks a plain lowercase identifier that becomes one segment
// of the image URL, such as the platform openstack or the arch amd64.
func PathSegment(path *field.Path, v string) field.ErrorList {
	if len(v) > 63 || !pathSegment.MatchString(v) {
		return field.ErrorList{field.Invalid(path, Quoted(v), "is not a plain lowercase identifier such as openstack or amd64; it is part of the image URL")}
	}
	return nil
}

func dnsLabelName(path *field.Path, v, what, fix string) field.ErrorList {
	if errs := validation.IsDNS1123Label(v); len(errs) > 0 {
		return field.ErrorList{field.Invalid(path, Quoted(v), fmt.Sprintf("is not %s (%s); %s", what, errs[0], fix))}
	}
	return nil
}

func subdomainName(path *field.Path, v, what, fix string) field.ErrorList {
	if errs := validation.IsDNS1123Subdomain(v); len(errs) > 0 {
		return field.ErrorList{field.Invalid(path, Quoted(v), fmt.Sprintf("is not %s (%s); %s", what, errs[0], fix))}
	}
	return nil
}

// NameList checks a list of names that is a set: each item non-empty
// (required says what to put there instead), valid by check, and listed
// once, as the schema's listType=set keeps it when the API server sees it.
func NameList(path *field.Path, names []string, check func(*field.Path, string) field.ErrorList, required string) field.ErrorList {
	var errs field.ErrorList
	seen := make(map[string]bool, len(names))
	for i, n := range names {
		p := path.Index(i)
		if n == "" {
			errs = append(errs, field.Required(p, required))
			continue
		}
		errs = append(errs, check(p, n)...)
		if seen[n] {
			errs = append(errs, field.Duplicate(p, n))
		}
		seen[n] = true
	}
	return errs
}
