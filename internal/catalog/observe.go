package catalog

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	fresource "github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/observed"
)

// Composition-resource-names. A golden's key carries its name, so that
// goldens come and go independently.
const (
	goldenKeyPrefix = "golden-"
	keyClusterRole  = "clone-clusterrole"
	keyRoleBinding  = "clone-rolebinding"
)

func goldenKey(name string) fresource.Name { return fresource.Name(goldenKeyPrefix + name) }

// liveGoldens are the goldens this catalog composed and Crossplane observed.
type liveGoldens struct {
	// ByName holds the readable ones.
	ByName map[string]*cdiv1.DataVolume
	// Unreadable holds observed goldens that are not DataVolumes the function
	// can read. They are kept as they are: the function never deletes what it
	// cannot understand.
	Unreadable map[string]*unstructured.Unstructured
}

func readLiveGoldens(obs map[fresource.Name]fresource.ObservedComposed) liveGoldens {
	l := liveGoldens{ByName: map[string]*cdiv1.DataVolume{}, Unreadable: map[string]*unstructured.Unstructured{}}
	for key, oc := range obs {
		name, ok := strings.CutPrefix(string(key), goldenKeyPrefix)
		if !ok || oc.Resource == nil {
			continue
		}
		dv, err := observed.DataVolume(&oc.Resource.Unstructured)
		if err != nil {
			l.Unreadable[name] = &oc.Resource.Unstructured
			continue
		}
		l.ByName[name] = dv
	}
	return l
}

// goldenFromLive reconstructs a golden that left the catalog from its own
// DataVolume, so that while it is retiring the desired state repeats exactly
// what was composed when it was created.
func goldenFromLive(dv *cdiv1.DataVolume) Golden {
	l := liveSpecOf(dv)
	g := Golden{
		Index:        -1,
		Namespace:    dv.Namespace,
		Name:         dv.Name,
		SchematicID:  dv.Annotations[labels.AnnSchematicID],
		Version:      dv.Annotations[labels.AnnTalosVersion],
		URL:          l.URL,
		StorageText:  l.Storage,
		StorageClass: l.StorageClass,
	}
	if st := dv.Spec.Storage; st != nil {
		g.Storage = st.Resources.Requests[corev1.ResourceStorage]
	}
	if g.StorageText == "" {
		g.Storage = resource.Quantity{}
	}
	return g
}

// pinsFrom lists "<namespace>/<name>" of the templates that pin a golden,
// sorted, from the required resources fetched for it.
func pinsFrom(items []*unstructured.Unstructured) []string {
	out := make([]string, 0, len(items))
	seen := map[string]bool{}
	for _, u := range items {
		ref := u.GetNamespace() + "/" + u.GetName()
		if u.GetNamespace() == "" || seen[ref] {
			continue
		}
		seen[ref] = true
		out = append(out, ref)
	}
	sort.Strings(out)
	return out
}

// stripped keeps only what a desired object may carry: identity, labels,
// annotations and spec. Status and server-set metadata are never desired.
func stripped(u *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{}}
	out.SetAPIVersion(u.GetAPIVersion())
	out.SetKind(u.GetKind())
	out.SetName(u.GetName())
	out.SetNamespace(u.GetNamespace())
	if l := u.GetLabels(); len(l) > 0 {
		out.SetLabels(l)
	}
	if a := u.GetAnnotations(); len(a) > 0 {
		out.SetAnnotations(a)
	}
	if spec, ok := u.Object["spec"]; ok {
		out.Object["spec"] = spec
	}
	return out
}
