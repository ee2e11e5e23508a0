package nodepool

import (
	"fmt"
	"slices"
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
// for a template that restores its disks from it (snapshot.go).

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

// poolUsage is a Usage of `of` by `by` in the pool's namespace, with
// replayDeletion, labelled and annotated as the pool's.
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

// emitUsage adds a Usage as resource n, ready once it is observed.
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

// targetsOf are the objects of a golden a template uses: its DataVolume
// and PVC, and its VolumeSnapshot when the template restores from it
// (snapshot.go).
func targetsOf(fromSnapshot bool) []usageTarget {
	if !fromSnapshot {
		return usageTargets
	}
	return append(slices.Clone(usageTargets), snapshotUsageTarget)
}

// renderUsages are the Usages of one clone template's golden, one per
// protected object of the golden (targets), in the template's namespace.
// The Usage of the golden DataVolume is also what the catalog reads the
// pool's pin from: it carries the golden's label, and the grant request
// while requestGrant (catalog/grants.go).
func renderUsages(p pool, template, goldenNamespace, golden string, requestGrant bool, targets []usageTarget) []*protectionv1beta1.Usage {
	out := make([]*protectionv1beta1.Usage, 0, len(targets))
	for _, t := range targets {
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
		if t.kind == observed.KindDataVolume {
			hash := labels.GoldenHash(goldenNamespace, golden)
			u.Labels[labels.Golden] = hash
			if requestGrant {
				u.Labels[labels.CloneGrantRequest] = hash
			}
		}
		u.Spec.Reason = &reason
		out = append(out, u)
	}
	return out
}

// protectClones gives every clone template in into its golden's Usages and
// leaves out a Usage whose template is gone, which lets go at once. With
// Usages off, only existing Usages of kept templates stay.
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
		// The grant is asked for on the Usages of the golden the pool
		// clones now, which is what the catalog must bind it for.
		ask := pl.GrantRequest && ns == pl.Image.GoldenNamespace && golden == pl.Image.GoldenName
		// A template restoring from the golden's snapshot protects it too;
		// the catalog names it as the golden (goldensnapshot.Golden).
		snapNS, snap, fromSnapshot := restoresSnapshot(d.Resource)
		targets := targetsOf(fromSnapshot && snapNS == ns && snap == golden)
		for i, u := range renderUsages(pl.Pool, d.Resource.GetName(), ns, golden, ask, targets) {
			want[usageResource(d.Resource.GetName(), targets[i])] = u
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
