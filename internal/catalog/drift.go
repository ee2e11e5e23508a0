package catalog

import (
	"fmt"
	"strings"

	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// liveSpec is an existing golden's DataVolume spec; empty is unset.
type liveSpec struct {
	URL          string
	Storage      string
	StorageClass string
}

func liveSpecOf(dv *cdiv1.DataVolume) liveSpec {
	var l liveSpec
	if s := dv.Spec.Source; s != nil && s.HTTP != nil {
		l.URL = s.HTTP.URL
	}
	if st := dv.Spec.Storage; st != nil {
		if q, ok := st.Resources.Requests[corev1.ResourceStorage]; ok {
			l.Storage = q.String()
		}
		if st.StorageClassName != nil {
			l.StorageClass = *st.StorageClassName
		}
	}
	return l
}

// detectDrift refuses an entry that no longer matches its existing golden: a
// DataVolume spec is immutable, so the API server would reject the change.
// Only fields the live object sets count; sizes compare as quantities.
func detectDrift(xrName string, goldens []Golden, live map[string]*cdiv1.DataVolume) error {
	var drifted []string
	for _, g := range goldens {
		dv, ok := live[g.Name]
		if !ok {
			continue
		}
		l := liveSpecOf(dv)
		var changes []string
		if l.URL != "" && l.URL != g.URL {
			changes = append(changes, fmt.Sprintf("source URL %q -> %q", l.URL, g.URL))
		}
		if l.Storage != "" {
			if q, err := resource.ParseQuantity(l.Storage); err != nil || q.Cmp(g.Storage) != 0 {
				changes = append(changes, fmt.Sprintf("storage %q -> %q", l.Storage, g.StorageText))
			}
		}
		if l.StorageClass != "" && l.StorageClass != g.StorageClass {
			changes = append(changes, fmt.Sprintf("storageClass %q -> %q", l.StorageClass, g.StorageClass))
		}
		if len(changes) == 0 {
			continue
		}
		drifted = append(drifted, fmt.Sprintf("images[%d] (%s, %s) changed after its golden DataVolume %s/%s was created: %s",
			g.Index, g.SchematicID, g.Version, g.Namespace, g.Name, strings.Join(changes, ", ")))
	}
	if len(drifted) == 0 {
		return nil
	}
	return refused(xrName, fmt.Errorf("%s. A DataVolume spec is immutable, so the golden cannot be changed in place: revert the entry, or add a NEW entry with a different (schematicID, version), move the pools onto it, then remove the old entry (its golden is kept while any pool still pins it)",
		strings.Join(drifted, "; ")))
}
