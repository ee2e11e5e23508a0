package tenantcluster

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/matrix"
)

// Condition types and reasons of the tenant cluster; the support matrix's
// are matrix.ConditionType and its reasons.
const (
	TypeNodePoolsReady = "NodePoolsReady"

	ReasonAllPoolsReady = "AllPoolsReady"
	ReasonPoolsNotReady = "PoolsNotReady"
)

// matrixRemedy is how a user gets out of a known-bad pairing at cluster level.
const matrixRemedy = "Bump the tenant cluster's version or set talos.version explicitly."

// checkSupport checks the cluster's Kubernetes minor against its Talos
// release. A known-bad pairing is an error (fatal: the user must fix the
// spec); a Talos minor the table does not list is allowed and reported,
// because refusing every new Talos release until the table catches up would
// block upgrades.
func checkSupport(cfg config.Config, kubernetesVersion, talosVersion string) (compose.Condition, error) {
	t := matrix.FromConfig(cfg)
	res := t.Check(talosVersion, kubernetesVersion)
	switch res.Verdict {
	case matrix.Unsupported:
		return compose.Condition{}, errors.New(res.Message(kubernetesVersion, talosVersion, matrixRemedy))
	case matrix.Unknown:
		return matrix.UnknownCondition(fmt.Sprintf("Talos %s is not in the support matrix (it lists %s), so Kubernetes %s on it is allowed unchecked; add a supportMatrix entry for %s to the function's Input once its support range is known.",
			talosVersion, strings.Join(t.Minors(), ", "), kubernetesVersion, res.TalosMinor)), nil
	default:
		return matrix.SupportedCondition(talosVersion, kubernetesVersion), nil
	}
}
