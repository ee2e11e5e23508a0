package read

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; CAPI v1.11 still serves it.
	clusterv1beta2 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// Adopting: the pool composes no MachineDeployment (nor one it cannot
// read), so whether one of its name exists is asked.
func (cs Composed) Adopting() bool {
	_, composed := cs.Resources[ResourceMachineDeployment]
	return !composed && !cs.DeploymentUnreadable()
}

// The pool's Cluster API objects are clusterapi's to build and convert;
// this file gives them the pool's identity and reads them back.

// ResourceMachineHealthCheck is the composition resource name of the pool's
// MachineHealthCheck.
const ResourceMachineHealthCheck = "machinehealthcheck"

// Templates are the two template kinds a pool's Machines reference: what a
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
func (cs *Composed) readDeployment(obs map[resource.Name]resource.ObservedComposed) {
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

// RunningGolden is the name of the golden the pool's running template
// clones in the pool's golden namespace, "" for none.
func (cs Composed) RunningGolden(img pool.Image) string {
	running, _ := cs.InEffect()
	tc, ok := cs.ObservedClone(running)
	if !ok {
		return ""
	}
	ns, name, _ := strings.Cut(tc.Golden, "/")
	if ns != img.GoldenNamespace {
		return ""
	}
	return name
}

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

// Composed is the typed view of the pool's observed composed resources.
type Composed struct {
	compose.Observed
	// Deployment is the observed MachineDeployment, if any and readable.
	Deployment *clusterv1.MachineDeployment
}

func ReadComposed(obs map[resource.Name]resource.ObservedComposed, v v1beta1.ClusterAPIVersion) Composed {
	cs := Composed{Observed: compose.ReadObserved(obs, ownsIn(obs, v))}
	cs.readDeployment(obs)
	return cs
}

// DeploymentUnreadable reports an observed MachineDeployment the mode cannot
// read: what the pool runs on is unknown, so no template retires.
func (cs Composed) DeploymentUnreadable() bool {
	return cs.Unreadable(ResourceMachineDeployment)
}

// InEffect returns the template names the observed MachineDeployment points
// at: what the pool runs on now, whatever the spec says.
func (cs Composed) InEffect() (machineTemplate, bootstrapTemplate string) {
	if cs.Deployment == nil {
		return "", ""
	}
	spec := cs.Deployment.Spec.Template.Spec
	if ref := spec.Bootstrap.ConfigRef; ref != nil {
		bootstrapTemplate = ref.Name
	}
	return spec.InfrastructureRef.Name, bootstrapTemplate
}

// ReadyReplicas is the observed MachineDeployment's ready replica count.
func (cs Composed) ReadyReplicas() int32 {
	if cs.Deployment == nil {
		return 0
	}
	return cs.Deployment.Status.ReadyReplicas
}

// templateClone is what a composed clone template says of its disks.
type templateClone struct {
	// Golden is "namespace/name" of the golden it clones.
	Golden string
	// Class is the StorageClass its disk template names; empty when none.
	Class string
}

// ObservedClone reads the golden and class of the observed machine template
// name; ok is false when it is not composed or not a clone template.
func (cs Composed) ObservedClone(name string) (templateClone, bool) {
	u, found := cs.Resources[MachineTemplateResource(name)]
	if !found || name == "" {
		return templateClone{}, false
	}
	ns, golden, ok := CloneSource(u)
	if !ok {
		return templateClone{}, false
	}
	tc := templateClone{Golden: labels.GoldenRef(ns, golden)}
	tc.Class, _, _ = unstructured.NestedString(SystemDiskTemplate(u), "spec", "storage", "storageClassName")
	return tc, true
}

// RunningClass is the class of the running clone template of img's golden:
// a pool that declares none stays on it, so moving the default StorageClass
// rolls no pool.
func (cs Composed) RunningClass(img pool.Image) (pool.Class, bool) {
	running, _ := cs.InEffect()
	tc, ok := cs.ObservedClone(running)
	if !ok || tc.Golden != img.GoldenNamespace+"/"+img.GoldenName || tc.Class == "" {
		return pool.Class{}, false
	}
	return pool.Class{Name: tc.Class, From: fmt.Sprintf("the class template %s, which the pool runs, clones onto", running)}, true
}

// ClonedByMachineSets reports a pool with a finished clone of img's golden:
// a MachineSet on a template cloning it has a ready Machine. KubeVirt starts
// a VM only once its DataVolumes are ready (pkg/virt-controller/watch/vm/
// vm.go handleDataVolumes), and a WaitForFirstConsumer disk's Node cannot
// be Ready before the disk is populated; a large pool cannot afford reading
// every worker DataVolume instead.
func (cs Composed) ClonedByMachineSets(img pool.Image, sets []clusterv1.MachineSet) bool {
	golden := img.GoldenRef()
	for _, ms := range sets {
		if ms.Status.ReadyReplicas < 1 {
			continue
		}
		if tc, ok := cs.ObservedClone(ms.Spec.Template.Spec.InfrastructureRef.Name); ok && tc.Golden == golden {
			return true
		}
	}
	return false
}

// KeptFor is the running template under n when it records ask: the
// pool asked for nothing new, so it stays as it is whatever this release
// would render, and nothing is rendered in its place (a release that
// renders differently rolls no pool; templateRevision takes it on purpose).
// A template without a record (rendered before records were written) is
// Unrecorded: decide keeps it when it is what its release made for the
// pool's spec (decide/unrecorded.go).
func (cs Composed) KeptFor(n resource.Name, ask string) *composed.Unstructured {
	u, ok := cs.Resources[n]
	if !ok || u.GetAnnotations()[pool.AnnAsk] != ask {
		return nil
	}
	return compose.AsObserved(u)
}

// Unrecorded is the running template under n when it records no ask:
// an earlier release made it before asks were recorded.
func (cs Composed) Unrecorded(n resource.Name) *composed.Unstructured {
	u, ok := cs.Resources[n]
	if !ok || u.GetAnnotations()[pool.AnnAsk] != "" {
		return nil
	}
	return u
}

// Deleting a pool. Deleting the XNodePool alone leaves its workers running:
// Cluster API makes the Cluster an owner of the MachineDeployment, its
// templates and the MachineHealthCheck (v1.11.4
// internal/controllers/machinedeployment/machinedeployment_controller.go
// util.EnsureOwnerRef, reconcileExternalTemplateReference), and Crossplane
// deletes an XR without calling the function, leaving its composed resources
// to the garbage collector (v2.2.0 internal/controller/apiextensions/
// composite/reconciler.go, meta.WasDeleted), which keeps what has a live owner.
//
// So the pool, while it exists, leaves them out of its desired state, and
// Crossplane deletes them whatever their owners (composition_functions.go
// DeletingComposedResourceGarbageCollector). The XNodePool stays, and learns
// it is to go, by:
//   - the deletion guard, a Usage of the XNodePool by its MachineDeployment
//     with replayDeletion: the webhook refuses every DELETE and records it as
//     usage.crossplane.io/deletion-attempt-with-policy
//     (internal/webhook/protection/usage/handler.go), which reconciles the
//     XNodePool (definition/reconciler.go watches XRs with no predicate);
//   - workerimage.cozystack.io/teardown, set by an XTenantCluster on a pool
//     it dropped, as a refused delete would abort its whole composition.
//
// The pool drops its MachineDeployment and health check, keeps the rest
// until Cluster API has deleted the MachineSets and Machines
// (reconcileDelete), then releases templates, Usages (a collected Usage loses
// its composite label and lets go at once) and the guard, whose going replays
// a refused delete about two seconds later
// (internal/controller/protection/usage/reconciler.go). Asked by annotation,
// it reports Released and its XTenantCluster deletes it. The ask cannot be
// taken back: the attempt stays recorded, like a deletion timestamp.

// ResourceDeletionGuard is the guard's composition resource name; not under
// prefixUsage, which protectClones owns.
const ResourceDeletionGuard = resource.Name("deletion-guard")

// Deletion protection of the goldens a pool's templates clone from. The
// webhook nousages.protection.crossplane.io refuses DELETE of any object
// labelled crossplane.io/in-use: "true" (Crossplane v2.2.0
// cluster/webhookconfigurations/usage.yaml), which the usage controller sets
// on a Usage's `of` (internal/controller/protection/usage/reconciler.go). So
// while a template clones a golden, neither the catalog, nor its garbage
// collection, nor kubectl deletes the golden; replayDeletion reissues a
// refused delete once the golden's last Usage goes.
//
// The pool, not the garbage collector, removes a Usage: the XNodePool owns
// it, so it outlives its template. Crossplane strips the
// crossplane.io/composite label from a resource it deletes as no longer
// desired (composition_functions.go, DeletingComposedResourceGarbageCollector),
// and a deleted Usage waits for its `by` only while it has that label
// (reconciler.go, meta.WasDeleted), so a dropped Usage lets go at once. When
// the XNodePool is collected the label stays and each Usage waits for its
// `by`, the template: a golden is pinned exactly as long as a template
// cloning it exists.
//
// The golden's PVC is protected too: a clone reads it, and it can be
// deleted apart from its DataVolume. So is the golden's VolumeSnapshot,
// for a template that restores its disks from it (decide/snapshot.go).

// Usage identity.
const (
	UsageAPIVersion = "protection.crossplane.io/v1beta1"
	KindUsage       = "Usage"
	PrefixUsage     = "usage-"
)

// ResourceFactoryCA is the composition resource name of the pool's Image
// Factory CA ConfigMap.
const ResourceFactoryCA = resource.Name("factory-ca")
