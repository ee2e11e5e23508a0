package decide

import (
	"fmt"

	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/matrix"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
)

// CheckSupportMatrix checks the Kubernetes minor against the pool's Talos
// version and, when osImage overrides it, against the version the pool
// actually boots: an override must not be a way around the matrix. A known
// bad pairing is fatal; a Talos minor the table does not list is allowed and
// reported, because refusing every new Talos release would block upgrades.
func CheckSupportMatrix(p pool.Pool, t matrix.Table, s pool.Shape, img pool.Image) (compose.Condition, error) {
	k8s := s.KubernetesVersion.Value // a minor, validated where it was set
	checks := []struct {
		talos  pool.Setting
		remedy string
	}{
		{s.TalosVersion, fmt.Sprintf("Change %s or set %s to a Talos release that supports it.", s.KubernetesVersion.Field, s.TalosVersion.Field)},
	}
	// The resolved version differs from the pool default only through an
	// osImage override, so the remedy names the override.
	if img.Version.Value != s.TalosVersion.Value {
		checks = append(checks, struct {
			talos  pool.Setting
			remedy string
		}{img.Version, fmt.Sprintf("Node pool %q reaches this Talos release through %s, not through %s. Change %s, change %s, or drop the override so the pool follows %s.",
			p.Ref(), img.Version.Field, s.TalosVersion.Field, s.KubernetesVersion.Field, img.Version.Field, s.TalosVersion.Field)})
	}

	var unknown []string
	for _, c := range checks {
		res := t.Check(c.talos.Value, k8s)
		switch res.Verdict {
		case matrix.Unsupported:
			return compose.Condition{}, pool.Refused(p.Ref(), fmt.Errorf("%s: %s", c.talos.Field, res.Message(s.KubernetesVersion.Value, c.talos.Value, c.remedy)))
		case matrix.Unknown:
			unknown = append(unknown, fmt.Sprintf("%s %s", c.talos.Field, c.talos.Value))
		}
	}
	if len(unknown) > 0 {
		return matrix.UnknownCondition(fmt.Sprintf("Node pool %q: the support matrix has no row for %s, so Kubernetes %s is allowed unchecked. Add the Talos minor to the Input's supportMatrix to have it checked.",
			p.Ref(), pool.JoinAnd(unknown), s.KubernetesVersion.Value)), nil
	}
	return matrix.SupportedCondition(img.Version.Value, s.KubernetesVersion.Value), nil
}
