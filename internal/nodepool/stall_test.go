package nodepool

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/compose/composetest"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/emit"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
)

// TestCloneStalls: the worker disks in a clone phase that a pool records in
// status.image.clones, read back on the next call, and the CloneHealthy
// condition they make, at a fixed time.
// fxStallBounds are the Input's default stall bounds.
var fxStallBounds = config.StallBounds{Imports: 30 * time.Minute, Clones: 20 * time.Minute}

func TestCloneStalls(t *testing.T) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	disk := func(name string, phase cdiv1.DataVolumePhase, progress string, restarts int32) cdiv1.DataVolume {
		return cdiv1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: cdiv1.DataVolumeStatus{Phase: phase, Progress: cdiv1.DataVolumeProgress(progress), RestartCount: restarts}}
	}
	record := func(name string, phase cdiv1.DataVolumePhase, progress string, restarts int32, since string) v1alpha1.CloneProgress {
		return v1alpha1.CloneProgress{DataVolume: name, Phase: string(phase), Progress: progress, Restarts: restarts, ProgressSince: since}
	}
	healthy := compose.Condition{Type: decide.ConditionCloneHealthy, Status: compose.StatusTrue, Reason: "NoCloneProblems", Message: `No worker disk of node pool "tenant-a/demo-md0" is waiting for a missing clone source or was cloned by a host-assisted copy.`}
	const fix = "check each one's PVC events (kubectl -n tenant-a describe pvc <name>) and CDI's temporary claim tmp-pvc-<UID of that PVC> in namespace cozy-public, which a storage backend under load can leave Pending or Lost (CDI #2323, #3470); a disk in PendingPopulation waits for its VM to be scheduled. CDI continues once the claim binds; a disk that cannot is replaced by deleting its Machine."
	twoHoursAgo := "2023-12-31T22:00:00Z"
	type want struct {
		Clones []v1alpha1.CloneProgress
		Health compose.Condition
	}
	cases := map[string]struct {
		reason string
		dvs    []cdiv1.DataVolume
		prev   []v1alpha1.CloneProgress
		now    time.Time
		want   want
	}{
		"FirstSightRecordsNow": {
			reason: "A disk the pool has no record of moved, as far as it knows, now.",
			dvs:    []cdiv1.DataVolume{disk("w-1", cdiv1.CloneScheduled, "N/A", 0)}, now: now,
			want: want{Clones: []v1alpha1.CloneProgress{record("w-1", cdiv1.CloneScheduled, "N/A", 0, "2024-01-01T00:00:00Z")}, Health: healthy},
		},
		"BeforeTheBoundIsHealthy": {
			reason: "16 minutes in CloneScheduled (CDI #2721) is within the 20-minute bound; the record is kept as it was.",
			dvs:    []cdiv1.DataVolume{disk("w-1", cdiv1.CloneScheduled, "N/A", 0)}, now: now,
			prev: []v1alpha1.CloneProgress{record("w-1", cdiv1.CloneScheduled, "N/A", 0, "2023-12-31T23:44:00Z")},
			want: want{Clones: []v1alpha1.CloneProgress{record("w-1", cdiv1.CloneScheduled, "N/A", 0, "2023-12-31T23:44:00Z")}, Health: healthy},
		},
		"AfterTheBoundIsStalled": {
			reason: "Two hours unmoved, read back from the status the last call left (a restarted function loses nothing): CloneHealthy False with the disks' names and where each stopped.",
			dvs:    []cdiv1.DataVolume{disk("w-1", cdiv1.CloneScheduled, "N/A", 0), disk("w-2", cdiv1.CloneInProgress, "40.00%", 0), disk("w-3", cdiv1.Succeeded, "100.0%", 0)}, now: now,
			prev: []v1alpha1.CloneProgress{record("w-1", cdiv1.CloneScheduled, "N/A", 0, twoHoursAgo), record("w-2", cdiv1.CloneInProgress, "40.00%", 0, twoHoursAgo)},
			want: want{
				Clones: []v1alpha1.CloneProgress{record("w-1", cdiv1.CloneScheduled, "N/A", 0, twoHoursAgo), record("w-2", cdiv1.CloneInProgress, "40.00%", 0, twoHoursAgo)},
				Health: compose.Condition{Type: decide.ConditionCloneHealthy, Status: compose.StatusFalse, Reason: decide.ReasonCloneStalled,
					Message: `Node pool "tenant-a/demo-md0": worker DataVolumes w-1 (CloneScheduled), w-2 (CloneInProgress, 40.00%) in namespace tenant-a have not moved for at least 20m (Input polling.stallAfter.clones), and CDI gives up on no clone: ` + fix},
			},
		},
		"ProgressMovedResets": {
			reason: "A host-assisted copy that moved is not stalled, however long it has run.",
			dvs:    []cdiv1.DataVolume{disk("w-1", cdiv1.CloneInProgress, "41.00%", 0)}, now: now,
			prev: []v1alpha1.CloneProgress{record("w-1", cdiv1.CloneInProgress, "40.00%", 0, twoHoursAgo)},
			want: want{Clones: []v1alpha1.CloneProgress{record("w-1", cdiv1.CloneInProgress, "41.00%", 0, "2024-01-01T00:00:00Z")}, Health: healthy},
		},
		"RestartResets": {
			reason: "A restarted clone worker pod is CDI trying again.",
			dvs:    []cdiv1.DataVolume{disk("w-1", cdiv1.CloneInProgress, "40.00%", 1)}, now: now,
			prev: []v1alpha1.CloneProgress{record("w-1", cdiv1.CloneInProgress, "40.00%", 0, twoHoursAgo)},
			want: want{Clones: []v1alpha1.CloneProgress{record("w-1", cdiv1.CloneInProgress, "40.00%", 1, "2024-01-01T00:00:00Z")}, Health: healthy},
		},
		"PhaseChangeResets": {
			reason: "From CloneScheduled to CSICloneInProgress is movement.",
			dvs:    []cdiv1.DataVolume{disk("w-1", cdiv1.CSICloneInProgress, "N/A", 0)}, now: now,
			prev: []v1alpha1.CloneProgress{record("w-1", cdiv1.CloneScheduled, "N/A", 0, twoHoursAgo)},
			want: want{Clones: []v1alpha1.CloneProgress{record("w-1", cdiv1.CSICloneInProgress, "N/A", 0, "2024-01-01T00:00:00Z")}, Health: healthy},
		},
		"SucceededDropsTheRecord": {
			reason: "A settled pool writes nothing that changes: a finished disk has no record.",
			dvs:    []cdiv1.DataVolume{disk("w-1", cdiv1.Succeeded, "100.0%", 0)}, now: now,
			prev: []v1alpha1.CloneProgress{record("w-1", cdiv1.CloneScheduled, "N/A", 0, twoHoursAgo)},
			want: want{Health: healthy},
		},
		"MissingSourceIsNotAStall": {
			reason: "A disk waiting for a source that does not exist is CloneWithoutSource's to report, with its own fix.",
			dvs: []cdiv1.DataVolume{{ObjectMeta: metav1.ObjectMeta{Name: "w-1"}, Status: cdiv1.DataVolumeStatus{Phase: cdiv1.CloneScheduled, Conditions: []cdiv1.DataVolumeCondition{
				{Type: cdiv1.DataVolumeBound, Status: corev1.ConditionFalse, Reason: "CloneWithoutSource"}}}}},
			now: now, prev: []v1alpha1.CloneProgress{record("w-1", cdiv1.CloneScheduled, "", 0, twoHoursAgo)},
			want: want{Health: compose.Condition{Type: decide.ConditionCloneHealthy, Status: compose.StatusFalse, Reason: decide.CloneWithoutSource,
				Message: `Node pool "tenant-a/demo-md0": worker DataVolumes w-1 in namespace tenant-a wait for a clone source that does not exist (CloneWithoutSource); restore the golden image through the XWorkerImageCatalog, or move the pool to an image that exists.`}},
		},
		"ImportBeforeItsBoundIsHealthy": {
			reason: "An HTTP disk's import is bounded by polling.stallAfter.imports (30m), not the clones' 20m: 25 minutes unmoved is still healthy.",
			dvs:    []cdiv1.DataVolume{disk("w-1", cdiv1.ImportInProgress, "12.50%", 0)}, now: now,
			prev: []v1alpha1.CloneProgress{record("w-1", cdiv1.ImportInProgress, "12.50%", 0, "2023-12-31T23:35:00Z")},
			want: want{Clones: []v1alpha1.CloneProgress{record("w-1", cdiv1.ImportInProgress, "12.50%", 0, "2023-12-31T23:35:00Z")}, Health: healthy},
		},
		"ImportAfterItsBoundIsStalled": {
			reason: "HTTP disks that import from the factory and have not moved for two hours (a factory that accepts and never answers, cozystack #3244): ImportStalled, naming the disks and the fixes.",
			dvs:    []cdiv1.DataVolume{disk("w-1", cdiv1.ImportInProgress, "12.50%", 0), disk("w-2", cdiv1.ImportScheduled, "N/A", 0)}, now: now,
			prev: []v1alpha1.CloneProgress{record("w-1", cdiv1.ImportInProgress, "12.50%", 0, twoHoursAgo), record("w-2", cdiv1.ImportScheduled, "N/A", 0, twoHoursAgo)},
			want: want{
				Clones: []v1alpha1.CloneProgress{record("w-1", cdiv1.ImportInProgress, "12.50%", 0, twoHoursAgo), record("w-2", cdiv1.ImportScheduled, "N/A", 0, twoHoursAgo)},
				Health: compose.Condition{Type: decide.ConditionCloneHealthy, Status: compose.StatusFalse, Reason: decide.ReasonImportStalled,
					Message: `Node pool "tenant-a/demo-md0": worker DataVolumes w-1 (ImportInProgress, 12.50%), w-2 (ImportScheduled) in namespace tenant-a have not moved for at least 30m (Input polling.stallAfter.imports): each imports the image from the Image Factory itself, and CDI's importer has no timeout for response headers and gives up on a body only after 10 minutes without a byte. Check the importer pods (kubectl -n tenant-a get pods -l app=containerized-data-importer) and that the factory serves the image, then delete a stuck importer pod so CDI starts a new attempt; or point spec.talos.imageFactoryURL at a mirror that answers; or, to import the image once for every worker, move the pool to osImage.builtin (a golden of the XWorkerImageCatalog, cloned per worker).`},
			},
		},
		"NoClockRecordsNothing": {
			reason: "A request without a time keeps no record and finds nothing stalled.",
			dvs:    []cdiv1.DataVolume{disk("w-1", cdiv1.CloneScheduled, "N/A", 0)},
			prev:   []v1alpha1.CloneProgress{record("w-1", cdiv1.CloneScheduled, "N/A", 0, twoHoursAgo)},
			want:   want{Health: healthy},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			clones := decide.TrackClones(tc.dvs, tc.prev, tc.now, fxStallBounds)
			got := want{Clones: emit.CloneProgress(clones), Health: decide.CloneHealth(fxPoolID, fxImage, tc.dvs, clones, read.Reads{Workers: true}, 256, fxStallBounds, nil)}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestCloneStallIsKeptAcrossCalls: what one call records of a disk in
// flight, the next call, a new Mode with nothing but the composite's status
// (as after a restart of the function or of Crossplane), reads back.
func TestCloneStallIsKeptAcrossCalls(t *testing.T) {
	spec := map[string]any{"osImage": builtin()}
	w := succeeded
	w.dvs = []*unstructuredT{workerDV("demo-md0-abcde-disk-system", "CloneScheduled", true)}
	existing := composeOnce(t, spec, succeeded, mdReady(0))
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	call := func(status map[string]any, now time.Time) compose.Output {
		xr := nodePoolXR(spec)
		if status != nil {
			xr = withStatus(xr, status)
		}
		r := request(t, xr, w, existing)
		r.Now = now
		out := composetest.Run(Mode{}, r).Output
		if out.Fatal != nil {
			t.Fatal(out.Fatal)
		}
		return out
	}
	health := func(out compose.Output) string {
		for _, c := range out.Conditions {
			if c.Type == decide.ConditionCloneHealthy {
				return string(c.Status) + "/" + c.Reason
			}
		}
		return ""
	}
	first := call(nil, t0)
	want := []v1alpha1.CloneProgress{{DataVolume: "demo-md0-abcde-disk-system", Phase: "CloneScheduled", ProgressSince: "2024-01-01T00:00:00Z"}}
	if diff := cmp.Diff(want, first.Status["image"].(*v1alpha1.NodePoolImageStatus).Clones); diff != "" {
		t.Errorf("the first call records the disk in flight at its time\n-want, +got:\n%s", diff)
	}
	second := call(first.Status, t0.Add(25*time.Minute))
	if diff := cmp.Diff(want, second.Status["image"].(*v1alpha1.NodePoolImageStatus).Clones); diff != "" {
		t.Errorf("a disk that has not moved keeps the time first recorded, read back from the status alone\n-want, +got:\n%s", diff)
	}
	if got := health(second); got != "False/"+decide.ReasonCloneStalled {
		t.Errorf("25 minutes in CloneScheduled is past the 20-minute bound: CloneHealthy = %s", got)
	}
}
