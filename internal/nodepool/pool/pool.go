package pool

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossplane/function-sdk-go/resource/composite"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/decode"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/observed"
	"github.com/cozystack/function-worker-image/internal/poolspec"
	"github.com/cozystack/function-worker-image/internal/rules"
)

// Refused is the fatal error of the pool ref ("<namespace>/<name>"): every
// fatal result of this mode names the composite first, as the tenant
// cluster's and the catalog's do, so that a message read from an event or a
// log says which pool to fix.
func Refused(ref string, err error) error {
	return fmt.Errorf("%s %q: %w", v1alpha1.KindNodePool, ref, err)
}

// LabelClaimNamespace is set by Crossplane on a legacy cluster-scoped
// composite that backs a claim; the pool lives in the claim's namespace.
const LabelClaimNamespace = "crossplane.io/claim-namespace"

// Pool identifies a node pool: the namespace its objects live in, the Cluster
// API cluster it joins and its name inside that cluster.
type Pool struct {
	Namespace string
	Cluster   string
	Name      string
}

// Ref is "<namespace>/<cluster>-<pool>", the name messages use.
func (p Pool) Ref() string { return labels.PoolRef(p.Namespace, p.Cluster, p.Name) }

// Hash is the pool's label value.
func (p Pool) Hash() string { return labels.PoolHash(p.Namespace, p.Cluster, p.Name) }

// DeploymentName is the MachineDeployment name, "<cluster>-<pool>".
func (p Pool) DeploymentName() string { return labels.PoolName(p.Cluster, p.Name) }

// ReadPool decodes the composite's identity and spec once and resolves the
// spec with poolspec, the rules the tenant cluster resolves its pools with;
// every problem is reported at once, by path.
func ReadPool(xr *composite.Unstructured, cfg config.Config) (Pool, v1alpha1.NodePoolSpec, poolspec.Pool, error) {
	spec := v1alpha1.NodePoolSpec{}
	root := field.NewPath("spec")
	raw := xr.Object["spec"]
	rawMap, _ := raw.(map[string]any)
	errs, skip := poolspec.AsWritten(root, rawMap)
	errs = append(errs, decode.Into(raw, root, &spec, skip...)...)

	p := Pool{Namespace: xr.GetNamespace(), Cluster: spec.ClusterName, Name: spec.PoolName}
	if p.Namespace == "" {
		p.Namespace = xr.GetLabels()[LabelClaimNamespace]
	}
	if p.Name == "" {
		p.Name = strings.TrimPrefix(xr.GetName(), p.Cluster+"-")
	}
	var resolved poolspec.Pool
	if len(errs) == 0 {
		// Values are checked once they have their types: a value left out
		// for its type would be reported again as missing.
		resolved, errs = poolspec.NodePool(root, spec, p.Name, cfg)
	}
	if p.Namespace == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "namespace"), fmt.Sprintf("an XNodePool has no namespace and no %s label; create it in the tenant namespace (or through a claim) so its MachineDeployment and templates have a namespace to live in", LabelClaimNamespace)))
	}
	if len(errs) > 0 {
		return Pool{}, spec, poolspec.Pool{}, Refused(observed.Ref(&xr.Unstructured), errors.New(rules.Message(errs)))
	}
	return p, spec, resolved, nil
}

// JoinAnd lists s as "a, b and c".
func JoinAnd(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
