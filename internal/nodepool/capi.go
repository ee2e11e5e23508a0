package nodepool

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // the function's one internal view of the Cluster API objects; v1beta2 is converted to and from it.
	clusterv1beta2 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/observed"
)

// The Cluster API contract. The function renders, reads and decides on
// v1beta1 objects (CAPK v0.11.2 speaks the v1beta1 contract, and CAPI v1.11
// serves both); when the Input asks for v1beta2 it converts what it composes
// to v1beta2 and what it reads (the observed MachineDeployment and
// MachineHealthCheck, the pool's MachineSets) back, with Cluster API's own
// conversions (sigs.k8s.io/cluster-api api/core/v1beta1/conversion.go,
// v1.11.4): refs become apiGroup/kind/name, durations seconds, maxUnhealthy
// remediation.triggerIf.unhealthyLessThanOrEqualTo, the strategy
// spec.rollout.strategy.
const clusterAPIGroup = "cluster.x-k8s.io"

// Cluster API's v1beta2 to v1beta1 conversion turns a contract reference
// (apiGroup, kind) back into an apiVersion with a getter the caller sets,
// in Cluster API's controllers a lookup of the provider's CRD contract
// label. The function references exactly two template kinds, at fixed
// versions, so the getter is this table; another kind (a MachineSet some
// other owner made) does not convert and is reported unreadable.
func init() {
	clusterv1.SetAPIVersionGetter(func(gk schema.GroupKind) (string, error) {
		for _, av := range []struct{ apiVersion, kind string }{{InfraAPIVersion, KindKubevirtMachineTmpl}, {BootstrapAPIVersion, KindTalosConfigTemplate}} {
			if gv, err := schema.ParseGroupVersion(av.apiVersion); err == nil && gv.Group == gk.Group && av.kind == gk.Kind {
				return av.apiVersion, nil
			}
		}
		return "", fmt.Errorf("%s is not a template kind this function composes", gk)
	})
}

// capiAPIVersion is the apiVersion of the given contract version.
func capiAPIVersion(v v1beta1.ClusterAPIVersion) string {
	if v == "" {
		v = v1beta1.ClusterAPIV1Beta1
	}
	return clusterAPIGroup + "/" + string(v)
}

// isCAPIKind reports the kinds written in the configured contract.
func isCAPIKind(kind string) bool {
	return kind == KindMachineDeployment || kind == KindMachineHealthCheck || kind == KindMachineSet
}

// inContract returns obj as the contract version v writes it: unchanged for
// v1beta1, converted for v1beta2.
func inContract(obj any, v v1beta1.ClusterAPIVersion) (any, error) {
	if v != v1beta1.ClusterAPIV1Beta2 {
		return obj, nil
	}
	tm := metav1.TypeMeta{APIVersion: capiAPIVersion(v)}
	switch o := obj.(type) {
	case *clusterv1.MachineDeployment:
		dst := &clusterv1beta2.MachineDeployment{}
		if err := o.ConvertTo(dst); err != nil {
			return nil, fmt.Errorf("cannot convert MachineDeployment %s to %s: %w", o.Name, tm.APIVersion, err)
		}
		tm.Kind = KindMachineDeployment
		dst.TypeMeta, dst.Status = tm, clusterv1beta2.MachineDeploymentStatus{}
		return dst, nil
	case *clusterv1.MachineHealthCheck:
		dst := &clusterv1beta2.MachineHealthCheck{}
		if err := o.ConvertTo(dst); err != nil {
			return nil, fmt.Errorf("cannot convert MachineHealthCheck %s to %s: %w", o.Name, tm.APIVersion, err)
		}
		tm.Kind = KindMachineHealthCheck
		dst.TypeMeta, dst.Status = tm, clusterv1beta2.MachineHealthCheckStatus{}
		return dst, nil
	}
	return obj, nil
}

// ownsIn is owns with the Cluster API kinds under the version they are
// observed in, when that is one of the two the function writes (a pool
// switching contracts observes its deployment in the old version once),
// else under the configured one.
func ownsIn(obs map[resource.Name]resource.ObservedComposed, v v1beta1.ClusterAPIVersion) compose.Owns {
	return func(n resource.Name) (string, string, bool) {
		apiVersion, kind, ok := owns(n)
		if !ok || !isCAPIKind(kind) {
			return apiVersion, kind, ok
		}
		apiVersion = capiAPIVersion(v)
		if o, found := obs[n]; found && o.Resource != nil {
			if got := o.Resource.GetAPIVersion(); got == capiAPIVersion(v1beta1.ClusterAPIV1Beta1) || got == capiAPIVersion(v1beta1.ClusterAPIV1Beta2) {
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
	if o.Resource.GetAPIVersion() != capiAPIVersion(v1beta1.ClusterAPIV1Beta2) {
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
	md := &clusterv1.MachineDeployment{}
	if err := md.ConvertFrom(hub); err != nil {
		cs.MarkUnreadable(resourceMachineDeployment, fmt.Errorf("cannot convert it to %s: %w", capiAPIVersion(v1beta1.ClusterAPIV1Beta1), err))
		return
	}
	cs.Deployment = md
}

// readMachineSet reads a required MachineSet of the configured version into the
// v1beta1 view.
func readMachineSet(u *unstructured.Unstructured, v v1beta1.ClusterAPIVersion) (clusterv1.MachineSet, error) {
	ms := clusterv1.MachineSet{}
	if v != v1beta1.ClusterAPIV1Beta2 {
		return ms, observed.Into(u, capiAPIVersion(v), KindMachineSet, &ms)
	}
	hub := clusterv1beta2.MachineSet{}
	if err := observed.Into(u, capiAPIVersion(v), KindMachineSet, &hub); err != nil {
		return ms, err
	}
	if err := ms.ConvertFrom(&hub); err != nil {
		return ms, fmt.Errorf("cannot convert MachineSet %q to %s: %w", hub.Name, capiAPIVersion(v1beta1.ClusterAPIV1Beta1), err)
	}
	return ms, nil
}
