package nodepool

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/crossplane/function-sdk-go/resource/composite"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/rules"
)

// LabelClaimNamespace is set by Crossplane on a legacy cluster-scoped
// composite that backs a claim; the pool lives in the claim's namespace.
const LabelClaimNamespace = "crossplane.io/claim-namespace"

// pool identifies a node pool: the namespace its objects live in, the Cluster
// API cluster it joins and its name inside that cluster.
type pool struct {
	Namespace string
	Cluster   string
	Name      string
}

// Ref is "<namespace>/<cluster>-<pool>", the name messages use.
func (p pool) Ref() string { return labels.PoolRef(p.Namespace, p.Cluster, p.Name) }

// Hash is the pool's label value.
func (p pool) Hash() string { return labels.PoolHash(p.Namespace, p.Cluster, p.Name) }

// DeploymentName is the MachineDeployment name, "<cluster>-<pool>".
func (p pool) DeploymentName() string { return p.Cluster + "-" + p.Name }

// readPool reads the composite's identity and spec once. It fails only when
// the composite cannot describe a pool at all; value checks come later.
func readPool(xr *composite.Unstructured) (pool, v1alpha1.NodePoolSpec, error) {
	raw, _ := xr.Object["spec"].(map[string]any)
	// A replica count out of range would fail the int32 decode (or, through
	// a converter that narrows, wrap 4294967297 to 1); it is left out here and
	// reported by checkReplicasAsWritten, which Compose runs.
	if rules.CheckReplicas("spec.replicas", raw["replicas"]) != nil {
		raw = without(raw, "replicas")
	}
	spec, err := decodeSpec(raw)
	if err != nil {
		return pool{}, spec, fmt.Errorf("XNodePool %q: %w", xr.GetName(), err)
	}
	keepPresence(raw, &spec)

	p := pool{Namespace: xr.GetNamespace(), Cluster: spec.ClusterName, Name: spec.PoolName}
	if p.Namespace == "" {
		p.Namespace = xr.GetLabels()[LabelClaimNamespace]
	}
	if p.Namespace == "" {
		return pool{}, spec, fmt.Errorf("XNodePool %q has no namespace and no %s label; create it in the tenant namespace (or through a claim) so its MachineDeployment and templates have a namespace to live in", xr.GetName(), LabelClaimNamespace)
	}
	if p.Cluster == "" {
		return pool{}, spec, fmt.Errorf("XNodePool %q: spec.clusterName is empty; set it to the Cluster API cluster this pool joins", xr.GetName())
	}
	if p.Name == "" {
		p.Name = strings.TrimPrefix(xr.GetName(), p.Cluster+"-")
	}
	// The MachineDeployment name is also the value of the
	// cluster.x-k8s.io/deployment-name label, so it must be a DNS label.
	if errs := validation.IsDNS1123Label(p.DeploymentName()); len(errs) > 0 {
		return pool{}, spec, fmt.Errorf("XNodePool %q: MachineDeployment name %q (spec.clusterName %q + spec.poolName %q) is not a DNS label: %s; shorten the cluster or pool name", xr.GetName(), p.DeploymentName(), p.Cluster, p.Name, errs[0])
	}
	return p, spec, nil
}

// checkReplicasAsWritten checks spec.replicas as the composite carries it,
// before it is narrowed to int32.
func checkReplicasAsWritten(p pool, xr *composite.Unstructured) error {
	raw, _ := xr.Object["spec"].(map[string]any)
	if err := rules.CheckReplicas("spec.replicas", raw["replicas"]); err != nil {
		return poolError(p, err)
	}
	return nil
}

// without is a shallow copy of m without key.
func without(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// checkOSImageKeys refuses keys under spec.osImage that the function does not
// know. A typo such as osImage.buitin would otherwise silently select the
// HTTP path and roll the pool onto a different disk source.
func checkOSImageKeys(xr *composite.Unstructured) error {
	xrName := xr.GetName()
	spec, _ := xr.Object["spec"].(map[string]any)
	raw, ok := spec["osImage"]
	if !ok || raw == nil {
		return nil
	}
	os, ok := raw.(map[string]any)
	if !ok {
		return fmt.Errorf("XNodePool %q: spec.osImage must be an object with at most one of builtin or factory, not %T", xrName, raw)
	}
	allowed := map[string][]string{
		"builtin": {"schematicID", "version"},
		"factory": {"schematicID", "version", "imageFactoryURL"},
	}
	for _, k := range slices.Sorted(maps.Keys(os)) {
		fields, known := allowed[k]
		if !known {
			return fmt.Errorf("XNodePool %q: spec.osImage.%s is not a known field; osImage takes at most one of builtin {schematicID, version} or factory {schematicID, version, imageFactoryURL}", xrName, k)
		}
		member, ok := os[k].(map[string]any)
		if os[k] != nil && !ok {
			return fmt.Errorf("XNodePool %q: spec.osImage.%s must be an object, not %T", xrName, k, os[k])
		}
		for _, f := range slices.Sorted(maps.Keys(member)) {
			if !slices.Contains(fields, f) {
				return fmt.Errorf("XNodePool %q: spec.osImage.%s.%s is not a known field; osImage.%s takes %s", xrName, k, f, k, strings.Join(fields, ", "))
			}
		}
	}
	return nil
}

// keepPresence restores members written as YAML null (osImage: {builtin: }):
// presence, not content, selects the source, as with builtin: {}.
func keepPresence(spec map[string]any, into *v1alpha1.NodePoolSpec) {
	os, ok := spec["osImage"].(map[string]any)
	if !ok {
		return
	}
	if (hasKey(os, "builtin") || hasKey(os, "factory")) && into.OSImage == nil {
		into.OSImage = &v1alpha1.OSImage{}
	}
	if hasKey(os, "builtin") && into.OSImage.Builtin == nil {
		into.OSImage.Builtin = &v1alpha1.BuiltinImage{}
	}
	if hasKey(os, "factory") && into.OSImage.Factory == nil {
		into.OSImage.Factory = &v1alpha1.FactoryImage{}
	}
}

func hasKey(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}
