package catalog

import (
	"fmt"
	"strings"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	storagev1 "k8s.io/api/storage/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	fresource "github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/cdistate"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/goldensnapshot"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/observed"
	"github.com/cozystack/function-worker-image/internal/required"
	"github.com/cozystack/function-worker-image/internal/storageclass"
)

// Snapshot goldens (docs/platform.md, "Snapshot goldens"): where a golden's
// StorageClass keeps boot sources as snapshots, the catalog takes one
// VolumeSnapshot of the golden once it has imported, named as the golden
// (goldensnapshot.Golden says why the clone RBAC then needs nothing more).
// It stays exactly as long as its golden may be cloned from it: while the
// profile prefers snapshots, or while anything holds the golden (a Usage, a
// template pin) or the snapshot itself (a pool's Usage of it). An existing
// snapshot is re-composed as it was taken: its source is immutable, and a
// new VolumeSnapshotClass is taken only by a new snapshot.

// Requirement names of what the snapshot preference is read from.
const (
	reqStorageClasses  = "storageclasses"
	reqStorageProfiles = "storageprofiles"
)

// snapshotSelectors ask for the StorageClasses (the default class of a
// golden that names none) and CDI's StorageProfiles, few objects, when
// snapshot goldens are on and there is a golden.
func snapshotSelectors(sel required.Selectors) {
	all := map[string]string{}
	sel[reqStorageClasses] = required.ByLabels(observed.StorageAPIVersion, observed.KindStorageClass, "", all)
	sel[reqStorageProfiles] = required.ByLabels(observed.CDIAPIVersion, observed.KindStorageProfile, "", all)
}

// snapshotWorld is what the preference of each golden's class is read from.
type snapshotWorld struct {
	enabled  bool
	classes  []storagev1.StorageClass
	profiles map[string]*cdiv1.StorageProfile
}

// readSnapshotWorld reads the classes and profiles; one that cannot be read
// counts as absent, so its class's goldens stay PVCs only.
func readSnapshotWorld(enabled bool, got required.Resolved) snapshotWorld {
	w := snapshotWorld{enabled: enabled, profiles: map[string]*cdiv1.StorageProfile{}}
	if !enabled {
		return w
	}
	for _, u := range got[reqStorageClasses] {
		if sc, err := observed.StorageClass(u); err == nil {
			w.classes = append(w.classes, *sc)
		}
	}
	for _, u := range got[reqStorageProfiles] {
		if sp, err := observed.StorageProfile(u); err == nil {
			w.profiles[sp.Name] = sp
		}
	}
	return w
}

// preference is whether the golden's class keeps goldens as snapshots: its
// declared class, else the default CDI binds it on.
func (w snapshotWorld) preference(g Golden) goldensnapshot.Preference {
	if !w.enabled {
		return goldensnapshot.Preference{Why: "snapshotGoldens.enabled is false"}
	}
	class := g.StorageClass
	if class == "" {
		class = storageclass.Default(w.classes).Name
	}
	return goldensnapshot.Preferred(class, w.profiles[class])
}

// snapshotHeld reports whether anything may still clone the golden or its
// snapshot: a Usage of either, or a template pin.
func snapshotHeld(p planned) bool {
	return p.InUse || p.SnapshotInUse || len(p.PinnedBy) > 0
}

// desiredSnapshot is the golden's VolumeSnapshot to compose, nil to leave it
// out (which deletes an observed one). An observed snapshot is repeated as
// it was taken while the class prefers snapshots or anything holds it; a
// new one is taken of a golden in the catalog that imported.
func desiredSnapshot(p planned) *snapshotv1.VolumeSnapshot {
	g := goldensnapshot.Golden{Namespace: p.Namespace, Name: p.Name, SnapshotClass: p.SnapshotPref.SnapshotClass, SchematicID: p.SchematicID, Version: p.Version}
	if vs := p.Snapshot; vs != nil {
		// A golden the function cannot read keeps its snapshot too.
		if !p.SnapshotPref.Snapshot && !snapshotHeld(p) && p.Raw == nil {
			return nil
		}
		if c := vs.Spec.VolumeSnapshotClassName; c != nil {
			g.SnapshotClass = *c
		}
		if c := vs.Spec.Source.PersistentVolumeClaimName; c != nil {
			g.Claim = *c
		}
		// What it holds, as it recorded it, when the golden cannot say
		// (an unreadable one): its annotations are not dropped.
		if g.SchematicID == "" {
			g.SchematicID = vs.Annotations[labels.AnnSchematicID]
		}
		if g.Version == "" {
			g.Version = vs.Annotations[labels.AnnTalosVersion]
		}
		return goldensnapshot.Desired(g)
	}
	if !p.SnapshotPref.Snapshot || p.Retiring || p.Raw != nil || !cdistate.Of(p.Live, nil).Ready() {
		return nil
	}
	return goldensnapshot.Desired(g)
}

// emitSnapshot composes vs, the golden's desiredSnapshot, ready once
// readyToUse (a retiring golden's at once, as the golden's); it reports
// whether the catalog waits for one.
func emitSnapshot(into map[fresource.Name]*fresource.DesiredComposed, p planned, vs *snapshotv1.VolumeSnapshot) (waiting bool, err error) {
	if vs == nil {
		return false, nil
	}
	c, err := compose.ToDesired(vs)
	if err != nil {
		return false, fmt.Errorf("cannot compose golden VolumeSnapshot %s/%s: %w", vs.Namespace, vs.Name, err)
	}
	ready := goldensnapshot.StateOf(p.Snapshot).Ready()
	r := fresource.ReadyFalse
	if ready || p.Retiring {
		r = fresource.ReadyTrue
	}
	into[snapshotKey(strings.TrimPrefix(string(p.Key), goldenKeyPrefix))] = &fresource.DesiredComposed{Resource: c, Ready: r}
	return !ready && !p.Retiring, nil
}

// snapshotStatus is the golden's status.snapshot, vs its desiredSnapshot:
// nil unless it has or is to have a snapshot.
func snapshotStatus(p planned, vs *snapshotv1.VolumeSnapshot) *v1alpha1.GoldenSnapshotStatus {
	if vs == nil {
		if !p.SnapshotPref.Snapshot || p.Retiring || p.Raw != nil {
			return nil
		}
		// Wanted, not taken yet: the golden has not imported.
		return &v1alpha1.GoldenSnapshotStatus{Name: p.Name, VolumeSnapshotClass: p.SnapshotPref.SnapshotClass, State: string(goldensnapshot.Missing)}
	}
	st := goldensnapshot.StateOf(p.Snapshot)
	out := &v1alpha1.GoldenSnapshotStatus{Name: vs.Name, State: string(st.Kind), Message: st.Message}
	if c := vs.Spec.VolumeSnapshotClassName; c != nil {
		out.VolumeSnapshotClass = *c
	}
	if st.RestoreSize != nil {
		out.RestoreSize = st.RestoreSize.String()
	}
	return out
}

// ConditionSnapshotsReady is reported only where a golden has or wants a
// snapshot, so a catalog on classes that prefer PVCs reads as before.
const ConditionSnapshotsReady = "GoldenSnapshotsReady"

// snapshotsCondition summarises the goldens' snapshots; ok is false when no
// golden has or wants one.
func snapshotsCondition(plan []planned) (compose.Condition, bool) {
	var waiting, failed []string
	total := 0
	for _, p := range plan {
		vs := desiredSnapshot(p)
		st := snapshotStatus(p, vs)
		if st == nil || p.Retiring {
			continue
		}
		total++
		ref := p.Namespace + "/" + p.Name
		switch goldensnapshot.StateKind(st.State) {
		case goldensnapshot.Ready:
		case goldensnapshot.Failed:
			failed = append(failed, fmt.Sprintf("VolumeSnapshot %s reports status.error %q: check the VolumeSnapshotContent it is bound to and the CSI snapshotter's logs for driver of VolumeSnapshotClass %s; the snapshotter retries by itself, and deleting the VolumeSnapshot (when nothing uses it) makes the catalog take a new one", ref, st.Message, st.VolumeSnapshotClass))
		case goldensnapshot.Missing:
			// Composed this call and not observed yet, or not taken
			// before the golden has imported.
			why := "the golden has not imported yet"
			if vs != nil {
				why = "being taken"
			}
			waiting = append(waiting, fmt.Sprintf("%s (%s)", ref, why))
		default:
			waiting = append(waiting, fmt.Sprintf("%s (%s)", ref, strings.ToLower(st.State)))
		}
	}
	switch {
	case total == 0:
		return compose.Condition{}, false
	case len(failed) > 0:
		return compose.Condition{Type: ConditionSnapshotsReady, Status: compose.StatusFalse, Reason: "SnapshotFailed", Message: strings.Join(failed, "; ") + ". New clone templates of these goldens wait for their snapshot."}, true
	case len(waiting) > 0:
		return compose.Condition{Type: ConditionSnapshotsReady, Status: compose.StatusFalse, Reason: "SnapshotPending",
			Message: fmt.Sprintf("%d of %d golden snapshots are ready to use; waiting for %s. New clone templates of these goldens wait for their snapshot; running workers are not affected.", total-len(waiting), total, strings.Join(waiting, ", "))}, true
	}
	return compose.Condition{Type: ConditionSnapshotsReady, Status: compose.StatusTrue, Reason: "AllReadyToUse", Message: fmt.Sprintf("Every golden snapshot (%d) is ready to use: new worker disks of their StorageClasses restore from them.", total)}, true
}
