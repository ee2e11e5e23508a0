package catalog

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/labels"
)

// goldenNamespace is the goldens' namespace and the field that set it.
type goldenNamespace struct {
	Name string
	From string
}

// resolveNamespace is spec.goldenNamespace, else the Input's goldenNamespace.
func resolveNamespace(spec v1alpha1.WorkerImageCatalogSpec, cfg config.Config) goldenNamespace {
	if spec.GoldenNamespace != "" {
		return goldenNamespace{Name: spec.GoldenNamespace, From: "spec.goldenNamespace"}
	}
	return goldenNamespace{Name: cfg.GoldenNamespace, From: "the function Input's goldenNamespace (spec.goldenNamespace is not set)"}
}

// checkNamespace refuses a golden namespace that changed while goldens live
// in the old one. A golden's key carries its name, not its namespace, so
// composing on would import every golden anew, move the clone RoleBinding
// away from the templates that clone from the old namespace, and leave the
// old goldens unmanaged; none of that can be undone.
func checkNamespace(xrName string, ns goldenNamespace, obs observedState) error {
	elsewhere := map[string][]string{} // namespace -> golden names
	for _, key := range obs.Names() {
		name, ok := strings.CutPrefix(string(key), goldenKeyPrefix)
		if !ok {
			continue
		}
		if at := observedNamespace(obs, name); at != "" && at != ns.Name {
			elsewhere[at] = append(elsewhere[at], name)
		}
	}
	if len(elsewhere) == 0 {
		return nil
	}
	olds := make([]string, 0, len(elsewhere))
	for at := range elsewhere {
		olds = append(olds, at)
	}
	sort.Strings(olds)
	where := make([]string, 0, len(olds))
	for _, at := range olds {
		names := elsewhere[at]
		sort.Strings(names)
		where = append(where, fmt.Sprintf("%q (%s)", at, strings.Join(names, ", ")))
	}
	back := fmt.Sprintf("%q", olds[0])
	if len(olds) > 1 {
		back = "the namespace its goldens live in"
	}
	return refused(xrName, fmt.Errorf("the golden namespace is %q, from %s, but the catalog's golden DataVolumes live in %s. "+
		"Composing them in %q would import every golden again there, move the clone RoleBinding away from the goldens pools clone from now, and leave the old goldens unmanaged, so nothing is changed. "+
		"Set the golden namespace back to %s; or, to move the goldens, create a second XWorkerImageCatalog with goldenNamespace %q and the same images, list that namespace in the pools' Input goldenNamespaces and move the pools onto it (their goldenNamespace), then remove this catalog's images so its goldens retire once no template pins them, and only then change this catalog's namespace (or delete it)",
		ns.Name, ns.From, strings.Join(where, ", "), ns.Name, back, ns.Name))
}

// observedNamespace is the namespace an observed golden lives in: its own,
// else the one its golden annotation records.
func observedNamespace(obs observedState, name string) string {
	u := obs.Resources[goldenKey(name)]
	if ns := u.GetNamespace(); ns != "" {
		return ns
	}
	ns, _, _ := strings.Cut(u.GetAnnotations()[labels.AnnGolden], "/")
	return ns
}
