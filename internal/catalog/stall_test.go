package catalog

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	fresource "github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composite"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/compose/composetest"
	"github.com/cozystack/function-worker-image/internal/labels"
)

// TestImportStalls runs the catalog over one golden in a given state, with
// the status the previous call left, at a fixed time: what the golden's
// status entry records, what the catalog reports, what it marks the golden
// with for its pools, and the event.
func TestImportStalls(t *testing.T) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	spec := v1alpha1.WorkerImageCatalogSpec{StorageClass: "replicated", Images: []v1alpha1.CatalogImage{{SchematicID: sid, Version: "v1.13.6"}}}
	cfg := testConfig(t)
	goldens, err := resolveGoldens("default", spec, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := goldens[0]
	ref := labels.GoldenRef(g.Namespace, g.Name)
	entry := func(st cdiv1.DataVolumeStatus, restarts int32, since string) v1alpha1.GoldenStatus {
		return v1alpha1.GoldenStatus{Name: g.Name, Namespace: g.Namespace, SchematicID: sid, Version: "v1.13.6", Storage: "6Gi", StorageClass: "replicated", Source: g.URL,
			Phase: string(st.Phase), Progress: string(st.Progress), Restarts: restarts, ProgressSince: since, Ready: st.Phase == cdiv1.Succeeded}
	}
	at := func(phase cdiv1.DataVolumePhase, progress string, restarts int32) cdiv1.DataVolumeStatus {
		return cdiv1.DataVolumeStatus{Phase: phase, Progress: cdiv1.DataVolumeProgress(progress), RestartCount: restarts}
	}
	// The importer runs (CDI's Running reason "Pod is running", which says
	// nothing of a cause and is not quoted) and receives nothing.
	stalled12 := at(cdiv1.ImportInProgress, "12.5%", 0)
	stalled12.Conditions = []cdiv1.DataVolumeCondition{{Type: cdiv1.DataVolumeRunning, Status: corev1.ConditionTrue, Reason: "Pod is running"}}
	// An importer pod the scheduler cannot place, as one whose scratch claim
	// never binds: CDI says Unschedulable (datavolume/conditions.go
	// updateRunningCondition), and the stall quotes it.
	unschedulable := at(cdiv1.ImportScheduled, "N/A", 0)
	unschedulable.Conditions = []cdiv1.DataVolumeCondition{{Type: cdiv1.DataVolumeRunning, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "Importer pod cannot be scheduled"}}
	eightHoursAgo := "2023-12-31T16:00:00Z"
	headersText := "golden DataVolume " + ref + " has not moved for at least 30m (Input polling.stallAfter.imports; phase ImportInProgress, 12.5%, 0 importer restarts): CDI's importer is waiting on " + g.URL + ", which accepted the connection but sends nothing: the importer has no timeout for response headers and gives up on a body only after 10 minutes without a byte. Check that it serves the image (kubectl -n cozy-public logs -l app=containerized-data-importer), then delete the importer pod so CDI starts a new attempt; or point images[0].imageFactoryURL (or the catalog's spec.imageFactoryURL) at a mirror that answers: the catalog re-creates a golden that never succeeded and that nothing clones once its import would be made otherwise, so the change applies without deleting anything by hand"
	claimFix := "its claim is not bound, or not handed to the importer: check the golden's PVC and its StorageClass's provisioner (kubectl -n cozy-public describe pvc " + g.Name + "; kubectl -n cozy-public get pods,pvc -l app=containerized-data-importer); CDI continues by itself once the claim binds"
	importing := func(progress string) compose.Condition {
		return compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: "Importing",
			Message: "0 of 1 golden images are Succeeded; waiting for " + ref + " (phase ImportInProgress, " + progress + "). Pools that clone them wait until they are."}
	}
	type want struct {
		Entry     v1alpha1.GoldenStatus
		Condition compose.Condition
		Mark      string
		Results   []compose.Result
	}
	withReason := func(e v1alpha1.GoldenStatus, reason, msg string) v1alpha1.GoldenStatus {
		e.Reason, e.Message = reason, msg
		return e
	}
	cases := map[string]struct {
		reason string
		live   cdiv1.DataVolumeStatus
		prev   *v1alpha1.GoldenStatus
		now    time.Time
		want   want
	}{
		"FirstSightRecordsNow": {
			reason: "A golden the catalog has no record of moved, as far as it knows, now.",
			live:   stalled12, now: now,
			want: want{Entry: entry(stalled12, 0, "2024-01-01T00:00:00Z"), Condition: importing("12.5%")},
		},
		"BeforeTheBoundIsImporting": {
			reason: "29 minutes at 12.5% is within the 30-minute bound: still Importing, and the record is kept as it was.",
			live:   stalled12, now: now, prev: ptrTo(entry(stalled12, 0, "2023-12-31T23:31:00Z")),
			want: want{Entry: entry(stalled12, 0, "2023-12-31T23:31:00Z"), Condition: importing("12.5%")},
		},
		"AfterTheBoundIsStalled": {
			reason: "Eight hours at 12.5%, read back from the status the last call left (a restarted function loses nothing): Stalled on the golden and the condition, the golden marked for its pools, one event.",
			live:   stalled12, now: now, prev: ptrTo(entry(stalled12, 0, eightHoursAgo)),
			want: want{
				Entry:     withReason(entry(stalled12, 0, eightHoursAgo), ReasonStalled, upperFirst(headersText)+"."),
				Condition: compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: ReasonStalled, Message: headersText + "."},
				Mark:      `{"phase":"ImportInProgress","progress":"12.5%","after":"30m0s"}`,
				Results:   []compose.Result{{Severity: compose.SeverityWarning, Reason: "GoldenStalled", Message: upperFirst(headersText) + "."}},
			},
		},
		"StillStalledSaysNothingNew": {
			reason: "Events only on transitions: a golden already reported Stalled is not reported again.",
			live:   stalled12, now: now, prev: ptrTo(withReason(entry(stalled12, 0, eightHoursAgo), ReasonStalled, upperFirst(headersText)+".")),
			want: want{
				Entry:     withReason(entry(stalled12, 0, eightHoursAgo), ReasonStalled, upperFirst(headersText)+"."),
				Condition: compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: ReasonStalled, Message: headersText + "."},
				Mark:      `{"phase":"ImportInProgress","progress":"12.5%","after":"30m0s"}`,
			},
		},
		"ProgressMovedResets": {
			reason: "Progress past the record is movement: the record starts again now and nothing is stalled.",
			live:   at(cdiv1.ImportInProgress, "13.0%", 0), now: now, prev: ptrTo(entry(stalled12, 0, eightHoursAgo)),
			want: want{Entry: entry(at(cdiv1.ImportInProgress, "13.0%", 0), 0, "2024-01-01T00:00:00Z"), Condition: importing("13.0%")},
		},
		"RestartResets": {
			reason: "A restarted importer is CDI trying again; three restarts are reported as failing, not as a stall.",
			live:   at(cdiv1.ImportInProgress, "12.5%", 1), now: now, prev: ptrTo(entry(stalled12, 0, eightHoursAgo)),
			want: want{Entry: entry(at(cdiv1.ImportInProgress, "12.5%", 1), 1, "2024-01-01T00:00:00Z"), Condition: importing("12.5%")},
		},
		"SucceededDropsTheRecord": {
			reason: "A settled golden writes nothing that changes: no record, no mark.",
			live:   at(cdiv1.Succeeded, "100.0%", 0), now: now, prev: ptrTo(entry(stalled12, 0, eightHoursAgo)),
			want: want{
				Entry:     entry(at(cdiv1.Succeeded, "100.0%", 0), 0, ""),
				Condition: compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusTrue, Reason: "AllSucceeded", Message: "All golden images (1) are Succeeded."},
				Results:   []compose.Result{{Severity: compose.SeverityNormal, Reason: "GoldenImported", Message: "Golden DataVolume " + ref + " is Succeeded: pools can clone Talos v1.13.6 from it."}},
			},
		},
		"ScratchClaimNeverBinds": {
			reason: "An importer that never starts (cozystack #3513: its scratch claim stays unbound) keeps the golden at ImportScheduled, N/A: the fix points at the pod and its scratch claim.",
			live:   unschedulable, now: now, prev: ptrTo(entry(at(cdiv1.ImportScheduled, "N/A", 0), 0, eightHoursAgo)),
			want: want{
				Entry: withReason(entry(at(cdiv1.ImportScheduled, "N/A", 0), 0, eightHoursAgo), ReasonStalled,
					"Golden DataVolume "+ref+" has not moved for at least 30m (Input polling.stallAfter.imports; phase ImportScheduled, 0 importer restarts, Unschedulable: \"Importer pod cannot be scheduled\"): CDI's importer pod has not started: check whether it waits for scheduling or for its scratch claim (*-scratch), which CDI needs for an image it cannot stream (kubectl -n cozy-public get pods,pvc -l app=containerized-data-importer, and CDIConfig's scratchSpaceStorageClass); the import starts by itself once they bind."),
				Condition: compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: ReasonStalled,
					Message: "golden DataVolume " + ref + " has not moved for at least 30m (Input polling.stallAfter.imports; phase ImportScheduled, 0 importer restarts, Unschedulable: \"Importer pod cannot be scheduled\"): CDI's importer pod has not started: check whether it waits for scheduling or for its scratch claim (*-scratch), which CDI needs for an image it cannot stream (kubectl -n cozy-public get pods,pvc -l app=containerized-data-importer, and CDIConfig's scratchSpaceStorageClass); the import starts by itself once they bind."},
				Mark: `{"phase":"ImportScheduled","progress":"N/A","after":"30m0s"}`,
				Results: []compose.Result{{Severity: compose.SeverityWarning, Reason: "GoldenStalled",
					Message: "Golden DataVolume " + ref + " has not moved for at least 30m (Input polling.stallAfter.imports; phase ImportScheduled, 0 importer restarts, Unschedulable: \"Importer pod cannot be scheduled\"): CDI's importer pod has not started: check whether it waits for scheduling or for its scratch claim (*-scratch), which CDI needs for an image it cannot stream (kubectl -n cozy-public get pods,pvc -l app=containerized-data-importer, and CDIConfig's scratchSpaceStorageClass); the import starts by itself once they bind."}},
			},
		},
		"ClaimNeverBinds": {
			reason: "A golden whose claim never binds stays Pending with no progress: the fix is the claim and its class's provisioner.",
			live:   at(cdiv1.Pending, "N/A", 0), now: now, prev: ptrTo(entry(at(cdiv1.Pending, "N/A", 0), 0, eightHoursAgo)),
			want: want{
				Entry: withReason(entry(at(cdiv1.Pending, "N/A", 0), 0, eightHoursAgo), ReasonStalled, "Golden DataVolume "+ref+" has not moved for at least 30m (Input polling.stallAfter.imports; phase Pending, 0 importer restarts): "+claimFix+"."),
				Condition: compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: ReasonStalled,
					Message: "golden DataVolume " + ref + " has not moved for at least 30m (Input polling.stallAfter.imports; phase Pending, 0 importer restarts): " + claimFix + "."},
				Mark: `{"phase":"Pending","progress":"N/A","after":"30m0s"}`,
				Results: []compose.Result{{Severity: compose.SeverityWarning, Reason: "GoldenStalled",
					Message: "Golden DataVolume " + ref + " has not moved for at least 30m (Input polling.stallAfter.imports; phase Pending, 0 importer restarts): " + claimFix + "."}},
			},
		},
		"FailingKeepsNoRecord": {
			reason: "A restart loop is reported as failing, with its cause; it needs no record of its own.",
			live: cdiv1.DataVolumeStatus{Phase: cdiv1.ImportInProgress, Progress: "12.5%", RestartCount: 3, Conditions: []cdiv1.DataVolumeCondition{
				{Type: cdiv1.DataVolumeRunning, Status: corev1.ConditionFalse, Reason: "Error", Message: "Unable to connect to http data source: 503 Service Unavailable"}}},
			now: now, prev: ptrTo(entry(stalled12, 0, eightHoursAgo)),
			want: want{
				Entry: withReason(entry(stalled12, 0, ""), "ImportFailing", "Golden DataVolume "+ref+` keeps failing to import (phase ImportInProgress, 3 importer restarts, Error: "Unable to connect to http data source: 503 Service Unavailable"): check the importer pod logs in cozy-public and that `+g.URL+" is reachable; the import resumes by itself once an attempt succeeds."),
				Condition: compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: "ImportFailing",
					Message: "golden DataVolume " + ref + ` keeps failing to import (phase ImportInProgress, 3 importer restarts, Error: "Unable to connect to http data source: 503 Service Unavailable"): check the importer pod logs in cozy-public and that ` + g.URL + " is reachable; the import resumes by itself once an attempt succeeds."},
			},
		},
		"NoClockRecordsNothing": {
			reason: "A request without a time (compose.Request.Now unset) keeps no record and finds nothing stalled.",
			live:   stalled12, prev: ptrTo(entry(stalled12, 0, eightHoursAgo)),
			want: want{Entry: entry(stalled12, 0, ""), Condition: importing("12.5%")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := composite.New()
			xr.SetAPIVersion("workerimage.cozystack.io/v1alpha1")
			xr.SetKind("XWorkerImageCatalog")
			xr.SetName("default")
			if err := xr.SetValue("spec", spec); err != nil {
				t.Fatal(err)
			}
			if tc.prev != nil {
				if err := xr.SetValue("status", v1alpha1.WorkerImageCatalogStatus{Goldens: []v1alpha1.GoldenStatus{*tc.prev}}); err != nil {
					t.Fatal(err)
				}
			}
			dv, err := compose.ToDesired(goldenDataVolume(g), compose.DropZero("spec", "finalCheckpoint"))
			if err != nil {
				t.Fatal(err)
			}
			if err := dv.SetValue("status", tc.live); err != nil {
				t.Fatal(err)
			}
			obs := map[fresource.Name]fresource.ObservedComposed{goldenKey(g.Name): {Resource: dv}}
			out := composetest.Run(Mode{}, composetest.Request{Request: compose.Request{Config: cfg, Composite: xr, Observed: obs, Now: tc.now}}).Output
			if out.Fatal != nil {
				t.Fatal(out.Fatal)
			}
			got := want{Entry: out.Status["goldens"].([]v1alpha1.GoldenStatus)[0], Condition: out.Conditions[0],
				Mark: out.Resources[goldenKey(g.Name)].Resource.GetAnnotations()[labels.AnnImportStalled], Results: out.Results}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
