package stall

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
)

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func importing(progress string, restarts int32) Fingerprint {
	return Fingerprint{Phase: string(cdiv1.ImportInProgress), Progress: progress, Restarts: restarts}
}

func TestTrack(t *testing.T) {
	earlier := &Record{Fingerprint: importing("12.5%", 0), Since: t0.Add(-8 * time.Hour)}
	type want struct {
		rec Record
		ok  bool
	}
	cases := map[string]struct {
		reason string
		prev   *Record
		fp     Fingerprint
		now    time.Time
		want   want
	}{
		"FirstSightStartsNow": {
			reason: "Without a record, the DataVolume is taken to have moved now.",
			fp:     importing("12.5%", 0), now: t0,
			want: want{Record{Fingerprint: importing("12.5%", 0), Since: t0}, true},
		},
		"UnmovedKeepsTheRecord": {
			reason: "The same phase, progress and restarts keep the time first seen, read back from the status after a restart of the function.",
			prev:   earlier, fp: importing("12.5%", 0), now: t0,
			want: want{*earlier, true},
		},
		"ProgressMovedResets": {
			reason: "Progress is movement.",
			prev:   earlier, fp: importing("12.6%", 0), now: t0,
			want: want{Record{Fingerprint: importing("12.6%", 0), Since: t0}, true},
		},
		"RestartResets": {
			reason: "A restarted importer is CDI trying again; restart loops are cdistate's to report.",
			prev:   earlier, fp: importing("12.5%", 1), now: t0,
			want: want{Record{Fingerprint: importing("12.5%", 1), Since: t0}, true},
		},
		"PhaseChangeResets": {
			reason: "A new phase is movement, even at the same progress.",
			prev:   &Record{Fingerprint: Fingerprint{Phase: string(cdiv1.ImportScheduled), Progress: "N/A"}, Since: t0.Add(-time.Hour)},
			fp:     importing("N/A", 0), now: t0,
			want: want{Record{Fingerprint: importing("N/A", 0), Since: t0}, true},
		},
		"RecordFromTheFutureResets": {
			reason: "A time after now (a clock set back) cannot be trusted to bound anything.",
			prev:   &Record{Fingerprint: importing("12.5%", 0), Since: t0.Add(time.Hour)}, fp: importing("12.5%", 0), now: t0,
			want: want{Record{Fingerprint: importing("12.5%", 0), Since: t0}, true},
		},
		"NoClockRecordsNothing": {
			reason: "A caller without a time keeps no record.",
			prev:   earlier, fp: importing("12.5%", 0),
			want: want{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rec, ok := Track(tc.prev, tc.fp, tc.now)
			if diff := cmp.Diff(tc.want, want{rec, ok}, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestStalled(t *testing.T) {
	cases := map[string]struct {
		reason string
		since  time.Time
		now    time.Time
		want   bool
	}{
		"BeforeTheBound":  {reason: "29 minutes without movement is within a 30-minute bound.", since: t0.Add(-29 * time.Minute), now: t0, want: false},
		"AtTheBound":      {reason: "The bound itself is reached.", since: t0.Add(-30 * time.Minute), now: t0, want: true},
		"FarPastTheBound": {reason: "Eight hours at 12.5% is stalled.", since: t0.Add(-8 * time.Hour), now: t0, want: true},
		"NoRecord":        {reason: "Nothing recorded, nothing stalled.", now: t0, want: false},
		"NoClock":         {reason: "Without a time nothing is decided.", since: t0.Add(-8 * time.Hour), want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := (Record{Since: tc.since}).Stalled(tc.now, 30*time.Minute); got != tc.want {
				t.Errorf("%s\nStalled = %t, want %t", tc.reason, got, tc.want)
			}
		})
	}
}

func TestBound(t *testing.T) {
	for d, want := range map[time.Duration]string{30 * time.Minute: "30m", 90 * time.Minute: "1h30m", 2 * time.Hour: "2h", 90 * time.Second: "1m30s", time.Minute: "1m"} {
		if got := Bound(d); got != want {
			t.Errorf("Bound(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestRecorded(t *testing.T) {
	want := &Record{Fingerprint: importing("12.5%", 2), Since: t0}
	if diff := cmp.Diff(want, Recorded("ImportInProgress", "12.5%", 2, "2024-01-01T00:00:00Z")); diff != "" {
		t.Errorf("a status entry's fields are its record\n-want, +got:\n%s", diff)
	}
	if got := Recorded("ImportInProgress", "12.5%", 0, ""); got != nil {
		t.Errorf("an entry without progressSince (an older function's, or a settled golden's) has no record, got %v", got)
	}
}

func TestSinceRoundTrip(t *testing.T) {
	at := time.Date(2023, 12, 31, 16, 0, 0, 0, time.FixedZone("CET", 3600))
	got, ok := ParseSince(FormatSince(at))
	if !ok || !got.Equal(at) || FormatSince(at) != "2023-12-31T15:00:00Z" {
		t.Errorf("a recorded time reads back as written, in UTC: got %s %t from %q", got, ok, FormatSince(at))
	}
	for _, bad := range []string{"", "yesterday", "2023-12-31"} {
		if _, ok := ParseSince(bad); ok {
			t.Errorf("%q is no time a status records, so the record starts afresh", bad)
		}
	}
}

func TestMarkOf(t *testing.T) {
	dv := func(progress string, restarts int32) *cdiv1.DataVolume {
		return &cdiv1.DataVolume{Status: cdiv1.DataVolumeStatus{Phase: cdiv1.ImportInProgress, Progress: cdiv1.DataVolumeProgress(progress), RestartCount: restarts}}
	}
	mark := Mark{Fingerprint: importing("12.5%", 0), After: 30 * time.Minute}
	type want struct {
		mark Mark
		ok   bool
	}
	cases := map[string]struct {
		reason string
		value  string
		dv     *cdiv1.DataVolume
		want   want
	}{
		"StillWhereItStalled": {reason: "The golden has not moved since the catalog marked it.", value: mark.String(), dv: dv("12.5%", 0), want: want{mark, true}},
		"MovedSince":          {reason: "A mark the golden moved past is stale until the catalog's next call drops it.", value: mark.String(), dv: dv("13.0%", 0)},
		"RestartedSince":      {reason: "A restart is movement too.", value: mark.String(), dv: dv("12.5%", 1)},
		"NoMark":              {reason: "No annotation, no verdict.", dv: dv("12.5%", 0)},
		"Garbage":             {reason: "A value the function did not write is ignored.", value: "stalled", dv: dv("12.5%", 0)},
		"NoGolden":            {reason: "Nothing to hold it against.", value: mark.String()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m, ok := MarkOf(tc.value, tc.dv)
			if diff := cmp.Diff(tc.want, want{m, ok}, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
	if got := mark.String(); got != `{"phase":"ImportInProgress","progress":"12.5%","after":"30m0s"}` {
		t.Errorf("the annotation's value is stable JSON, got %s", got)
	}
}

func TestCloning(t *testing.T) {
	for phase, want := range map[cdiv1.DataVolumePhase]bool{
		cdiv1.CloneScheduled: true, cdiv1.CSICloneInProgress: true, cdiv1.CloneInProgress: true, cdiv1.RebindInProgress: true,
		cdiv1.PrepClaimInProgress: true, cdiv1.PendingPopulation: true, cdiv1.SnapshotForSmartCloneInProgress: true,
		cdiv1.CloneFromSnapshotSourceInProgress: true,
		cdiv1.Succeeded:                         false, cdiv1.Failed: false, cdiv1.ImportInProgress: false, cdiv1.PhaseUnset: false, cdiv1.WaitForFirstConsumer: false,
	} {
		if got := Cloning(&cdiv1.DataVolume{Status: cdiv1.DataVolumeStatus{Phase: phase}}); got != want {
			t.Errorf("phase %q: Cloning = %t, want %t", phase, got, want)
		}
	}
}
