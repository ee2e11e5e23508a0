package read

import (
	"strings"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; CAPI v1.11 still serves it.

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// Composition resource names. A template's includes the template's name, so
// old revisions stay composed beside the current one while a MachineSet
// needs them.
const (
	ResourceMachineDeployment = resource.Name("machinedeployment")
	PrefixMachineTemplate     = "kubevirtmachinetemplate-"
	PrefixBootstrapTemplate   = "talosconfigtemplate-"
)

func MachineTemplateResource(name string) resource.Name {
	return resource.Name(PrefixMachineTemplate + name)
}

func BootstrapTemplateResource(name string) resource.Name {
	return resource.Name(PrefixBootstrapTemplate + name)
}

// owns is the kind this mode composes under name n; other names belong to
// other pipeline steps and are left alone.
func owns(n resource.Name) (apiVersion, kind string, ok bool) {
	s := string(n)
	switch {
	case n == ResourceMachineDeployment:
		return clusterapi.V1Beta1APIVersion, clusterapi.KindMachineDeployment, true
	case n == ResourceMachineHealthCheck:
		return clusterapi.V1Beta1APIVersion, clusterapi.KindMachineHealthCheck, true
	case strings.HasPrefix(s, PrefixMachineTemplate):
		return pool.InfraAPIVersion, pool.KindKubevirtMachineTmpl, true
	case strings.HasPrefix(s, PrefixBootstrapTemplate):
		return talosconfig.APIVersion, talosconfig.KindTalosConfigTemplate, true
	case strings.HasPrefix(s, PrefixUsage), n == ResourceDeletionGuard:
		return UsageAPIVersion, KindUsage, true
	case n == ResourceFactoryCA:
		return "v1", "ConfigMap", true
	}
	return "", "", false
}

// composedState is the typed view of the pool's observed composed resources.
type ComposedState struct {
	compose.Observed
	// Deployment is the observed MachineDeployment, if any and readable.
	Deployment *clusterv1.MachineDeployment
}

func ReadComposed(obs map[resource.Name]resource.ObservedComposed, v v1beta1.ClusterAPIVersion) ComposedState {
	cs := ComposedState{Observed: compose.ReadObserved(obs, ownsIn(obs, v))}
	cs.readDeployment(obs)
	return cs
}

// deploymentUnreadable reports an observed MachineDeployment the mode cannot
// read: what the pool runs on is unknown, so no template retires.
func (cs ComposedState) DeploymentUnreadable() bool {
	return cs.Unreadable(ResourceMachineDeployment)
}

// inEffect returns the template names the observed MachineDeployment points
// at: what the pool runs on now, whatever the spec says.
func (cs ComposedState) InEffect() (machineTemplate, bootstrapTemplate string) {
	if cs.Deployment == nil {
		return "", ""
	}
	spec := cs.Deployment.Spec.Template.Spec
	if ref := spec.Bootstrap.ConfigRef; ref != nil {
		bootstrapTemplate = ref.Name
	}
	return spec.InfrastructureRef.Name, bootstrapTemplate
}

// readyReplicas is the observed MachineDeployment's ready replica count.
func (cs ComposedState) ReadyReplicas() int32 {
	if cs.Deployment == nil {
		return 0
	}
	return cs.Deployment.Status.ReadyReplicas
}
