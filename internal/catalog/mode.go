package catalog

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
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
	if c.spec, c.err = decodeSpec(r); c.err == nil {
		c.goldens, c.goldensErr = resolveGoldens(r.Composite.GetName(), c.spec, r.Config)
	}
	return c
}

// call is one call of a catalog, decoded once.
type call struct {
	r          compose.Request
	err        error
	spec       v1alpha1.WorkerImageCatalogSpec
	goldens    []Golden
	goldensErr error
}

// Raw implements compose.Call; the catalog reads no requirement raw.
func (c *call) Raw() map[string]bool { return nil }

// Requirements asks for the templates anywhere in the cluster that carry
// each golden's label: they decide retention and who may clone.
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
	sel := required.Selectors{}
	for name, g := range goldens {
		sel[pinsKeyPrefix+name] = required.ByLabels(observed.InfraAPIVersion, observed.KindKubevirtMachineTemplate, "", map[string]string{labels.Golden: labels.GoldenHash(g.namespace, g.name)})
	}
	return sel, nil
}

// Compose validates the catalog, its golden namespace and drift, decides
// which goldens stay, and writes them, the clone RBAC and the status.
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
	obs := readObserved(r.Observed)
	prev := compose.PreviousStatus[previousStatus](r.Composite)

	if err := checkNamespace(xrName, ns, obs); err != nil {
		return compose.Output{Fatal: err}
	}
	if err := detectDrift(xrName, c.goldens, obs.Live); err != nil {
		return compose.Output{Fatal: err}
	}
	plan := planGoldens(c.goldens, obs, got)

	return emit(xrName, ns.Name, plan, obs, prev, r.Config)
}
