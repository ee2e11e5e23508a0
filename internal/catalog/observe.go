package catalog

import (
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"

	fresource "github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/clonerbac"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/goldensnapshot"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/observed"
	"github.com/cozystack/function-worker-image/internal/talosimage"
)

// Composition-resource-names; a golden's key carries its name so goldens
// come and go independently.
const (
	goldenKeyPrefix = "golden-"
	// snapshotKeyPrefix and a golden's name key its VolumeSnapshot.
	snapshotKeyPrefix = "snapshot-"
	keyClusterRole    = "clone-clusterrole"
	keyRoleBinding    = "clone-rolebinding"
	// usageKeyPrefix and a golden's label hash key the RoleBinding's Usage
	// by that golden; keyRoleUsage keys the ClusterRole's.
	usageKeyPrefix = "clone-usage-"
	keyRoleUsage   = usageKeyPrefix + "clusterrole"
)

func goldenKey(name string) fresource.Name { return fresource.Name(goldenKeyPrefix + name) }

func snapshotKey(name string) fresource.Name { return fresource.Name(snapshotKeyPrefix + name) }

// owns is the catalog's part of the observed composed resources: its goldens
// and its clone RBAC, with the kind each is composed as.
func owns(n fresource.Name) (apiVersion, kind string, ok bool) {
	switch {
	case strings.HasPrefix(string(n), goldenKeyPrefix):
		return observed.CDIAPIVersion, observed.KindDataVolume, true
	case strings.HasPrefix(string(n), snapshotKeyPrefix):
		return goldensnapshot.APIVersion, goldensnapshot.Kind, true
	case n == keyFactoryCA:
		return "v1", "ConfigMap", true
	case n == keyClusterRole:
		return rbacv1.SchemeGroupVersion.String(), "ClusterRole", true
	case n == keyRoleBinding:
		return rbacv1.SchemeGroupVersion.String(), "RoleBinding", true
	case strings.HasPrefix(string(n), usageKeyPrefix):
		return clonerbac.UsageAPIVersion, clonerbac.KindUsage, true
	}
	return "", "", false
}

// observedState is what the catalog composed and Crossplane observed.
type observedState struct {
	compose.Observed
	// Live holds the goldens the function can read, by name.
	Live map[string]*cdiv1.DataVolume
	// Snapshots holds the goldens' VolumeSnapshots the function can read,
	// by golden name.
	Snapshots map[string]*snapshotv1.VolumeSnapshot
	// Binding is the observed clone RoleBinding, nil unless readable.
	Binding *rbacv1.RoleBinding
}

func readObserved(obs map[fresource.Name]fresource.ObservedComposed) observedState {
	s := observedState{Observed: compose.ReadObserved(obs, owns), Live: map[string]*cdiv1.DataVolume{}, Snapshots: map[string]*snapshotv1.VolumeSnapshot{}}
	for _, key := range s.Names() {
		if name, ok := strings.CutPrefix(string(key), goldenKeyPrefix); ok {
			dv := &cdiv1.DataVolume{}
			if s.Read(key, dv) {
				s.Live[name] = dv
			}
		}
		if name, ok := strings.CutPrefix(string(key), snapshotKeyPrefix); ok {
			vs := &snapshotv1.VolumeSnapshot{}
			if s.Read(key, vs) {
				s.Snapshots[name] = vs
			}
		}
	}
	rb := &rbacv1.RoleBinding{}
	if s.Read(keyRoleBinding, rb) {
		s.Binding = rb
	}
	return s
}

// unreadableGoldens are the observed goldens the function cannot read as
// DataVolumes, by name; they are kept, never deleted.
func (s observedState) unreadableGoldens() map[string]*composed.Unstructured {
	out := map[string]*composed.Unstructured{}
	for _, key := range s.Names() {
		if name, ok := strings.CutPrefix(string(key), goldenKeyPrefix); ok && s.Unreadable(key) {
			out[name] = s.Resources[key]
		}
	}
	return out
}

// goldenFromLive rebuilds a golden that left the catalog from its own
// DataVolume, so that while it retires the desired state repeats what was
// composed, name included.
func goldenFromLive(keyName string, dv *cdiv1.DataVolume) Golden {
	g := Golden{
		Index:       -1,
		Namespace:   dv.Namespace,
		Name:        objectName(dv.Name, keyName),
		SchematicID: dv.Annotations[labels.AnnSchematicID],
		Version:     dv.Annotations[labels.AnnTalosVersion],
	}
	g = madeWith(g, liveSpecOf(dv))
	g.Arch = talosimage.ArchitectureOf(g.URL)
	return g
}

// objectName is an observed golden's own name, else its key's.
func objectName(observed, keyName string) string {
	if observed != "" {
		return observed
	}
	return keyName
}

// pinsFrom lists the templates that pin a golden, "<namespace>/<name>", sorted.
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
