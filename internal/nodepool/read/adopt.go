package read

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/required"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// AdoptionSelectors asks for an existing MachineDeployment of the pool's
// name.
func AdoptionSelectors(sel required.Selectors, p pool.Pool, capi string) {
	sel[ReqExistingDeployment] = required.ByName(capi, clusterapi.KindMachineDeployment, p.Namespace, p.DeploymentName())
}

// AdoptionChained asks, once an existing MachineDeployment is read, for the
// templates it runs on.
func AdoptionChained(p pool.Pool, got required.Resolved) required.Selectors {
	md := existingDeployment(p, got)
	if md == nil {
		return nil
	}
	machine, bootstrap := refsOf(md)
	sel := required.Selectors{}
	if machine != "" {
		sel[ReqExistingMachine] = required.ByName(pool.InfraAPIVersion, pool.KindKubevirtMachineTmpl, p.Namespace, machine)
	}
	if bootstrap != "" {
		sel[ReqExistingBootstrap] = required.ByName(talosconfig.APIVersion, talosconfig.KindTalosConfigTemplate, p.Namespace, bootstrap)
	}
	return sel
}

func existingDeployment(p pool.Pool, got required.Resolved) *unstructured.Unstructured {
	for _, u := range got[ReqExistingDeployment] {
		if Is(u, p.Namespace, p.DeploymentName()) {
			return u
		}
	}
	return nil
}

// refsOf is the template names a MachineDeployment of either contract
// version points at (the name is at the same path in both).
func refsOf(md *unstructured.Unstructured) (machine, bootstrap string) {
	machine, _, _ = unstructured.NestedString(md.Object, "spec", "template", "spec", "infrastructureRef", "name")
	bootstrap, _, _ = unstructured.NestedString(md.Object, "spec", "template", "spec", "bootstrap", "configRef", "name")
	return machine, bootstrap
}

// Existing is the running pool another tool made.
type Existing struct {
	Deployment                 *unstructured.Unstructured
	Machine, Bootstrap         *unstructured.Unstructured
	MachineName, BootstrapName string
}

// ReadExisting is the existing pool, nil when there is none to adopt.
func ReadExisting(p pool.Pool, adopting bool, got required.Resolved) *Existing {
	if !adopting {
		return nil
	}
	md := existingDeployment(p, got)
	if md == nil {
		return nil
	}
	e := &Existing{Deployment: md}
	e.MachineName, e.BootstrapName = refsOf(md)
	for _, u := range got[ReqExistingMachine] {
		if Is(u, p.Namespace, e.MachineName) {
			e.Machine = u
		}
	}
	for _, u := range got[ReqExistingBootstrap] {
		if Is(u, p.Namespace, e.BootstrapName) {
			e.Bootstrap = u
		}
	}
	return e
}
