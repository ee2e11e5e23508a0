package catalog

import (
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/cdistate"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/decode"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/observed"
	"github.com/cozystack/function-worker-image/internal/required"
)

// pinsKeyPrefix names the requirement that finds a golden's pinning templates.
const pinsKeyPrefix = "pins-"

// Mode is the catalog mode.
type Mode struct{}

// decodeSpec reads the catalog's spec at the edge; a value of the wrong
// type is named by its path, such as spec.images[1].storage.
func decodeSpec(r compose.Request) (v1alpha1.WorkerImageCatalogSpec, error) {
	spec := v1alpha1.WorkerImageCatalogSpec{}
	if errs := decode.Into(r.Composite.Object["spec"], field.NewPath("spec"), &spec); len(errs) > 0 {
		return spec, catalogError(r.Composite.GetName(), errs)
	}
	return spec, nil
}

// Prepare implements compose.Mode, decoding once for Requirements and Compose.
func (Mode) Prepare(r compose.Request) compose.Call {
	c := &call{r: r}
	c.obs = readObserved(r.Observed)
	if c.spec, c.err = decodeSpec(r); c.err == nil {
		c.goldens, c.goldensErr = resolveGoldens(r.Composite.GetName(), c.spec, r.Config, madeGoldensOf(c.obs))
	}
	c.prev = compose.PreviousStatus[previousStatus](r.Composite)
	c.grants = planGrants(r.Config.Usages, r.Config.CloneRBACScope != v1beta1.CloneRBACAllServiceAccounts, c.obs.Binding)
	return c
}

// call is one call of a catalog, decoded once.
type call struct {
	r          compose.Request
	err        error
	spec       v1alpha1.WorkerImageCatalogSpec
	goldens    []Golden
	goldensErr error
	obs        observedState
	prev       previousStatus
	grants     grantsPlan
}

// Raw implements compose.Call; the catalog reads no requirement raw.
func (c *call) Raw() map[string]bool { return nil }

// Requirements asks, with Usages on, for the pools' Usages that ask for a
// clone grant of each golden (grants.go); with Usages off, for the
// templates anywhere in the cluster that carry each golden's label, which
// decide retention and who may clone.
func (c *call) Requirements() (required.Selectors, error) {
	if c.err != nil {
		return nil, c.err
	}
	// Pins are asked for under the key's name, by the label of the object
	// templates clone: the entry's golden, or the observed DataVolume.
	type golden struct{ namespace, name string }
	goldens := map[string]golden{} // key name -> golden
	if c.goldensErr == nil {
		for _, g := range c.goldens {
			goldens[g.Name] = golden{g.Namespace, g.Name}
		}
	}
	// Observed goldens are read untyped: Compose converts them anyway.
	for key, oc := range c.r.Observed {
		name, ok := strings.CutPrefix(string(key), goldenKeyPrefix)
		if !ok || oc.Resource == nil {
			continue
		}
		if _, ok := goldens[name]; !ok {
			goldens[name] = golden{oc.Resource.GetNamespace(), objectName(oc.Resource.GetName(), name)}
		}
	}
	hashes := map[string]string{}
	for name, g := range goldens {
		hashes[name] = labels.GoldenHash(g.namespace, g.name)
	}
	sel := c.grants.selectors(hashes)
	if c.r.Config.SnapshotGoldens && c.snapshotDecisions() {
		snapshotSelectors(sel)
	}
	if !c.grants.ByUsages {
		// Without Usages, the templates themselves say what pins a golden.
		for name, hash := range hashes {
			sel[pinsKeyPrefix+name] = required.ByLabels(observed.InfraAPIVersion, observed.KindKubevirtMachineTemplate, "", map[string]string{labels.Golden: hash})
		}
	}
	return sel, nil
}

// snapshotDecisions reports whether this call decides a golden snapshot:
// a golden has imported (one may be taken of it) or a snapshot exists (it
// may have to go). Until then the classes and profiles are not read.
func (c *call) snapshotDecisions() bool {
	for _, dv := range c.obs.Live {
		if cdistate.Of(dv, nil).Ready() {
			return true
		}
	}
	for _, key := range c.obs.Names() {
		if strings.HasPrefix(string(key), snapshotKeyPrefix) {
			return true
		}
	}
	return false
}

// Compose validates the catalog and its golden namespace, decides which
// goldens stay and what each keeps of how it was made (settle.go), and
// writes them, the CA, the clone RBAC and the status.
func (c *call) Compose(got required.Resolved, _ required.Raw) compose.Output {
	r := c.r
	xrName := r.Composite.GetName()
	if c.err != nil {
		return compose.Output{Fatal: c.err}
	}
	if c.goldensErr != nil {
		return compose.Output{Fatal: c.goldensErr}
	}
	ns := resolveNamespace(c.spec, r.Config)
	obs, prev := c.obs, c.prev

	if err := checkNamespace(xrName, ns, obs); err != nil {
		return compose.Output{Fatal: err}
	}
	plan := planGoldens(c.goldens, obs, got)
	if err := settle(xrName, plan); err != nil {
		return compose.Output{Fatal: err}
	}
	preferSnapshots(plan, readSnapshotWorld(r.Config.SnapshotGoldens, got))
	trackImports(plan, prev.Goldens, r.Now, r.Config.Stall.Imports)

	return emit(xrName, ns.Name, plan, obs, prev, r.Config, c.grantees(plan, got), caBundle(c.spec, r.Config))
}

// grantees are the namespaces whose VM service accounts the RoleBinding
// binds: read from the templates that pin a golden, or with Usages on from
// the grants plan (grants.go).
func (c *call) grantees(plan []planned, got required.Resolved) grantees {
	out := grantees{Plan: c.grants}
	if !c.grants.ByUsages {
		set := map[string]bool{}
		for _, p := range plan {
			for _, ref := range p.PinnedBy {
				ns, _, _ := strings.Cut(ref, "/")
				set[ns] = true
			}
		}
		out.Namespaces = slices.Sorted(maps.Keys(set))
		return out
	}
	// Each golden by the key name its requirements were asked under.
	goldens := make([]string, 0, len(plan))
	anyInUse := false
	for _, p := range plan {
		goldens = append(goldens, strings.TrimPrefix(string(p.Key), goldenKeyPrefix))
		anyInUse = anyInUse || p.InUse
	}
	out.Namespaces = c.grants.namespaces(goldens, anyInUse, got)
	return out
}

// grantees are the namespaces to bind and how they were learned.
type grantees struct {
	Plan       grantsPlan
	Namespaces []string
}
