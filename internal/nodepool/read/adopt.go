package read

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
)

// existingDeployment is the MachineDeployment of the pool's name among us.
func existingDeployment(p pool.Pool, us []*unstructured.Unstructured) *unstructured.Unstructured {
	return pick(us, p.Namespace, p.DeploymentName())
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

// lastOf is the last object of us named name in namespace; nil when none.
func lastOf(us []*unstructured.Unstructured, namespace, name string) *unstructured.Unstructured {
	var last *unstructured.Unstructured
	for _, u := range us {
		if Is(u, namespace, name) {
			last = u
		}
	}
	return last
}
