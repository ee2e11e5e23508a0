package rules

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestJoinOptionRules(t *testing.T) {
	path := field.NewPath("join", "x")
	cases := map[string]struct {
		reason string
		errs   field.ErrorList
		ok     bool
	}{
		"ChartSecretSuffix":        {reason: "cozystack's Talos secrets Secret is <cluster>-talos-secrets.", errs: NameSuffix(path, "-talos-secrets"), ok: true},
		"EmptySuffix":              {reason: "Kamaji's API server Service is named like the cluster.", errs: NameSuffix(path, ""), ok: true},
		"SuffixEndingInDash":       {reason: "A name cannot end in -.", errs: NameSuffix(path, "-ca-")},
		"UppercaseSuffix":          {reason: "Object names are lowercase.", errs: NameSuffix(path, "-CA")},
		"SuffixWithDot":            {reason: "A Service name is a DNS label: no dot.", errs: NameSuffix(path, ".ca")},
		"ChartPodSubnet":           {reason: "The chart's pod network.", errs: Subnet(path, "10.243.0.0/16"), ok: true},
		"IPv6Subnet":               {reason: "Talos takes IPv6 networks too.", errs: Subnet(path, "fd00:10:96::/112"), ok: true},
		"HostBitsSet":              {reason: "A network with host bits is not how the control plane writes it.", errs: Subnet(path, "10.243.1.0/8")},
		"NotACIDR":                 {reason: "An address is no network.", errs: Subnet(path, "10.243.0.0")},
		"ClusterLocal":             {reason: "The tenant default.", errs: DNSDomain(path, "cluster.local"), ok: true},
		"DomainWithUnderscore":     {reason: "Not a DNS name.", errs: DNSDomain(path, "cozy_local")},
		"KamajiControlPlane":       {reason: "The chart's control plane.", errs: APIVersionKind(path, "apiVersion", "kind", "controlplane.cluster.x-k8s.io/v1alpha1", "KamajiControlPlane"), ok: true},
		"CoreGroup":                {reason: "A core kind has no group.", errs: APIVersionKind(path, "apiVersion", "kind", "v1", "Service"), ok: true},
		"APIVersionWithoutVersion": {reason: "A group alone is no apiVersion.", errs: APIVersionKind(path, "apiVersion", "kind", "controlplane.cluster.x-k8s.io", "KamajiControlPlane")},
		"LowercaseKind":            {reason: "Kinds are CamelCase.", errs: APIVersionKind(path, "apiVersion", "kind", "v1", "service")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := len(tc.errs) == 0; got != tc.ok {
				t.Errorf("%s\nerrors = %v, want ok %t", tc.reason, tc.errs, tc.ok)
			}
		})
	}
}
