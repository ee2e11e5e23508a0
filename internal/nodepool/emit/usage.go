package emit

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
	"github.com/cozystack/function-worker-image/internal/goldensnapshot"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/observed"
)

// snapshotUsageTarget is the Usage of the golden's VolumeSnapshot that a
// template restoring from it adds to its golden's (usage.go).
var snapshotUsageTarget = usageTarget{"volumesnapshot", goldensnapshot.APIVersion, goldensnapshot.Kind}

// usageTarget is one kind of object of a golden that a Usage protects.
type usageTarget struct {
	Suffix, apiVersion, kind string
}

var usageTargets = []usageTarget{
	{"datavolume", observed.CDIAPIVersion, observed.KindDataVolume},
	{"pvc", observed.CoreAPIVersion, observed.KindPVC},
}

func usageResource(template string, t usageTarget) resource.Name {
	return resource.Name(read.PrefixUsage + template + "-" + t.Suffix)
}

// poolUsage is a Usage of `of` by `by` in the pool's namespace, with
// replayDeletion, labelled and annotated as the pool's.
func poolUsage(p pool.Pool, name string, of protectionv1beta1.NamespacedResource, by protectionv1beta1.Resource) *protectionv1beta1.Usage {
	return &protectionv1beta1.Usage{
		TypeMeta: metav1.TypeMeta{APIVersion: read.UsageAPIVersion, Kind: read.KindUsage},
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
func emitUsage(pl decide.Plan, into map[resource.Name]*resource.DesiredComposed, n resource.Name, u *protectionv1beta1.Usage) error {
	obj, err := compose.ToDesired(u, compose.DropEmpty())
	if err != nil {
		return pool.Refused(pl.Pool.Ref(), fmt.Errorf("%s: %w", n, err))
	}
	ready := resource.ReadyFalse
	if _, ok := pl.Composed.Resources[n]; ok {
		ready = resource.ReadyTrue
	}
	into[n] = &resource.DesiredComposed{Resource: obj, Ready: ready}
	return nil
}

// TargetsOf are the objects of a golden a template uses: its DataVolume
// and PVC, and its VolumeSnapshot when the template restores from it
// (decide/snapshot.go).
func TargetsOf(fromSnapshot bool) []usageTarget {
	if !fromSnapshot {
		return usageTargets
	}
	return append(slices.Clone(usageTargets), snapshotUsageTarget)
}

// renderUsages are the Usages of one clone template's golden, one per
// protected object of the golden (targets), in the template's namespace.
// The Usage of the golden DataVolume is also what the catalog reads the
// pool's pin from: it carries the golden's label, and the grant ask
// while requestGrant (catalog/grants.go).
func renderUsages(p pool.Pool, template, goldenNamespace, golden string, requestGrant bool, targets []usageTarget) []*protectionv1beta1.Usage {
	out := make([]*protectionv1beta1.Usage, 0, len(targets))
	for _, t := range targets {
		reason := fmt.Sprintf("node pool %s clones its worker disks from golden image %s/%s through template %s", p.Ref(), goldenNamespace, golden, template)
		u := poolUsage(p, template+"-"+t.Suffix,
			protectionv1beta1.NamespacedResource{
				APIVersion:  t.apiVersion,
				Kind:        t.kind,
				ResourceRef: &protectionv1beta1.NamespacedResourceRef{Name: golden, Namespace: ptr.To(goldenNamespace)},
			},
			protectionv1beta1.Resource{
				APIVersion:  pool.InfraAPIVersion,
				Kind:        pool.KindKubevirtMachineTmpl,
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
func protectClones(pl decide.Plan, into map[resource.Name]*resource.DesiredComposed, enabled bool) error {
	want := map[resource.Name]*protectionv1beta1.Usage{}
	kept := map[string]bool{}
	for n, d := range into {
		if !strings.HasPrefix(string(n), read.PrefixMachineTemplate) {
			continue
		}
		kept[d.Resource.GetName()] = true
		ns, golden, ok := read.CloneSource(d.Resource)
		if !ok || !enabled {
			continue
		}
		// The grant is asked for on the Usages of the golden the pool
		// clones now, which is what the catalog must bind it for.
		ask := pl.GrantRequest && ns == pl.Image.GoldenNamespace && golden == pl.Image.GoldenName
		// A template restoring from the golden's snapshot protects it too;
		// the catalog names it as the golden (goldensnapshot.Golden).
		snapNS, snap, fromSnapshot := read.RestoresSnapshot(d.Resource)
		targets := TargetsOf(fromSnapshot && snapNS == ns && snap == golden)
		for i, u := range renderUsages(pl.Pool, d.Resource.GetName(), ns, golden, ask, targets) {
			want[usageResource(d.Resource.GetName(), targets[i])] = u
		}
	}
	for n := range into {
		if strings.HasPrefix(string(n), read.PrefixUsage) {
			delete(into, n)
		}
	}
	for n, u := range want {
		if err := emitUsage(pl, into, n, u); err != nil {
			return err
		}
	}
	if !enabled {
		// Never delete protection that exists while its template is kept:
		// turning Usages off takes effect as templates go.
		pl.Composed.Keep(into, func(n resource.Name) bool {
			return !strings.HasPrefix(string(n), read.PrefixUsage) || !kept[UsageTemplate(pl.Composed.Resources[n])]
		}, func(n resource.Name) resource.Ready { return keptReady(pl, n) })
	}
	return nil
}

// UsageTemplate is the template an observed Usage names as its user.
func UsageTemplate(u *composed.Unstructured) string {
	name, _ := u.GetString("spec.by.resourceRef.name")
	return name
}
