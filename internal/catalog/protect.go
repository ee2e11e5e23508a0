package catalog

import (
	"fmt"
	"sort"

	fresource "github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/internal/clonerbac"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/labels"
)

// protectRBAC composes the Usages that keep the clone RBAC as long as the
// goldens that need it (clonerbac.BindingUsage, clonerbac.RoleUsage). They
// must exist before the catalog is deleted, since no function runs then; an
// unpinned golden's Usage is deleted at once (Crossplane strips the
// composite label from what it garbage-collects).
//
// Only goldens held anyway get one: each Usage adds to the catalog's
// request, near the 4 MiB limit at 1,000 entries. With Usages turned off in
// the Input, existing ones stay while wanted.
func protectRBAC(into map[fresource.Name]*fresource.DesiredComposed, xrName, goldenNamespace string, plan []planned, obs observedState, enabled bool) error {
	type want struct {
		key fresource.Name
		obj any
	}
	var wanted []want
	seen := map[fresource.Name]bool{}
	for _, p := range plan {
		if p.Raw != nil || (len(p.PinnedBy) == 0 && !p.InUse) {
			continue
		}
		key := fresource.Name(usageKeyPrefix + labels.GoldenHash(p.Namespace, p.Name))
		if seen[key] {
			continue
		}
		seen[key] = true
		wanted = append(wanted, want{key, clonerbac.BindingUsage(xrName, goldenNamespace, p.Name)})
	}
	if len(wanted) > 0 {
		wanted = append(wanted, want{keyRoleUsage, clonerbac.RoleUsage(xrName, goldenNamespace)})
	}
	sort.Slice(wanted, func(i, j int) bool { return wanted[i].key < wanted[j].key })
	for _, w := range wanted {
		_, observed := obs.Resources[w.key]
		if !enabled && !observed {
			continue
		}
		c, err := compose.ToDesired(w.obj)
		if err != nil {
			return fmt.Errorf("cannot compose %s: %w", w.key, err)
		}
		// Ready at once: a golden's first pin must not make the catalog unready.
		into[w.key] = &fresource.DesiredComposed{Resource: c, Ready: fresource.ReadyTrue}
	}
	return nil
}
