package catalog

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/internal/cdistate"
	"github.com/cozystack/function-worker-image/internal/redact"
)

// liveSpec is what an existing golden was made with; empty is unset.
type liveSpec struct {
	URL          string
	Storage      string
	StorageClass string
	Import       importSource
}

// liveSpecOf reads a golden's DataVolume spec, whichever of spec.storage
// and spec.pvc it was made with (an older chart wrote spec.pvc).
func liveSpecOf(dv *cdiv1.DataVolume) liveSpec {
	var l liveSpec
	if s := dv.Spec.Source; s != nil && s.HTTP != nil {
		h := s.HTTP
		l.URL = h.URL
		l.Import = importSource{CertConfigMap: h.CertConfigMap, SecretRef: h.SecretRef, SecretExtraHeaders: slices.Sorted(slices.Values(h.SecretExtraHeaders)), Checksum: h.Checksum}
	}
	var requests corev1.ResourceList
	var class *string
	switch {
	case dv.Spec.Storage != nil:
		requests, class = dv.Spec.Storage.Resources.Requests, dv.Spec.Storage.StorageClassName
	case dv.Spec.PVC != nil:
		requests, class = dv.Spec.PVC.Resources.Requests, dv.Spec.PVC.StorageClassName
	}
	if q, ok := requests[corev1.ResourceStorage]; ok {
		l.Storage = q.String()
	}
	if class != nil {
		l.StorageClass = *class
	}
	return l
}

// settle decides, for every golden of the catalog that exists, what its
// desired state is. A DataVolume's spec is immutable, and a golden is one
// import done once:
//
//   - a golden that succeeded, or that anything uses or pins, is kept
//     exactly as it was made: a default changed since (the factory URL, a
//     mirror of it, the size, the CA, the credentials) applies to
//     new goldens only. Only a value the entry itself writes can contradict
//     it, and that is refused (explicitConflicts);
//   - a golden that never succeeded and that nothing uses, whose import
//     would now be made otherwise (another URL, size, class, CA, credentials
//     or checksum), is re-created: it is left out of the desired state,
//     which deletes it, and composed anew once it is gone. That is how a
//     golden failing for want of a CA, credentials or a mirror gets them.
//
// A golden's architecture and class are part of what it is, not defaults:
// its name is decided from what the goldens were made with (resolve.go
// madeGoldens), so a golden never changes architecture or class. One whose
// architecture or class is no longer listed leaves the catalog (retiring
// while in use, planGoldens); it is not re-created. The one exception is a
// golden left to the default class, which counts as the first listed
// class's: if it never succeeded and nothing holds it, it is re-created on
// that class.
//
// The status then shows each golden as it is.
func settle(xrName string, plan []planned) error {
	var conflicts []string
	for i := range plan {
		p := &plan[i]
		if p.Retiring || p.Live == nil {
			continue
		}
		l := liveSpecOf(p.Live)
		if kept(*p) {
			conflicts = append(conflicts, explicitConflicts(p.Golden, l)...)
			p.Golden = madeWith(p.Golden, l)
			continue
		}
		if p.Changes = importChanges(p.Golden, l); len(p.Changes) > 0 {
			p.Recreate = true
		}
	}
	if len(conflicts) == 0 {
		return nil
	}
	return refused(xrName, fmt.Errorf("%s. A golden is imported once and its DataVolume's spec is immutable; a catalog-wide default (spec.imageFactoryURL, spec.storage, the Input's) applies to new goldens only, but a value written on the entry itself must match the golden it names",
		strings.Join(conflicts, "; ")))
}

// kept reports a golden that has something to keep: its import succeeded,
// or a Usage or a template holds it (a refused delete would stop the
// catalog applying anything).
func kept(p planned) bool {
	return cdistate.Of(p.Live, nil).Ready() || p.InUse || p.SnapshotInUse || len(p.PinnedBy) > 0 || p.Snapshot != nil
}

// explicitConflicts names each value the entry wrote itself that its kept
// golden was not made with, and the fix that can be done. A URL conflicts
// only when it names another image: a mirror serves the same
// /image/<schematic>/<version>/ path from another host.
func explicitConflicts(g Golden, l liveSpec) []string {
	var out []string
	entry := fmt.Sprintf("images[%d]", g.Index)
	golden := g.Namespace + "/" + g.Name
	if g.Explicit.Storage && l.Storage != "" {
		if q, err := resource.ParseQuantity(l.Storage); err != nil || q.Cmp(g.Storage) != 0 {
			out = append(out, fmt.Sprintf("%s.storage is %q, but golden DataVolume %s was made with %s and a DataVolume's size cannot change: remove %s.storage or set it to %s (the golden's size only bounds the pools' diskSize from below)",
				entry, g.StorageText, golden, l.Storage, entry, l.Storage))
		}
	}
	if g.Explicit.URL && l.URL != "" && !strings.Contains(l.URL, imagePath(g)) {
		out = append(out, fmt.Sprintf("%s.imageFactoryURL makes the source %q, but golden DataVolume %s imported another image, %q: remove %s.imageFactoryURL, or point it at a factory or mirror that serves %s",
			entry, redact.Text(g.URL), golden, redact.Text(l.URL), entry, imagePath(g)))
	}
	return out
}

// imagePath is the part of a golden's URL a mirror serves unchanged.
func imagePath(g Golden) string {
	return "/image/" + g.SchematicID + "/" + g.Version + "/"
}

// madeWith is the golden as its DataVolume says it was made, for its
// status and its desired state (emit re-emits the observed spec itself).
func madeWith(g Golden, l liveSpec) Golden {
	g.URL, g.StorageClass, g.Import = l.URL, l.StorageClass, l.Import
	g.StorageText = l.Storage
	g.Storage = resource.Quantity{}
	if l.Storage != "" {
		g.Storage = resource.MustParse(l.Storage)
	}
	return g
}

// importChanges names what the catalog would now import otherwise for a
// golden than its DataVolume does; none when they are the same.
func importChanges(g Golden, l liveSpec) []string {
	var out []string
	if l.URL != g.URL {
		out = append(out, "source URL")
	}
	if q, err := resource.ParseQuantity(l.Storage); err != nil || q.Cmp(g.Storage) != 0 {
		out = append(out, "size")
	}
	if l.StorageClass != g.StorageClass {
		out = append(out, "StorageClass")
	}
	if l.Import.CertConfigMap != g.Import.CertConfigMap {
		out = append(out, "CA")
	}
	if l.Import.SecretRef != g.Import.SecretRef || !slices.Equal(l.Import.SecretExtraHeaders, g.Import.SecretExtraHeaders) {
		out = append(out, "credentials")
	}
	if l.Import.Checksum != g.Import.Checksum {
		out = append(out, "checksum")
	}
	return out
}
