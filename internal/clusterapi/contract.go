package clusterapi

import (
	"cmp"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // the function's one internal view of the Cluster API objects; v1beta2 is converted to and from it.
	clusterv1beta2 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	utilconversion "sigs.k8s.io/cluster-api/util/conversion"

	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/observed"
)

// The Cluster API contract. The function renders, reads and decides on
// v1beta1 objects (CAPK v0.11.2 speaks the v1beta1 contract, and CAPI v1.11
// serves both); when the Input asks for v1beta2 it converts what it composes
// to v1beta2 and what it reads (the observed MachineDeployment, the pool's
// MachineSets) back, with Cluster API's own conversions
// (sigs.k8s.io/cluster-api api/core/v1beta1/conversion.go, v1.11.4): refs
// become apiGroup/kind/name, durations seconds, maxUnhealthy
// remediation.triggerIf.unhealthyLessThanOrEqualTo, the strategy
// spec.rollout.strategy.
const Group = "cluster.x-k8s.io"

// Cluster API identifiers.
const (
	// V1Beta1APIVersion is the version objects are built in.
	V1Beta1APIVersion      = Group + "/v1beta1"
	KindMachineDeployment  = "MachineDeployment"
	KindMachineSet         = "MachineSet"
	KindMachineHealthCheck = "MachineHealthCheck"
	LabelClusterName       = Group + "/cluster-name"
	LabelDeploymentName    = Group + "/deployment-name"
)

// APIVersion is the apiVersion of the given contract version (v1beta1 when
// none is given).
func APIVersion(v v1beta1.ClusterAPIVersion) string {
	return Group + "/" + string(cmp.Or(v, v1beta1.ClusterAPIV1Beta1))
}

// IsKind reports the kinds written in the configured contract.
func IsKind(kind string) bool {
	return kind == KindMachineDeployment || kind == KindMachineHealthCheck || kind == KindMachineSet
}

// InContract returns obj as the contract version v writes it: unchanged for
// v1beta1, converted for v1beta2.
func InContract(obj any, v v1beta1.ClusterAPIVersion) (any, error) {
	if v != v1beta1.ClusterAPIV1Beta2 {
		return obj, nil
	}
	tm := metav1.TypeMeta{APIVersion: APIVersion(v)}
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

// Templates are the template kinds a machine references, by group and kind,
// with the apiVersion each is written in. A v1beta2 reference names a group
// and kind only; Cluster API's conversion back to v1beta1 asks a
// process-wide getter for the version (clusterv1.SetAPIVersionGetter, in its
// controllers a lookup of the provider CRD's contract label). The function
// references a fixed set of kinds at fixed versions, so the caller passes
// them, and the conversion here resolves the references itself: no global
// is set.
type Templates map[schema.GroupKind]string

// TemplatesOf is the table of the given apiVersion and kind pairs.
func TemplatesOf(tms ...metav1.TypeMeta) Templates {
	t := Templates{}
	for _, tm := range tms {
		if gv, err := schema.ParseGroupVersion(tm.APIVersion); err == nil {
			t[gv.WithKind(tm.Kind).GroupKind()] = tm.APIVersion
		}
	}
	return t
}

// apiVersion is the apiVersion of a template kind.
func (t Templates) apiVersion(gk schema.GroupKind) (string, error) {
	if v, ok := t[gk]; ok {
		return v, nil
	}
	return "", fmt.Errorf("%s is not a template kind this function composes", gk)
}

// ref is the v1beta1 reference of a v1beta2 one; the error reads as Cluster
// API's convertToObjectReference's, so that an unreadable MachineSet is
// reported as it was with the getter.
func (t Templates) ref(r clusterv1beta2.ContractVersionedObjectReference, namespace string) (*corev1.ObjectReference, error) {
	apiVersion, err := t.apiVersion(schema.GroupKind{Group: r.APIGroup, Kind: r.Kind})
	if err != nil {
		return nil, fmt.Errorf("failed to convert object: %w", err)
	}
	return &corev1.ObjectReference{APIVersion: apiVersion, Kind: r.Kind, Namespace: namespace, Name: r.Name}, nil
}

// machineSpecFrom converts a v1beta2 machine spec whose references were
// cleared into dst and resolves hub's references into it, in the order
// Cluster API's convertMachineSpecToObjectReference does (infrastructure
// first).
func (t Templates) machineSpecFrom(hub clusterv1beta2.MachineSpec, namespace string, dst *clusterv1.MachineSpec) error {
	if hub.InfrastructureRef.IsDefined() {
		ref, err := t.ref(hub.InfrastructureRef, namespace)
		if err != nil {
			return err
		}
		dst.InfrastructureRef = *ref
	}
	if hub.Bootstrap.ConfigRef.IsDefined() {
		ref, err := t.ref(hub.Bootstrap.ConfigRef, namespace)
		if err != nil {
			return err
		}
		dst.Bootstrap.ConfigRef = ref
	}
	return nil
}

// withoutRefs is spec with its template references cleared, which Cluster
// API's ConvertFrom then leaves for machineSpecFrom.
func withoutRefs(spec *clusterv1beta2.MachineSpec) {
	spec.InfrastructureRef = clusterv1beta2.ContractVersionedObjectReference{}
	spec.Bootstrap.ConfigRef = clusterv1beta2.ContractVersionedObjectReference{}
}

// MachineDeploymentFrom converts a v1beta2 MachineDeployment into the
// v1beta1 view, its template references resolved by t.
func (t Templates) MachineDeploymentFrom(hub *clusterv1beta2.MachineDeployment) (*clusterv1.MachineDeployment, error) {
	bare := hub.DeepCopy()
	withoutRefs(&bare.Spec.Template.Spec)
	md := &clusterv1.MachineDeployment{}
	if err := md.ConvertFrom(bare); err != nil {
		return nil, err
	}
	if err := t.machineSpecFrom(hub.Spec.Template.Spec, hub.Namespace, &md.Spec.Template.Spec); err != nil {
		return nil, err
	}
	// ConvertFrom keeps the source in an annotation; keep the source as it
	// was, references included.
	if err := utilconversion.MarshalData(hub, md); err != nil {
		return nil, err
	}
	return md, nil
}

// MachineSetFrom converts a v1beta2 MachineSet into the v1beta1 view, its
// template references resolved by t.
func (t Templates) MachineSetFrom(hub *clusterv1beta2.MachineSet) (clusterv1.MachineSet, error) {
	bare := hub.DeepCopy()
	withoutRefs(&bare.Spec.Template.Spec)
	ms := clusterv1.MachineSet{}
	if err := ms.ConvertFrom(bare); err != nil {
		return ms, err
	}
	return ms, t.machineSpecFrom(hub.Spec.Template.Spec, hub.Namespace, &ms.Spec.Template.Spec)
}

// ReadMachineSet reads a required MachineSet of contract version v into the
// v1beta1 view.
func (t Templates) ReadMachineSet(u *unstructured.Unstructured, v v1beta1.ClusterAPIVersion) (clusterv1.MachineSet, error) {
	ms := clusterv1.MachineSet{}
	if v != v1beta1.ClusterAPIV1Beta2 {
		return ms, observed.Into(u, APIVersion(v), KindMachineSet, &ms)
	}
	hub := clusterv1beta2.MachineSet{}
	if err := observed.Into(u, APIVersion(v), KindMachineSet, &hub); err != nil {
		return ms, err
	}
	ms, err := t.MachineSetFrom(&hub)
	if err != nil {
		return ms, fmt.Errorf("cannot convert MachineSet %q to %s: %w", hub.Name, APIVersion(v1beta1.ClusterAPIV1Beta1), err)
	}
	return ms, nil
}
