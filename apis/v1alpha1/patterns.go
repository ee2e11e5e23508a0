package v1alpha1

import (
	"encoding/json"
	"fmt"
)

// The string formats of the API, one alias per pattern, so that each pattern
// (and, where it does not vary, its length limit) is written exactly once:
// controller-gen applies an alias's markers to every field declared with it.
// They are aliases rather than named types so that the function's code keeps
// handling plain strings.
//
// The comment on each alias is kept apart from it by a blank line on purpose:
// a doc comment would become the schema description of every list item
// declared with the alias (talos.registryMirrors[*].endpoints[]), which the
// API does not describe.

// An http(s) URL in the function's one closed URL grammar (internal/rules
// URLPattern, which a test holds this to): a DNS name or IP host, optional
// port and path, no userinfo, query or fragment.
// +kubebuilder:validation:Pattern=`^https?://(([A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?\.)*[A-Za-z]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?|(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}|\[(([0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|([0-9A-Fa-f]{1,4}:){1,7}:|([0-9A-Fa-f]{1,4}:){1,6}:[0-9A-Fa-f]{1,4}|([0-9A-Fa-f]{1,4}:){1,5}(:[0-9A-Fa-f]{1,4}){1,2}|([0-9A-Fa-f]{1,4}:){1,4}(:[0-9A-Fa-f]{1,4}){1,3}|([0-9A-Fa-f]{1,4}:){1,3}(:[0-9A-Fa-f]{1,4}){1,4}|([0-9A-Fa-f]{1,4}:){1,2}(:[0-9A-Fa-f]{1,4}){1,5}|[0-9A-Fa-f]{1,4}:(:[0-9A-Fa-f]{1,4}){1,6}|:((:[0-9A-Fa-f]{1,4}){1,7}|:))\])(:([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?(/([A-Za-z0-9._~!*+,;=:@-]|%[0-9A-Fa-f]{2})*)*$`
// +kubebuilder:validation:MaxLength=512

type URL = string

// A resource quantity as Kubernetes writes one (resource.ParseQuantity's
// grammar, k8s.io/apimachinery/pkg/api/resource/quantity.go): an integer
// (memory: 4294967296, cpu: 4) or a string such as 6Gi, 1500m, 0.5, +2, 1e1
// or 100u. The pattern is apimachinery's without the minus sign, as no size
// here can be negative; the function then bounds each value.
// +kubebuilder:validation:Type=""
// +kubebuilder:validation:XIntOrString
// +kubebuilder:validation:Pattern=`^\+?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`
// +kubebuilder:validation:MaxLength=32

type Quantity string

// A CPU count as a quantity, with Quantity's grammar and schema: whole or
// decimal cores, or millicores (1500m); an integer too (cpu: 4). The name
// says what the value counts.

type CPUQuantity = Quantity

// An RFC 1123 label: a namespace, a cluster or pool name. Schematic IDs
// (64 hex characters for a real schematic) use the same character set.
// The length limit differs by field (63 for names, 64 for schematic IDs), so
// each field sets its own.
// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`

type DNSLabel = string

// What a pool names its image by on the HTTP path (internal/rules
// SchematicPathPattern): a schematic ID, or the multi-segment path a
// self-hosted factory or mirror serves, such as gpu/nvidia-open; each
// segment an OCI repository path component, as the installer image
// <installerRepository>/<schematic>:<version> carries it.
// +kubebuilder:validation:Pattern=`^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*$`
// +kubebuilder:validation:MaxLength=255

type SchematicPath = string

// An RFC 1123 subdomain: a StorageClass or instance type name.
// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
// +kubebuilder:validation:MaxLength=253

type DNSSubdomain = string

// A Talos release, vMAJOR.MINOR.PATCH[-pre], without leading zeros
// (internal/rules TalosVersionPattern).
// +kubebuilder:validation:Pattern=`^v(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})(-(0|[1-9][0-9]*|[0-9]*[a-z][0-9a-z]*)(\.(0|[1-9][0-9]*|[0-9]*[a-z][0-9a-z]*))*)?$`
// +kubebuilder:validation:MaxLength=64

type TalosVersion = string

// A Kubernetes minor, vMAJOR.MINOR, without leading zeros (internal/rules
// KubernetesMinor).
// +kubebuilder:validation:Pattern=`^v(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})$`
// +kubebuilder:validation:MaxLength=16

type KubernetesMinor = string

// An OCI repository without tag or digest: host[:port]/path, lowercase
// (internal/rules InstallerRepositoryPattern).
// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]+)?(/[a-z0-9]([-a-z0-9._]*[a-z0-9])?)*/?$`
// +kubebuilder:validation:MaxLength=255

type Repository = string

// A node role: the name part of the label key node-role.kubernetes.io/<role>
// (a Kubernetes label name: at most 63 alphanumerics, '-', '_' or '.',
// starting and ending alphanumeric; internal/rules NodeRole).
// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
// +kubebuilder:validation:MaxLength=63

type NodeRole = string

// LabelValue is a Kubernetes label value: up to 63 letters, digits, '-',
// '_' or '.', starting and ending alphanumeric, or empty.
// +kubebuilder:validation:Pattern=`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
// +kubebuilder:validation:MaxLength=63
type LabelValue = string

// KernelModuleParameter is one kernel module parameter, key=value, with no
// control characters, whitespace, quotes, backslash, backtick or dollar.
// +kubebuilder:validation:Pattern=`^[^\x00-\x20\x7f$\x60\\'"]+$`
// +kubebuilder:validation:MaxLength=256
type KernelModuleParameter = string

// EvictionThreshold is a kubelet eviction threshold: a percentage greater
// than 0 and at most 100 (7%, 7.5%), or a quantity (500Mi).
// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?%|[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?)$`
// +kubebuilder:validation:MaxLength=32
type EvictionThreshold = string

// A duration as a whole number of s, m or h, up to three segments, the first
// positive (30m, 1h30m, and the canonical 20m0s): the kubernetes-nodes chart's
// positiveDuration (internal/rules PositiveDurationPattern). Narrower than Go's
// syntax on purpose: no fraction that rounds to zero, no value that overflows.
// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,4}[smh]([0-9]{1,5}[smh]){0,2}$`
// +kubebuilder:validation:MaxLength=20

type PositiveDuration = string

// A count ("1") or a percentage ("50%") of a pool's workers (internal/rules
// CountOrPercent).
// +kubebuilder:validation:Pattern=`^[0-9]{1,4}%?$`
// +kubebuilder:validation:MaxLength=5
// +kubebuilder:validation:XValidation:rule=`!self.matches('^[0-9]{1,4}%?$') || (self.endsWith('%') ? int(self.substring(0, size(self) - 1)) <= 100 : int(self) <= 1000)`,message="must be a count from 0 to 1000 or a percentage from 0% to 100%"

type CountOrPercent = string

// UnmarshalJSON reads a quantity as the API server stores it: a string, or
// an integer (x-kubernetes-int-or-string), kept as it is written so that
// the function parses every spelling once, with resource.ParseQuantity.
func (q *Quantity) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*q = Quantity(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("a quantity is a string such as 4Gi or an integer, not %s", b)
	}
	*q = Quantity(n.String())
	return nil
}
