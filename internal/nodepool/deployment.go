package nodepool

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; clusterapi converts to v1beta2 when asked.
	clusterv1beta2 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/poolspec"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// The pool's Cluster API objects are clusterapi's to build and convert;
// this file gives them the pool's identity and reads them back.

// resourceMachineHealthCheck is the composition resource name of the pool's
// MachineHealthCheck.
const resourceMachineHealthCheck = "machinehealthcheck"

// templates are the two template kinds a pool's Machines reference: what a
// v1beta2 reference converts back to. Another kind (a MachineSet some other
// owner made) does not convert and is reported unreadable.
var templates = clusterapi.TemplatesOf(
	metav1.TypeMeta{APIVersion: InfraAPIVersion, Kind: KindKubevirtMachineTmpl},
	metav1.TypeMeta{APIVersion: talosconfig.APIVersion, Kind: talosconfig.KindTalosConfigTemplate},
)

// renderMachineDeployment builds the MachineDeployment that points at both
// templates. The deployment-name label is what the pool's MachineSets are
// read back by.
func renderMachineDeployment(p pool, s shape, machineTemplate, bootstrapTemplate string) *clusterv1.MachineDeployment {
	return clusterapi.MachineDeployment(clusterapi.Deployment{
		Meta: p.deploymentMeta(), Cluster: p.Cluster, Selector: p.machineSelector(),
		Replicas: s.Replicas, Version: s.MachineVersion,
		Bootstrap:      corev1.ObjectReference{APIVersion: talosconfig.APIVersion, Kind: talosconfig.KindTalosConfigTemplate, Name: bootstrapTemplate, Namespace: p.Namespace},
		Infrastructure: corev1.ObjectReference{APIVersion: InfraAPIVersion, Kind: KindKubevirtMachineTmpl, Name: machineTemplate, Namespace: p.Namespace},
	})
}

// renderMachineHealthCheck builds the pool's MachineHealthCheck, which
// watches the Machines of its MachineDeployment.
func renderMachineHealthCheck(p pool, hc poolspec.HealthCheck) *clusterv1.MachineHealthCheck {
	return clusterapi.MachineHealthCheck(p.deploymentMeta(), p.Cluster, p.machineSelector(), hc)
}

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
func (cs *composedState) readDeployment(obs map[resource.Name]resource.ObservedComposed) {
	o, ok := obs[resourceMachineDeployment]
	if !ok || o.Resource == nil {
		return
	}
	if o.Resource.GetAPIVersion() != clusterapi.APIVersion(v1beta1.ClusterAPIV1Beta2) {
		md := &clusterv1.MachineDeployment{}
		if cs.Read(resourceMachineDeployment, md) {
			cs.Deployment = md
		}
		return
	}
	hub := &clusterv1beta2.MachineDeployment{}
	if !cs.Read(resourceMachineDeployment, hub) {
		return
	}
	md, err := templates.MachineDeploymentFrom(hub)
	if err != nil {
		cs.MarkUnreadable(resourceMachineDeployment, fmt.Errorf("cannot convert it to %s: %w", clusterapi.APIVersion(v1beta1.ClusterAPIV1Beta1), err))
		return
	}
	cs.Deployment = md
}

// desiredReplicas is the worker count the pool reports: the fixed count, or
// for an autoscaled pool what the autoscaler last set on the observed
// MachineDeployment (its floor before there is one).
func (pl plan) desiredReplicas() int32 {
	if !pl.Shape.Scaling.Autoscaled {
		return pl.Shape.Replicas
	}
	if md := pl.Observed.Deployment; md != nil && md.Spec.Replicas != nil {
		return *md.Spec.Replicas
	}
	return pl.Shape.Scaling.Min
}
