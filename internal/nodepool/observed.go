package nodepool

import (
	"strings"

	"github.com/crossplane/function-sdk-go/resource"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; CAPI v1.11 still serves it.

	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// Composition resource names. A template's includes the template's name, so
// old revisions stay composed beside the current one while a MachineSet
// needs them.
const (
	resourceMachineDeployment = resource.Name("machinedeployment")
	prefixMachineTemplate     = "kubevirtmachinetemplate-"
	prefixBootstrapTemplate   = "talosconfigtemplate-"
)

func machineTemplateResource(name string) resource.Name {
	return resource.Name(prefixMachineTemplate + name)
}

func bootstrapTemplateResource(name string) resource.Name {
	return resource.Name(prefixBootstrapTemplate + name)
}

// owns is the kind this mode composes under name n; other names belong to
// other pipeline steps and are left alone.
func owns(n resource.Name) (apiVersion, kind string, ok bool) {
	s := string(n)
	switch {
	case n == resourceMachineDeployment:
		return clusterapi.V1Beta1APIVersion, clusterapi.KindMachineDeployment, true
	case n == resourceMachineHealthCheck:
		return clusterapi.V1Beta1APIVersion, clusterapi.KindMachineHealthCheck, true
	case strings.HasPrefix(s, prefixMachineTemplate):
		return InfraAPIVersion, KindKubevirtMachineTmpl, true
	case strings.HasPrefix(s, prefixBootstrapTemplate):
		return talosconfig.APIVersion, talosconfig.KindTalosConfigTemplate, true
	case strings.HasPrefix(s, prefixUsage), n == resourceDeletionGuard:
		return UsageAPIVersion, KindUsage, true
	case n == resourceFactoryCA:
		return "v1", "ConfigMap", true
	}
	return "", "", false
}

// composedState is the typed view of the pool's observed composed resources.
type composedState struct {
	compose.Observed
	// Deployment is the observed MachineDeployment, if any and readable.
	Deployment *clusterv1.MachineDeployment
}

func readComposed(obs map[resource.Name]resource.ObservedComposed, v v1beta1.ClusterAPIVersion) composedState {
	cs := composedState{Observed: compose.ReadObserved(obs, ownsIn(obs, v))}
	cs.readDeployment(obs)
	return cs
}

// deploymentUnreadable reports an observed MachineDeployment the mode cannot
// read: what the pool runs on is unknown, so no template retires.
func (cs composedState) deploymentUnreadable() bool {
	return cs.Unreadable(resourceMachineDeployment)
}

// inEffect returns the template names the observed MachineDeployment points
// at: what the pool runs on now, whatever the spec says.
func (cs composedState) inEffect() (machineTemplate, bootstrapTemplate string) {
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
func (cs composedState) readyReplicas() int32 {
	if cs.Deployment == nil {
		return 0
	}
	return cs.Deployment.Status.ReadyReplicas
}
