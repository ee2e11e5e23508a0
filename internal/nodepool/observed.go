package nodepool

import (
	"sort"
	"strings"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; CAPI v1.11 still serves it.

	"github.com/cozystack/function-worker-image/internal/observed"
)

// Composition resource names. Templates carry their own name so that the
// previous revisions stay composed next to the current one while a
// MachineSet still needs them.
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

// owned reports whether a composition resource name is one this mode
// composes. Other names belong to other pipeline steps and are left alone.
func owned(n resource.Name) bool {
	s := string(n)
	return n == resourceMachineDeployment || strings.HasPrefix(s, prefixMachineTemplate) || strings.HasPrefix(s, prefixBootstrapTemplate) || strings.HasPrefix(s, prefixUsage)
}

// composedState is the typed view of the pool's observed composed resources.
type composedState struct {
	// Owned are the observed resources this mode composes, by name.
	Owned map[resource.Name]*composed.Unstructured
	// Deployment is the observed MachineDeployment, if any and readable.
	Deployment *clusterv1.MachineDeployment
}

func readComposed(obs map[resource.Name]resource.ObservedComposed) composedState {
	cs := composedState{Owned: map[resource.Name]*composed.Unstructured{}}
	for n, o := range obs {
		if !owned(n) || o.Resource == nil {
			continue
		}
		cs.Owned[n] = o.Resource
	}
	if u, ok := cs.Owned[resourceMachineDeployment]; ok {
		md := &clusterv1.MachineDeployment{}
		if err := observed.Into(&u.Unstructured, ClusterAPIVersion, KindMachineDeployment, md); err == nil {
			cs.Deployment = md
		}
	}
	return cs
}

// names returns the owned resource names, sorted.
func (cs composedState) names() []resource.Name {
	out := make([]resource.Name, 0, len(cs.Owned))
	for n := range cs.Owned {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
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

// serverFields are metadata fields the API server owns. Re-emitting them
// would make the function claim them (ownerReferences, finalizers) or send a
// stale resourceVersion that fails the apply.
var serverFields = []string{
	"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
	"deletionGracePeriodSeconds", "managedFields", "ownerReferences", "finalizers", "selfLink",
}

// asObserved is an observed resource as a desired one, unchanged: identity,
// labels, annotations and spec exactly as observed, without status and the
// metadata the API server owns.
func asObserved(u *composed.Unstructured) *composed.Unstructured {
	out := u.DeepCopy()
	delete(out.Object, "status")
	if meta, ok := out.Object["metadata"].(map[string]any); ok {
		for _, f := range serverFields {
			delete(meta, f)
		}
	}
	return out
}
