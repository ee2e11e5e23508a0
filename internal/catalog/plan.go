package catalog

import (
	"sort"

	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	fresource "github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/required"
)

// planned is one golden and everything decided about it.
type planned struct {
	Golden
	// Key is the composition-resource-name the golden is composed under: the
	// one it was observed with, else the one its name implies. Crossplane
	// keeps an observed object's name under its key, and deletes what a key
	// left out names, so a golden never moves to another key.
	Key fresource.Name
	// Live is the observed DataVolume, nil before it exists.
	Live *cdiv1.DataVolume
	// Raw is an observed golden the function could not read, and Unreadable
	// why. It is kept exactly as observed (compose.Observed.Keep), never
	// re-created or checked for drift, in the catalog or not.
	Raw        *composed.Unstructured
	Unreadable error
	PinnedBy   []string
	// InUse is true when the golden carries Crossplane's in-use label: some
	// Usage protects it, a pool's or one made by hand.
	InUse    bool
	Retiring bool
}

// inUse reports whether an object carries Crossplane's in-use label. Its
// delete would be refused, and a refused delete stops Crossplane applying
// anything of the catalog: composed resources left out of the desired state
// are deleted before any is applied (v2.2.0
// internal/controller/apiextensions/composite/composition_functions.go,
// FunctionComposer.Compose, GarbageCollectComposedResources).
func inUse(l map[string]string) bool { return l[labels.CrossplaneInUse] == "true" }

// planGoldens decides which goldens are composed: every catalog entry, and
// every golden that left the catalog while a template still pins it or a
// Crossplane Usage still protects it (even one the catalog knows nothing
// of). A readable golden that left and is pinned and protected by nothing is
// retired: it is left out, which deletes it. An unreadable golden is
// planned, for the status, but kept as observed.
func planGoldens(goldens []Golden, obs observedState, req required.Resolved) []planned {
	inCatalog := map[string]bool{}
	raw := obs.unreadableGoldens()
	out := make([]planned, 0, len(goldens))
	for _, g := range goldens {
		inCatalog[g.Name] = true
		p := planned{Golden: g, Key: goldenKey(g.Name), Live: obs.Live[g.Name], PinnedBy: pinsFrom(req[pinsKeyPrefix+g.Name])}
		if p.Live != nil {
			p.InUse = inUse(p.Live.Labels)
		}
		if u, ok := raw[g.Name]; ok {
			p.Raw, p.Unreadable, p.InUse = u, obs.Problem(goldenKey(g.Name)), inUse(u.GetLabels())
		}
		out = append(out, p)
	}
	// A golden that left the catalog is known by its key: its pins were
	// asked for under it (Requirements), and it stays under it.
	for name, dv := range obs.Live {
		if inCatalog[name] {
			continue
		}
		if pins, used := pinsFrom(req[pinsKeyPrefix+name]), inUse(dv.Labels); len(pins) > 0 || used {
			out = append(out, planned{Golden: goldenFromLive(name, dv), Key: goldenKey(name), Live: dv, PinnedBy: pins, InUse: used, Retiring: true})
		}
	}
	for name, u := range raw {
		if inCatalog[name] {
			continue
		}
		g := Golden{Index: -1, Name: objectName(u.GetName(), name), Namespace: u.GetNamespace()}
		out = append(out, planned{Golden: g, Key: goldenKey(name), Raw: u, Unreadable: obs.Problem(goldenKey(name)), PinnedBy: pinsFrom(req[pinsKeyPrefix+name]), InUse: inUse(u.GetLabels()), Retiring: true})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Key < out[j].Key
	})
	return out
}
