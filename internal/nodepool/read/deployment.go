package read

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; CAPI v1.11 still serves it.
	clusterv1beta2 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// The pool's Cluster API objects are clusterapi's to build and convert;
// this file gives them the pool's identity and reads them back.

// resourceMachineHealthCheck is the composition resource name of the pool's
// MachineHealthCheck.
const ResourceMachineHealthCheck = "machinehealthcheck"

// templates are the two template kinds a pool's Machines reference: what a
// v1beta2 reference converts back to. Another kind (a MachineSet some other
// owner made) does not convert and is reported unreadable.
var Templates = clusterapi.TemplatesOf(
	metav1.TypeMeta{APIVersion: pool.InfraAPIVersion, Kind: pool.KindKubevirtMachineTmpl},
	metav1.TypeMeta{APIVersion: talosconfig.APIVersion, Kind: talosconfig.KindTalosConfigTemplate},
)

// ownsIn is owns with the Cluster API kinds under the version they are
// observed in, when that is one of the two the function writes (a pool
// switching contracts observes its deployment in the old version once),
// else under the configured one.
func ownsIn(obs map[resource.Name]resource.ObservedComposed, v v1beta1.ClusterAPIVersion) compose.Owns {
	return func(n resource.Name) (string, string, bool) {
		apiVersion, kind, ok := owns(n)
		if !ok || !clusterapi.IsKind(kind) {
			return apiVersion, kind, ok
		}
		apiVersion = clusterapi.APIVersion(v)
		if o, found := obs[n]; found && o.Resource != nil {
			if got := o.Resource.GetAPIVersion(); got == clusterapi.APIVersion(v1beta1.ClusterAPIV1Beta1) || got == clusterapi.APIVersion(v1beta1.ClusterAPIV1Beta2) {
				apiVersion = got
			}
		}
		return apiVersion, kind, true
	}
}

// readDeployment reads the observed MachineDeployment, in either version,
// into the v1beta1 view decisions use.
func (cs *ComposedState) readDeployment(obs map[resource.Name]resource.ObservedComposed) {
	o, ok := obs[ResourceMachineDeployment]
	if !ok || o.Resource == nil {
		return
	}
	if o.Resource.GetAPIVersion() != clusterapi.APIVersion(v1beta1.ClusterAPIV1Beta2) {
		md := &clusterv1.MachineDeployment{}
		if cs.Read(ResourceMachineDeployment, md) {
			cs.Deployment = md
		}
		return
	}
	hub := &clusterv1beta2.MachineDeployment{}
	if !cs.Read(ResourceMachineDeployment, hub) {
		return
	}
	md, err := Templates.MachineDeploymentFrom(hub)
	if err != nil {
		cs.MarkUnreadable(ResourceMachineDeployment, fmt.Errorf("cannot convert it to %s: %w", clusterapi.APIVersion(v1beta1.ClusterAPIV1Beta1), err))
		return
	}
	cs.Deployment = md
}
