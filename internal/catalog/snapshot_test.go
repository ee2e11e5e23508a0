package catalog

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	fresource "github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/goldensnapshot"
	"github.com/cozystack/function-worker-image/internal/required"
)

// snapGolden is a catalog entry on class replicated, whose profile prefers
// snapshots taken with VolumeSnapshotClass linstor-snapshots (prefers).
var snapGolden = Golden{Index: 0, Namespace: "cozy-public", Name: "talos-worker-a-v1.0.0", SchematicID: "a", Version: "v1.0.0", StorageText: "6Gi", StorageClass: "replicated"}

var (
	prefers    = goldensnapshot.Preference{Snapshot: true, SnapshotClass: "linstor-snapshots", Why: "StorageProfile replicated status.dataImportCronSourceFormat is snapshot, VolumeSnapshotClass linstor-snapshots"}
	prefersPVC = goldensnapshot.Preference{Why: "StorageProfile replicated status.dataImportCronSourceFormat is pvc"}
)

func goldenDV(phase cdiv1.DataVolumePhase) *cdiv1.DataVolume {
	return &cdiv1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{Name: snapGolden.Name, Namespace: snapGolden.Namespace},
		Status:     cdiv1.DataVolumeStatus{Phase: phase},
	}
}

// takenSnapshot is the golden's observed VolumeSnapshot, taken of claim
// with class, in the given status.
func takenSnapshot(class, claim string, st *snapshotv1.VolumeSnapshotStatus) *snapshotv1.VolumeSnapshot {
	return &snapshotv1.VolumeSnapshot{
		ObjectMeta: metav1.ObjectMeta{Name: snapGolden.Name, Namespace: snapGolden.Namespace},
		Spec: snapshotv1.VolumeSnapshotSpec{
			Source:                  snapshotv1.VolumeSnapshotSource{PersistentVolumeClaimName: ptr(claim)},
			VolumeSnapshotClassName: ptr(class),
		},
		Status: st,
	}
}

func readyStatus() *snapshotv1.VolumeSnapshotStatus {
	ready, size := true, resource.MustParse("6Gi")
	return &snapshotv1.VolumeSnapshotStatus{BoundVolumeSnapshotContentName: ptr("snapcontent-0b1c"), ReadyToUse: &ready, RestoreSize: &size}
}

// desiredOf is the snapshot goldensnapshot.Desired makes of the golden with
// the given class and claim.
func desiredOf(g Golden, class, claim string) *snapshotv1.VolumeSnapshot {
	return goldensnapshot.Desired(goldensnapshot.Golden{Namespace: g.Namespace, Name: g.Name, Claim: claim, SnapshotClass: class, SchematicID: g.SchematicID, Version: g.Version})
}

func TestDesiredSnapshot(t *testing.T) {
	raw := &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}}
	cases := map[string]struct {
		reason string
		p      planned
		want   *snapshotv1.VolumeSnapshot
	}{
		"GoldenImportingTakesNone": {
			reason: "A snapshot of a golden still importing would capture a partial disk.",
			p:      planned{Golden: snapGolden, Key: goldenKey(snapGolden.Name), Live: goldenDV(cdiv1.ImportInProgress), SnapshotPref: prefers},
		},
		"GoldenNotCreatedTakesNone": {
			reason: "No DataVolume, nothing to snapshot.",
			p:      planned{Golden: snapGolden, Key: goldenKey(snapGolden.Name), SnapshotPref: prefers},
		},
		"GoldenSucceededAndPreferredTakesOne": {
			reason: "Once imported, on a class that prefers snapshots: a new snapshot of the golden's claim, with the class of the preference.",
			p:      planned{Golden: snapGolden, Key: goldenKey(snapGolden.Name), Live: goldenDV(cdiv1.Succeeded), SnapshotPref: prefers},
			want:   desiredOf(snapGolden, "linstor-snapshots", snapGolden.Name),
		},
		"GoldenSucceededNotPreferredTakesNone": {
			reason: "A class that keeps boot sources as PVCs gets no snapshot.",
			p:      planned{Golden: snapGolden, Key: goldenKey(snapGolden.Name), Live: goldenDV(cdiv1.Succeeded), SnapshotPref: prefersPVC},
		},
		"RetiringGoldenNotSnapshottedTakesNone": {
			reason: "A golden that left the catalog is only kept for what clones it: no new snapshot is taken of it.",
			p:      planned{Golden: snapGolden, Key: goldenKey(snapGolden.Name), Live: goldenDV(cdiv1.Succeeded), PinnedBy: []string{"tenant-a/md0-1"}, Retiring: true, SnapshotPref: prefers},
		},
		"UnreadableGoldenTakesNone": {
			reason: "A golden the function cannot read may not have imported: no new snapshot.",
			p:      planned{Golden: snapGolden, Key: goldenKey(snapGolden.Name), Raw: raw, SnapshotPref: prefers},
		},
		"ObservedSnapshotIsRepeatedAsTaken": {
			reason: "An observed snapshot's source is immutable and a new class is taken only by a new snapshot: its own class and claim, not the preference's.",
			p: planned{Golden: snapGolden, Key: goldenKey(snapGolden.Name), Live: goldenDV(cdiv1.Succeeded), SnapshotPref: prefers,
				Snapshot: takenSnapshot("linstor-old", "older-claim", readyStatus())},
			want: desiredOf(snapGolden, "linstor-old", "older-claim"),
		},
		"ObservedSnapshotWithoutClassTakesThePreferences": {
			reason: "A snapshot observed without spec.volumeSnapshotClassName (the snapshot controller fills it in) is repeated with the preference's class.",
			p: planned{Golden: snapGolden, Key: goldenKey(snapGolden.Name), Live: goldenDV(cdiv1.Succeeded), SnapshotPref: prefers,
				Snapshot: &snapshotv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: snapGolden.Name, Namespace: snapGolden.Namespace}, Spec: snapshotv1.VolumeSnapshotSpec{Source: snapshotv1.VolumeSnapshotSource{PersistentVolumeClaimName: ptr(snapGolden.Name)}}}},
			want: desiredOf(snapGolden, "linstor-snapshots", snapGolden.Name),
		},
		"ObservedSnapshotNotPreferredNorHeldIsDropped": {
			reason: "The profile now prefers PVCs and nothing may clone the golden or its snapshot: left out, which deletes it.",
			p: planned{Golden: snapGolden, Key: goldenKey(snapGolden.Name), Live: goldenDV(cdiv1.Succeeded), SnapshotPref: prefersPVC,
				Snapshot: takenSnapshot("linstor-snapshots", snapGolden.Name, readyStatus())},
		},
		"ObservedSnapshotKeptWhileTheGoldenIsInUse": {
			reason: "A Usage of the golden may belong to a template restoring from the snapshot: kept.",
			p: planned{Golden: snapGolden, Key: goldenKey(snapGolden.Name), Live: goldenDV(cdiv1.Succeeded), SnapshotPref: prefersPVC, InUse: true,
				Snapshot: takenSnapshot("linstor-snapshots", snapGolden.Name, readyStatus())},
			want: desiredOf(snapGolden, "linstor-snapshots", snapGolden.Name),
		},
		"ObservedSnapshotKeptWhileTheGoldenIsPinned": {
			reason: "A template pinning the golden (usages off) may restore from the snapshot: kept.",
			p: planned{Golden: snapGolden, Key: goldenKey(snapGolden.Name), Live: goldenDV(cdiv1.Succeeded), SnapshotPref: prefersPVC, PinnedBy: []string{"tenant-a/md0-1"},
				Snapshot: takenSnapshot("linstor-snapshots", snapGolden.Name, readyStatus())},
			want: desiredOf(snapGolden, "linstor-snapshots", snapGolden.Name),
		},
		"ObservedSnapshotKeptWhileItIsInUse": {
			reason: "A Usage of the snapshot itself would refuse its delete, which stops the whole composition: kept.",
			p: planned{Golden: snapGolden, Key: goldenKey(snapGolden.Name), Live: goldenDV(cdiv1.Succeeded), SnapshotPref: prefersPVC, SnapshotInUse: true,
				Snapshot: takenSnapshot("linstor-snapshots", snapGolden.Name, readyStatus())},
			want: desiredOf(snapGolden, "linstor-snapshots", snapGolden.Name),
		},
		"RetiringGoldensSnapshotKeptWhileHeld": {
			reason: "A retiring golden's snapshot stays as long as the golden does for what holds it.",
			p: planned{Golden: snapGolden, Key: goldenKey(snapGolden.Name), Live: goldenDV(cdiv1.Succeeded), Retiring: true, SnapshotInUse: true, SnapshotPref: prefersPVC,
				Snapshot: takenSnapshot("linstor-snapshots", snapGolden.Name, readyStatus())},
			want: desiredOf(snapGolden, "linstor-snapshots", snapGolden.Name),
		},
		"UnreadableGoldenKeepsItsObservedSnapshot": {
			reason: "The function never deletes what it cannot decide about: a golden it cannot read keeps its snapshot, preferred or not, with what the snapshot recorded the golden holds.",
			p: planned{Golden: Golden{Index: -1, Namespace: snapGolden.Namespace, Name: snapGolden.Name}, Key: goldenKey(snapGolden.Name), Raw: raw, Retiring: true, SnapshotPref: prefersPVC,
				Snapshot: func() *snapshotv1.VolumeSnapshot {
					vs := takenSnapshot("linstor-snapshots", snapGolden.Name, readyStatus())
					vs.Annotations = map[string]string{"workerimage.cozystack.io/schematic-id": "a", "workerimage.cozystack.io/talos-version": "v1.0.0"}
					return vs
				}()},
			want: desiredOf(snapGolden, "linstor-snapshots", snapGolden.Name),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, desiredSnapshot(tc.p)); diff != "" {
				t.Errorf("%s\ndesiredSnapshot(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestSnapshotStatus(t *testing.T) {
	failed := readyStatus()
	failed.ReadyToUse = ptrBool(false)
	failed.Error = &snapshotv1.VolumeSnapshotError{Message: ptr("out of space")}
	cases := map[string]struct {
		reason string
		p      planned
		want   *v1alpha1.GoldenSnapshotStatus
	}{
		"NotPreferredHasNone": {
			reason: "A golden on a class that prefers PVCs reads as before.",
			p:      planned{Golden: snapGolden, Live: goldenDV(cdiv1.Succeeded), SnapshotPref: prefersPVC},
		},
		"WantedBeforeTheImportIsMissing": {
			reason: "Preferred, not imported yet: the snapshot to be, named, with its class.",
			p:      planned{Golden: snapGolden, Live: goldenDV(cdiv1.ImportInProgress), SnapshotPref: prefers},
			want:   &v1alpha1.GoldenSnapshotStatus{Name: snapGolden.Name, VolumeSnapshotClass: "linstor-snapshots", State: "Missing"},
		},
		"RetiringNotSnapshottedHasNone": {
			reason: "No snapshot will be taken of a retiring golden.",
			p:      planned{Golden: snapGolden, Live: goldenDV(cdiv1.Succeeded), Retiring: true, SnapshotPref: prefers},
		},
		"TakenNotObservedYetIsMissing": {
			reason: "Composed this call, not observed yet.",
			p:      planned{Golden: snapGolden, Live: goldenDV(cdiv1.Succeeded), SnapshotPref: prefers},
			want:   &v1alpha1.GoldenSnapshotStatus{Name: snapGolden.Name, VolumeSnapshotClass: "linstor-snapshots", State: "Missing"},
		},
		"ReadyWithItsOwnClassAndSize": {
			reason: "The class is the snapshot's own, the restore size as reported.",
			p:      planned{Golden: snapGolden, Live: goldenDV(cdiv1.Succeeded), SnapshotPref: prefers, Snapshot: takenSnapshot("linstor-old", snapGolden.Name, readyStatus())},
			want:   &v1alpha1.GoldenSnapshotStatus{Name: snapGolden.Name, VolumeSnapshotClass: "linstor-old", State: "Ready", RestoreSize: "6Gi"},
		},
		"FailedWithItsMessage": {
			reason: "status.error is quoted.",
			p:      planned{Golden: snapGolden, Live: goldenDV(cdiv1.Succeeded), SnapshotPref: prefers, Snapshot: takenSnapshot("linstor-snapshots", snapGolden.Name, failed)},
			want:   &v1alpha1.GoldenSnapshotStatus{Name: snapGolden.Name, VolumeSnapshotClass: "linstor-snapshots", State: "Failed", RestoreSize: "6Gi", Message: "out of space"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, snapshotStatus(tc.p, desiredSnapshot(tc.p))); diff != "" {
				t.Errorf("%s\nsnapshotStatus(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func ptrBool(b bool) *bool { return &b }

func TestSnapshotsCondition(t *testing.T) {
	other := Golden{Index: 1, Namespace: "cozy-public", Name: "talos-worker-b-v1.0.0", SchematicID: "b", Version: "v1.0.0", StorageText: "6Gi", StorageClass: "replicated"}
	pending := readyStatus()
	pending.ReadyToUse = ptrBool(false)
	failed := readyStatus()
	failed.ReadyToUse = ptrBool(false)
	failed.Error = &snapshotv1.VolumeSnapshotError{Message: ptr("out of space")}
	with := func(g Golden, phase cdiv1.DataVolumePhase, pref goldensnapshot.Preference, st *snapshotv1.VolumeSnapshotStatus) planned {
		p := planned{Golden: g, Key: goldenKey(g.Name), Live: goldenDV(phase), SnapshotPref: pref}
		p.Live.Name = g.Name
		if st != nil {
			p.Snapshot = takenSnapshot("linstor-snapshots", g.Name, st)
			p.Snapshot.Name = g.Name
		}
		return p
	}
	cases := map[string]struct {
		reason string
		plan   []planned
		want   compose.Condition
		ok     bool
	}{
		"NoGoldenWantsOneReportsNothing": {
			reason: "A catalog on classes that prefer PVCs reads as before: no condition.",
			plan:   []planned{with(snapGolden, cdiv1.Succeeded, prefersPVC, nil)},
		},
		"NoGoldensReportsNothing": {
			reason: "An empty catalog has nothing to say.",
		},
		"OnlyARetiringGoldensSnapshotReportsNothing": {
			reason: "A retiring golden's snapshot is kept for what holds it; no new template waits for it.",
			plan: []planned{func() planned {
				p := with(snapGolden, cdiv1.Succeeded, prefersPVC, pending)
				p.Retiring, p.SnapshotInUse = true, true
				return p
			}()},
		},
		"ImportingGoldenIsWaitedFor": {
			reason: "Preferred but not imported: waiting, saying why.",
			plan:   []planned{with(snapGolden, cdiv1.ImportInProgress, prefers, nil)},
			ok:     true,
			want: compose.Condition{Type: ConditionSnapshotsReady, Status: compose.StatusFalse, Reason: "SnapshotPending",
				Message: "0 of 1 golden snapshots are ready to use; waiting for cozy-public/talos-worker-a-v1.0.0 (the golden has not imported yet). New clone templates of these goldens wait for their snapshot; running workers are not affected."},
		},
		"SnapshotComposedNotObservedYetIsBeingTaken": {
			reason: "The golden imported and its snapshot is composed this call: waiting for it, not for the import.",
			plan:   []planned{with(snapGolden, cdiv1.Succeeded, prefers, nil)},
			ok:     true,
			want: compose.Condition{Type: ConditionSnapshotsReady, Status: compose.StatusFalse, Reason: "SnapshotPending",
				Message: "0 of 1 golden snapshots are ready to use; waiting for cozy-public/talos-worker-a-v1.0.0 (being taken). New clone templates of these goldens wait for their snapshot; running workers are not affected."},
		},
		"PendingSnapshotIsWaitedFor": {
			reason: "Taken, not readyToUse: waiting, with the ready count.",
			plan:   []planned{with(snapGolden, cdiv1.Succeeded, prefers, pending), with(other, cdiv1.Succeeded, prefers, readyStatus())},
			ok:     true,
			want: compose.Condition{Type: ConditionSnapshotsReady, Status: compose.StatusFalse, Reason: "SnapshotPending",
				Message: "1 of 2 golden snapshots are ready to use; waiting for cozy-public/talos-worker-a-v1.0.0 (pending). New clone templates of these goldens wait for their snapshot; running workers are not affected."},
		},
		"FailedSnapshotWinsOverPending": {
			reason: "A failed snapshot needs a look; the fix names the class's driver and what deleting it does.",
			plan:   []planned{with(snapGolden, cdiv1.Succeeded, prefers, failed), with(other, cdiv1.Succeeded, prefers, pending)},
			ok:     true,
			want: compose.Condition{Type: ConditionSnapshotsReady, Status: compose.StatusFalse, Reason: "SnapshotFailed",
				Message: `VolumeSnapshot cozy-public/talos-worker-a-v1.0.0 reports status.error "out of space": check the VolumeSnapshotContent it is bound to and the CSI snapshotter's logs for driver of VolumeSnapshotClass linstor-snapshots; the snapshotter retries by itself, and deleting the VolumeSnapshot (when nothing uses it) makes the catalog take a new one. New clone templates of these goldens wait for their snapshot.`},
		},
		"AllReady": {
			reason: "Every golden that wants a snapshot has a ready one; a golden on a PVC class is not counted.",
			plan:   []planned{with(snapGolden, cdiv1.Succeeded, prefers, readyStatus()), with(other, cdiv1.Succeeded, prefersPVC, nil)},
			ok:     true,
			want: compose.Condition{Type: ConditionSnapshotsReady, Status: compose.StatusTrue, Reason: "AllReadyToUse",
				Message: "Every golden snapshot (1) is ready to use: new worker disks of their StorageClasses restore from them."},
		},
		"KeptSnapshotOfAClassNoLongerPreferringCounts": {
			reason: "A snapshot kept for what holds the golden, though the class now prefers PVCs, is still reported.",
			plan: []planned{func() planned {
				p := with(snapGolden, cdiv1.Succeeded, prefersPVC, pending)
				p.InUse = true
				return p
			}()},
			ok: true,
			want: compose.Condition{Type: ConditionSnapshotsReady, Status: compose.StatusFalse, Reason: "SnapshotPending",
				Message: "0 of 1 golden snapshots are ready to use; waiting for cozy-public/talos-worker-a-v1.0.0 (pending). New clone templates of these goldens wait for their snapshot; running workers are not affected."},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := snapshotsCondition(tc.plan)
			if ok != tc.ok {
				t.Errorf("%s\nsnapshotsCondition() reported = %v, want %v", tc.reason, ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nsnapshotsCondition(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// unstructuredObj is an unstructured object of the given kind.
func unstructuredObj(apiVersion, kind, name string, fields map[string]any) *unstructured.Unstructured {
	o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name}}
	for k, v := range fields {
		o[k] = v
	}
	return &unstructured.Unstructured{Object: o}
}

func storageClassObj(name string, annotations map[string]any) *unstructured.Unstructured {
	o := unstructuredObj("storage.k8s.io/v1", "StorageClass", name, map[string]any{"provisioner": "linstor.csi.linbit.com"})
	if annotations != nil {
		o.Object["metadata"].(map[string]any)["annotations"] = annotations
	}
	return o
}

func profileObj(name, format, snapshotClass string) *unstructured.Unstructured {
	st := map[string]any{"storageClass": name, "dataImportCronSourceFormat": format}
	if snapshotClass != "" {
		st["snapshotClass"] = snapshotClass
	}
	return unstructuredObj("cdi.kubevirt.io/v1beta1", "StorageProfile", name, map[string]any{"spec": map[string]any{}, "status": st})
}

func TestSnapshotPreference(t *testing.T) {
	world := required.Resolved{
		reqStorageClasses: {
			storageClassObj("replicated", map[string]any{"storageclass.kubernetes.io/is-default-class": "true"}),
			storageClassObj("local", nil),
		},
		reqStorageProfiles: {
			profileObj("replicated", "snapshot", "linstor-snapshots"),
			profileObj("local", "pvc", ""),
			// Not a StorageProfile: counts as absent.
			unstructuredObj("v1", "ConfigMap", "broken", nil),
		},
	}
	noDefault := required.Resolved{reqStorageClasses: {storageClassObj("replicated", nil)}, reqStorageProfiles: world[reqStorageProfiles]}
	onClass := func(class string) Golden { g := snapGolden; g.StorageClass = class; return g }
	cases := map[string]struct {
		reason  string
		enabled bool
		got     required.Resolved
		golden  Golden
		want    goldensnapshot.Preference
	}{
		"NamedClass": {
			reason: "A golden naming its class follows that class's profile.", enabled: true, got: world, golden: onClass("replicated"),
			want: prefers,
		},
		"NamedClassPreferringPVCs": {
			reason: "A named class whose profile keeps PVCs.", enabled: true, got: world, golden: onClass("local"),
			want: goldensnapshot.Preference{Why: "StorageProfile local status.dataImportCronSourceFormat is pvc"},
		},
		"NoClassNamedTakesTheDefault": {
			reason: "A golden naming no class is bound by CDI on the default class: its profile is followed.", enabled: true, got: world, golden: onClass(""),
			want: prefers,
		},
		"NoClassNamedAndNoDefault": {
			reason: "Without a default class the golden's class is not known.", enabled: true, got: noDefault, golden: onClass(""),
			want: goldensnapshot.Preference{Why: "the golden's StorageClass is not known (no class named and no default class)"},
		},
		"UnreadableProfileIsAbsent": {
			reason: "A profile that cannot be read counts as none: the golden stays a PVC only.", enabled: true, got: world, golden: onClass("broken"),
			want: goldensnapshot.Preference{Why: "StorageClass broken has no CDI StorageProfile (yet)"},
		},
		"Disabled": {
			reason: "snapshotGoldens.enabled: false reads nothing and prefers nothing.", enabled: false, got: world, golden: onClass("replicated"),
			want: goldensnapshot.Preference{Why: "snapshotGoldens.enabled is false"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, readSnapshotWorld(tc.enabled, tc.got).preference(tc.golden)); diff != "" {
				t.Errorf("%s\npreference(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestPlanGoldensReadsSnapshots: the observed snapshots are read under
// their keys, and one in use holds a golden that left the catalog.
func TestPlanGoldensReadsSnapshots(t *testing.T) {
	snapshotObj := func(name string, inUse bool) map[string]any {
		meta := map[string]any{"name": name, "namespace": "cozy-public"}
		if inUse {
			meta["labels"] = map[string]any{"crossplane.io/in-use": "true"}
		}
		return map[string]any{"apiVersion": "snapshot.storage.k8s.io/v1", "kind": "VolumeSnapshot", "metadata": meta,
			"spec": map[string]any{"source": map[string]any{"persistentVolumeClaimName": name}, "volumeSnapshotClassName": "linstor-snapshots"}}
	}
	obs := observedGoldens(dvObject(snapGolden.Name, "cozy-public"), dvObject("talos-worker-b-v1.0.0", "cozy-public"), dvObject("talos-worker-c-v1.0.0", "cozy-public"))
	for _, o := range []map[string]any{snapshotObj(snapGolden.Name, false), snapshotObj("talos-worker-b-v1.0.0", true), snapshotObj("talos-worker-c-v1.0.0", false)} {
		name := o["metadata"].(map[string]any)["name"].(string)
		obs[snapshotKey(name)] = fresource.ObservedComposed{Resource: &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: o}}}
	}
	world := readSnapshotWorld(true, required.Resolved{reqStorageProfiles: {profileObj("replicated", "snapshot", "linstor-snapshots")}})
	type summary struct {
		Name                    string
		Retiring, InUse         bool
		Snapshot, SnapshotInUse bool
		Preferred               bool
		DesiredSnapshot         bool
	}
	var got []summary
	plan := planGoldens([]Golden{snapGolden}, readObserved(obs), nil)
	preferSnapshots(plan, world)
	for _, p := range plan {
		got = append(got, summary{Name: p.Name, Retiring: p.Retiring, InUse: p.InUse, Snapshot: p.Snapshot != nil, SnapshotInUse: p.SnapshotInUse, Preferred: p.SnapshotPref.Snapshot, DesiredSnapshot: desiredSnapshot(p) != nil})
	}
	want := []summary{
		{Name: snapGolden.Name, Snapshot: true, Preferred: true, DesiredSnapshot: true},
		// Left the catalog, held by its snapshot's Usage alone; its class is
		// not known from the observed DataVolume, so no preference.
		{Name: "talos-worker-b-v1.0.0", Retiring: true, InUse: true, Snapshot: true, SnapshotInUse: true, DesiredSnapshot: true},
		// talos-worker-c-v1.0.0 left the catalog, held by nothing: retired
		// with its snapshot.
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("planGoldens(): -want, +got:\n%s", diff)
	}
}
