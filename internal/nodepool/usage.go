package nodepool

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	protectionv1beta1 "github.com/crossplane/crossplane/apis/v2/protection/v1beta1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/observed"
)

// Deletion protection of the goldens a pool's templates clone from.
//
// Crossplane enforces a Usage with its validating webhook
// nousages.protection.crossplane.io, which refuses DELETE of any object that
// carries the label crossplane.io/in-use: "true" (Crossplane v2.2.0
// cluster/webhookconfigurations/usage.yaml); the usage controller sets that
// label on the Usage's `of` object and adds an owner reference to its `by`
// object on the Usage (internal/controller/protection/usage/reconciler.go).
// So while a template clones from a golden, the catalog dropping it, the
// garbage collector deleting it with its catalog, and kubectl delete are all
// refused; with replayDeletion the refused delete is issued again once the
// last Usage of the golden is gone.
//
// What removes a Usage is this pool, not the garbage collector: a composed
// Usage also carries the XNodePool's (controller) owner reference, so the
// collector keeps it while the XNodePool lives, whatever happens to its
// template. protectClones leaves a Usage out together with its template.
// Crossplane strips the crossplane.io/composite label from a composed
// resource before it deletes one the function no longer desires
// (composition_functions.go, DeletingComposedResourceGarbageCollector), and
// a Usage being deleted waits for its `by` object only while it still
// carries that label (reconciler.go, the meta.WasDeleted branch): so a Usage
// the pool drops lets go of its golden at once.
//
// `by` is the template: when the XNodePool itself is garbage-collected the
// label is still on, so each Usage waits until its template is gone, and a
// golden stays pinned for exactly as long as a template that clones it
// exists. Since Cluster API co-owns the templates, the pool deletes them
// itself before it goes (teardown.go).
//
// The golden's PVC is protected as well: it carries its DataVolume's owner
// reference but can be deleted on its own, and a clone reads the PVC.

// Usage identity.
const (
	UsageAPIVersion = "protection.crossplane.io/v1beta1"
	KindUsage       = "Usage"
	prefixUsage     = "usage-"
)

// usageTarget is one kind of object of a golden that a Usage protects.
type usageTarget struct {
	suffix, apiVersion, kind string
}

var usageTargets = []usageTarget{
	{"datavolume", observed.CDIAPIVersion, observed.KindDataVolume},
	{"pvc", observed.CoreAPIVersion, observed.KindPVC},
}

func usageResource(template string, t usageTarget) resource.Name {
	return resource.Name(prefixUsage + template + "-" + t.suffix)
}

// cloneSource is the golden a template clones from, read back from the
// annotations every clone template carries: kept templates may clone an
// older golden than the spec names now.
func cloneSource(u *composed.Unstructured) (namespace, name string, ok bool) {
	a := u.GetAnnotations()
	if a[labels.AnnSourceType] != string(SourceClone) {
		return "", "", false
	}
	namespace, name, ok = strings.Cut(a[labels.AnnGolden], "/")
	return namespace, name, ok && namespace != "" && name != ""
}

// poolUsage is a Usage the pool composes in its own namespace: `by` in use
// of `of`, with replayDeletion, labelled as the pool's and annotated with
// it. Callers add what is particular to theirs (a reason, more annotations).
func poolUsage(p pool, name string, of protectionv1beta1.NamespacedResource, by protectionv1beta1.Resource) *protectionv1beta1.Usage {
	return &protectionv1beta1.Usage{
		TypeMeta: metav1.TypeMeta{APIVersion: UsageAPIVersion, Kind: KindUsage},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   p.Namespace,
			Labels:      map[string]string{clusterapi.LabelClusterName: p.Cluster, labels.Pool: p.Hash(), labels.ManagedBy: labels.ManagedByValue},
			Annotations: map[string]string{labels.AnnPool: p.Ref()},
		},
		Spec: protectionv1beta1.UsageSpec{
			Of:             of,
			By:             &by,
			ReplayDeletion: ptr.To(true),
		},
	}
}

// emitUsage serialises a Usage into the desired state as resource n, ready
// once it is observed.
func (pl plan) emitUsage(into map[resource.Name]*resource.DesiredComposed, n resource.Name, u *protectionv1beta1.Usage) error {
	obj, err := compose.ToDesired(u, compose.DropEmpty())
	if err != nil {
		return refused(pl.Pool.Ref(), fmt.Errorf("%s: %w", n, err))
	}
	ready := resource.ReadyFalse
	if _, ok := pl.Observed.Resources[n]; ok {
		ready = resource.ReadyTrue
	}
	into[n] = &resource.DesiredComposed{Resource: obj, Ready: ready}
	return nil
}

// renderUsages are the Usages of one clone template's golden, one per
// protected object of the golden, in the template's namespace.
func renderUsages(p pool, template, goldenNamespace, golden string) []*protectionv1beta1.Usage {
	out := make([]*protectionv1beta1.Usage, 0, len(usageTargets))
	for _, t := range usageTargets {
		reason := fmt.Sprintf("node pool %s clones its worker disks from golden image %s/%s through template %s", p.Ref(), goldenNamespace, golden, template)
		u := poolUsage(p, template+"-"+t.suffix,
			protectionv1beta1.NamespacedResource{
				APIVersion:  t.apiVersion,
				Kind:        t.kind,
				ResourceRef: &protectionv1beta1.NamespacedResourceRef{Name: golden, Namespace: ptr.To(goldenNamespace)},
			},
			protectionv1beta1.Resource{
				APIVersion:  InfraAPIVersion,
				Kind:        KindKubevirtMachineTmpl,
				ResourceRef: &protectionv1beta1.ResourceRef{Name: template},
			})
		u.Annotations[labels.AnnGolden] = labels.GoldenRef(goldenNamespace, golden)
		u.Spec.Reason = &reason
		out = append(out, u)
	}
	return out
}

// protectClones makes the Usages of into match the clone templates of into:
// every template that clones a golden gets its Usages, and a Usage whose
// template is no longer composed is left out, which deletes it (Crossplane
// strips its composite label first, so it lets go at once, with the template
// deleted in the same reconcile). With Usages turned off, only Usages that
// exist and whose template is kept stay.
func (pl plan) protectClones(into map[resource.Name]*resource.DesiredComposed, enabled bool) error {
	want := map[resource.Name]*protectionv1beta1.Usage{}
	kept := map[string]bool{}
	for n, d := range into {
		if !strings.HasPrefix(string(n), prefixMachineTemplate) {
			continue
		}
		kept[d.Resource.GetName()] = true
		ns, golden, ok := cloneSource(d.Resource)
		if !ok || !enabled {
			continue
		}
		for i, u := range renderUsages(pl.Pool, d.Resource.GetName(), ns, golden) {
			want[usageResource(d.Resource.GetName(), usageTargets[i])] = u
		}
	}
	for n := range into {
		if strings.HasPrefix(string(n), prefixUsage) {
			delete(into, n)
		}
	}
	for n, u := range want {
		if err := pl.emitUsage(into, n, u); err != nil {
			return err
		}
	}
	if !enabled {
		// Never delete protection that exists while its template is kept:
		// turning Usages off takes effect as templates go.
		pl.Observed.Keep(into, func(n resource.Name) bool {
			return !strings.HasPrefix(string(n), prefixUsage) || !kept[usageTemplate(pl.Observed.Resources[n])]
		}, pl.keptReady)
	}
	return nil
}

// usageTemplate is the template an observed Usage names as its user.
func usageTemplate(u *composed.Unstructured) string {
	name, _ := u.GetString("spec.by.resourceRef.name")
	return name
}
