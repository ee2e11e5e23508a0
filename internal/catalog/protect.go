package catalog

import (
	"fmt"
	"sort"

	fresource "github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/internal/clonerbac"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/labels"
)

// protectRBAC composes into the Usages that keep the clone RBAC as long as
// the goldens that need it (clonerbac.BindingUsage, clonerbac.RoleUsage): one
// Usage of the RoleBinding by each golden a template pins or a Usage
// protects, and, when there is any, one of the ClusterRole by the
// RoleBinding. They must exist before the catalog is deleted, since no
// function runs then; a golden that is no longer pinned loses its Usage
// here, which Crossplane deletes at once (it strips the composite label from
// what it garbage-collects, so the Usage does not wait for its golden).
//
// Only goldens held anyway get one: every Usage is an object in the
// catalog's request, which is already close to the 4 MiB limit at 1,000
// entries. An unreadable golden gets none: the function cannot tell what it
// is. With Usages turned off in the Input, only the Usages that exist stay,
// while they are wanted.
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
		// Ready at once: nothing waits for a Usage while the catalog lives,
		// and a golden's first pin must not make the catalog unready.
		into[w.key] = &fresource.DesiredComposed{Resource: c, Ready: fresource.ReadyTrue}
	}
	return nil
}
