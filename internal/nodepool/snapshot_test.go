package nodepool

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/goldensnapshot"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/emit"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/nodepool/render"
)

func snapshotPool() (pool.Pool, pool.Image) {
	return pool.Pool{Namespace: "tenant-demo", Cluster: "demo", Name: "md0"},
		pool.Image{Source: pool.SourceClone, GoldenNamespace: "cozy-public", GoldenName: "talos-worker-a-v1.0.0"}
}

func snapshotProfile(format cdiv1.DataImportCronSourceFormat) cdiv1.StorageProfile {
	class := "rbd-snapshots"
	return cdiv1.StorageProfile{ObjectMeta: metav1.ObjectMeta{Name: "replicated"}, Status: cdiv1.StorageProfileStatus{DataImportCronSourceFormat: &format, SnapshotClass: &class}}
}

func TestDecideSnapshot(t *testing.T) {
	_, clone := snapshotPool()
	http := pool.Image{Source: pool.SourceHTTP}
	on := config.Config{SnapshotGoldens: true}
	ready, size := true, resource.MustParse("6Gi")
	content := "snapcontent-1"
	vs := &snapshotv1.VolumeSnapshot{Status: &snapshotv1.VolumeSnapshotStatus{ReadyToUse: &ready, RestoreSize: &size, BoundVolumeSnapshotContentName: &content}}
	prefers := read.Required{Clone: read.CloneTarget{Profiles: []cdiv1.StorageProfile{snapshotProfile(cdiv1.DataImportCronSourceFormatSnapshot)}}, GoldenSnapshot: vs}
	type summary struct {
		Use   bool
		Why   string
		State goldensnapshot.StateKind
	}
	cases := map[string]struct {
		reason string
		cfg    config.Config
		img    pool.Image
		class  string
		w      read.Required
		want   summary
	}{
		"HTTPPoolNeverRestores": {
			reason: "An HTTP pool imports its disks; no snapshot applies.",
			cfg:    on, img: http, class: "replicated", w: prefers,
		},
		"DisabledNeverRestores": {
			reason: "snapshotGoldens.enabled: false keeps cloning the golden's PVC.",
			cfg:    config.Config{}, img: clone, class: "replicated", w: prefers,
		},
		"ProfilePreferringSnapshotsRestores": {
			reason: "The class the template lands on prefers snapshots: restore, with the snapshot's state.",
			cfg:    on, img: clone, class: "replicated", w: prefers,
			want: summary{Use: true, Why: "StorageProfile replicated status.dataImportCronSourceFormat is snapshot, VolumeSnapshotClass rbd-snapshots", State: goldensnapshot.Ready},
		},
		"ProfilePreferringPVCsClones": {
			reason: "A class that keeps PVCs clones the golden's PVC.",
			cfg:    on, img: clone, class: "replicated",
			w:    read.Required{Clone: read.CloneTarget{Profiles: []cdiv1.StorageProfile{snapshotProfile(cdiv1.DataImportCronSourceFormatPvc)}}},
			want: summary{Why: "StorageProfile replicated status.dataImportCronSourceFormat is pvc", State: goldensnapshot.Missing},
		},
		"OtherClassesProfileIsNotFollowed": {
			reason: "Only the profile of the template's class counts.",
			cfg:    on, img: clone, class: "local", w: prefers,
			want: summary{Why: "StorageClass local has no CDI StorageProfile (yet)", State: goldensnapshot.Ready},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := decide.DecideSnapshot(tc.cfg, tc.img, tc.class, tc.w)
			got := summary{Use: d.Use, Why: d.Pref.Why, State: d.State.Kind}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\ndecideSnapshot(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestGateOnGoldenSnapshot(t *testing.T) {
	p, img := snapshotPool()
	pref := goldensnapshot.Preference{Snapshot: true, SnapshotClass: "rbd-snapshots", Why: "StorageProfile replicated status.dataImportCronSourceFormat is snapshot, VolumeSnapshotClass rbd-snapshots"}
	const head = `Node pool "tenant-demo/demo-md0": the new worker template restores its disks from golden image "cozy-public/talos-worker-a-v1.0.0"'s VolumeSnapshot (StorageProfile replicated status.dataImportCronSourceFormat is snapshot, VolumeSnapshotClass rbd-snapshots), and `
	const tail = ". Running workers are not affected."
	held := func(msg string) *decide.Hold {
		return &decide.Hold{Reason: decide.ReasonGoldenSnapshotNotReady, Message: head + msg + tail}
	}
	cases := map[string]struct {
		reason string
		d      decide.SnapshotDecision
		want   *decide.Hold
	}{
		"NotRestoringIsNotHeld": {
			reason: "A template cloning the PVC does not wait for any snapshot.",
			d:      decide.SnapshotDecision{Pref: goldensnapshot.Preference{Why: "pvc"}, State: goldensnapshot.State{Kind: goldensnapshot.Missing}},
		},
		"ReadyIsNotHeld": {
			reason: "A ready snapshot is restored from at once.",
			d:      decide.SnapshotDecision{Use: true, Pref: pref, State: goldensnapshot.State{Kind: goldensnapshot.Ready, Content: "c"}},
		},
		"MissingWaitsForTheCatalog": {
			reason: "Not taken yet: the catalog takes it, unless no catalog of this function keeps the golden or it has snapshots off.",
			d:      decide.SnapshotDecision{Use: true, Pref: pref, State: goldensnapshot.State{Kind: goldensnapshot.Missing}},
			want:   held("VolumeSnapshot cozy-public/talos-worker-a-v1.0.0 does not exist yet: the catalog takes it once the golden has imported; if no XWorkerImageCatalog of this function keeps golden cozy-public/talos-worker-a-v1.0.0, or its Composition sets snapshotGoldens.enabled: false, none ever will: set snapshotGoldens.enabled: false in this pool's Composition too, or spec.dataImportCronSourceFormat: pvc on the StorageProfile"),
		},
		"PendingFinishesByItself": {
			reason: "Being cut: nothing to do.",
			d:      decide.SnapshotDecision{Use: true, Pref: pref, State: goldensnapshot.State{Kind: goldensnapshot.Pending, Content: "snapcontent-1"}},
			want:   held("VolumeSnapshot cozy-public/talos-worker-a-v1.0.0 (content snapcontent-1) is not readyToUse yet: the snapshot controller and the CSI driver finish it by themselves; the pool proceeds once it is readyToUse"),
		},
		"FailedNamesTheWayOut": {
			reason: "CDI refuses a snapshot with status.error; the snapshotter retries, or the profile can go back to PVCs.",
			d:      decide.SnapshotDecision{Use: true, Pref: pref, State: goldensnapshot.State{Kind: goldensnapshot.Failed, Message: "out of space"}},
			want:   held(`VolumeSnapshot cozy-public/talos-worker-a-v1.0.0 reports status.error "out of space": the CSI snapshotter retries by itself; check the VolumeSnapshotContent and the snapshotter's logs, or set spec.dataImportCronSourceFormat: pvc on the StorageProfile to clone the golden's PVC instead`),
		},
		"DeletingIsReplacedByTheCatalog": {
			reason: "A snapshot being deleted never becomes readyToUse: the catalog takes a new one once it is gone.",
			d:      decide.SnapshotDecision{Use: true, Pref: pref, State: goldensnapshot.State{Kind: goldensnapshot.Deleting}},
			want:   held("VolumeSnapshot cozy-public/talos-worker-a-v1.0.0 is being deleted: once it is gone the catalog takes a new one, and the pool proceeds when that one is readyToUse"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, decide.GateOnGoldenSnapshot(p, img, tc.d)); diff != "" {
				t.Errorf("%s\ngateOnGoldenSnapshot(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestSnapshotUsages: a template restoring from the golden's snapshot
// protects it with a third Usage; one cloning the PVC does not.
func TestSnapshotUsages(t *testing.T) {
	cfg, err := config.FromInput(&v1beta1.Input{}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	spec := v1alpha1.NodePoolSpec{ClusterName: "demo", PoolShape: v1alpha1.PoolShape{OSImage: &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{}}}}
	p, img, s := pool.Pool{Namespace: "tenant-demo", Cluster: "demo", Name: "md0"}, resolveOSImage(spec, cfg), resolveShapeOf(t, spec, cfg)
	for _, fromSnapshot := range []bool{false, true} {
		mt, err := render.Machine(p, img, s, "replicated", render.Rendering, render.DiskSource{FromSnapshot: fromSnapshot})
		if err != nil {
			t.Fatal(err)
		}
		u := &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: mt.Desired.Object}}
		ns, name, ok := read.RestoresSnapshot(u)
		want := []any{"", "", false}
		suffixes := []string{"datavolume", "pvc"}
		if fromSnapshot {
			want = []any{img.GoldenNamespace, img.GoldenName, true}
			suffixes = append(suffixes, "volumesnapshot")
		}
		if diff := cmp.Diff(want, []any{ns, name, ok}); diff != "" {
			t.Errorf("restoresSnapshot() of a template rendered with fromSnapshot %v: -want, +got:\n%s", fromSnapshot, diff)
		}
		var got []string
		for _, t := range emit.TargetsOf(ok) {
			got = append(got, t.Suffix)
		}
		if diff := cmp.Diff(suffixes, got); diff != "" {
			t.Errorf("targetsOf(%v): -want, +got:\n%s", ok, diff)
		}
	}
}
