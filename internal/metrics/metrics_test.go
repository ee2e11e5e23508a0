package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cozystack/function-worker-image/internal/compose"
)

// clock is a settable time source.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestStateGauges(t *testing.T) {
	start := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	pool := func(name, hold string) Call {
		return Call{Mode: "NodePool", Composite: "XNodePool/tenant/" + name, Outcome: OutcomeComposed, TTL: time.Minute, Signals: compose.Signals{Hold: hold}}
	}
	catalog := Call{Mode: "Catalog", Composite: "XWorkerImageCatalog//default", Catalog: "default", Outcome: OutcomeComposed, TTL: time.Minute,
		Signals: compose.Signals{Goldens: []compose.GoldenSignal{{State: "Succeeded"}, {State: "Importing"}, {State: "Succeeded", Retiring: true}, {State: "Succeeded"}}}}
	cases := map[string]struct {
		reason string
		calls  []Call
		// after is how long after the calls the gauges are read.
		after time.Duration
		want  string
	}{
		"HoldsAndGoldensByLatestDecision": {
			reason: "Each composite counts once, by its latest decision; goldens by catalog, state and retirement.",
			calls:  []Call{pool("a", "GoldenImporting"), pool("a", ""), pool("b", "GoldenImporting"), pool("c", "HostAssistedCopy"), catalog},
			want: `
# HELP function_worker_image_composites Composites this replica decided for within three of their TTLs, by mode.
# TYPE function_worker_image_composites gauge
function_worker_image_composites{mode="Catalog"} 1
function_worker_image_composites{mode="NodePool"} 3
# HELP function_worker_image_goldens Golden images by catalog, import state (Succeeded, Importing, Pending, Stalled, Failing, Failed, Permanent, WaitingForSource, Missing, Unreadable) and whether they are retiring.
# TYPE function_worker_image_goldens gauge
function_worker_image_goldens{catalog="default",retiring="false",state="Importing"} 1
function_worker_image_goldens{catalog="default",retiring="false",state="Succeeded"} 2
function_worker_image_goldens{catalog="default",retiring="true",state="Succeeded"} 1
# HELP function_worker_image_held_composites Composites whose latest decision holds a change back (a node pool's gate), by mode and reason.
# TYPE function_worker_image_held_composites gauge
function_worker_image_held_composites{mode="NodePool",reason="GoldenImporting"} 1
function_worker_image_held_composites{mode="NodePool",reason="HostAssistedCopy"} 1
`,
		},
		"ARequirementsCallKeepsTheLastDecision": {
			reason: "A call that only asks for required resources decides nothing; the hold it last reported stands.",
			calls:  []Call{pool("a", "CloneNotAuthorized"), {Mode: "NodePool", Composite: "XNodePool/tenant/a", Outcome: OutcomeRequirements, TTL: time.Minute}},
			want: `
# HELP function_worker_image_composites Composites this replica decided for within three of their TTLs, by mode.
# TYPE function_worker_image_composites gauge
function_worker_image_composites{mode="NodePool"} 1
# HELP function_worker_image_held_composites Composites whose latest decision holds a change back (a node pool's gate), by mode and reason.
# TYPE function_worker_image_held_composites gauge
function_worker_image_held_composites{mode="NodePool",reason="CloneNotAuthorized"} 1
`,
		},
		"AFatalCallKeepsWhatIsComposed": {
			reason: "A refused catalog keeps its goldens (a fatal changes nothing composed) and counts as refused.",
			calls:  []Call{catalog, {Mode: "Catalog", Composite: "XWorkerImageCatalog//default", Catalog: "default", Outcome: OutcomeFatal, TTL: time.Minute}},
			want: `
# HELP function_worker_image_composites Composites this replica decided for within three of their TTLs, by mode.
# TYPE function_worker_image_composites gauge
function_worker_image_composites{mode="Catalog"} 1
# HELP function_worker_image_goldens Golden images by catalog, import state (Succeeded, Importing, Pending, Stalled, Failing, Failed, Permanent, WaitingForSource, Missing, Unreadable) and whether they are retiring.
# TYPE function_worker_image_goldens gauge
function_worker_image_goldens{catalog="default",retiring="false",state="Importing"} 1
function_worker_image_goldens{catalog="default",retiring="false",state="Succeeded"} 2
function_worker_image_goldens{catalog="default",retiring="true",state="Succeeded"} 1
# HELP function_worker_image_refused_composites Composites whose latest call returned a fatal result (invalid spec, catalog drift, support matrix), by mode.
# TYPE function_worker_image_refused_composites gauge
function_worker_image_refused_composites{mode="Catalog"} 1
`,
		},
		"ACompositeNoLongerCalledIsForgotten": {
			reason: "Crossplane calls a composite at least once a TTL: after three TTLs without a call it was deleted, and its series go.",
			calls:  []Call{pool("a", "GoldenImporting")},
			after:  3 * time.Minute,
			want:   ``,
		},
		"AShortTTLStillCountsForTwoMinutes": {
			reason: "An in-progress TTL of 15s must not make a busy composite flap out of the gauges.",
			calls:  []Call{{Mode: "NodePool", Composite: "XNodePool/tenant/a", Outcome: OutcomeComposed, TTL: 15 * time.Second}},
			after:  90 * time.Second,
			want: `
# HELP function_worker_image_composites Composites this replica decided for within three of their TTLs, by mode.
# TYPE function_worker_image_composites gauge
function_worker_image_composites{mode="NodePool"} 1
`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := &clock{t: start}
			reg := prometheus.NewPedanticRegistry()
			r, err := New(reg, c.now)
			if err != nil {
				t.Fatal(err)
			}
			for _, call := range tc.calls {
				r.Observe(call)
			}
			c.t = c.t.Add(tc.after)
			names := []string{"function_worker_image_composites", "function_worker_image_held_composites", "function_worker_image_refused_composites", "function_worker_image_goldens"}
			if err := testutil.GatherAndCompare(reg, strings.NewReader(tc.want), names...); err != nil {
				t.Errorf("%s\n%v", tc.reason, err)
			}
		})
	}
}

func TestCounters(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	r, err := New(reg, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	held := compose.Condition{Type: "WorkerImageReady", Status: compose.StatusFalse, Reason: "HostAssistedCopy"}
	r.Observe(Call{Mode: "NodePool", Composite: "XNodePool/t/a", Outcome: OutcomeRequirements, RequestBytes: 2000})
	r.Observe(Call{Mode: "NodePool", Composite: "XNodePool/t/a", Outcome: OutcomeComposed, RequestBytes: 90000, ResponseBytes: 5000,
		Conditions: []compose.Condition{held},
		Signals:    compose.Signals{Hold: "HostAssistedCopy", ClonePlan: &compose.ClonePlanSignal{Strategy: "copy", Fallback: "NoVolumeSnapshotClass"}}})
	r.Observe(Call{Outcome: OutcomeFatal})
	want := `
# HELP function_worker_image_calls_total RunFunction calls by mode and outcome (composed, requirements: asked Crossplane for required resources and decided nothing, fatal).
# TYPE function_worker_image_calls_total counter
function_worker_image_calls_total{mode="NodePool",outcome="composed"} 1
function_worker_image_calls_total{mode="NodePool",outcome="requirements"} 1
function_worker_image_calls_total{mode="unknown",outcome="fatal"} 1
# HELP function_worker_image_clone_predictions_total The clone pre-flight's predictions of how CDI clones a new template's worker disks: strategy (csi-clone, snapshot, copy, or empty when CDI would not plan), the fallback to a host-assisted copy CDI would take, and what blocks it.
# TYPE function_worker_image_clone_predictions_total counter
function_worker_image_clone_predictions_total{blocked="",fallback="NoVolumeSnapshotClass",strategy="copy"} 1
# HELP function_worker_image_decisions_total Conditions the function set on composites, one per condition per composed call, by mode, condition type, status and reason.
# TYPE function_worker_image_decisions_total counter
function_worker_image_decisions_total{condition="WorkerImageReady",mode="NodePool",reason="HostAssistedCopy",status="False"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "function_worker_image_calls_total", "function_worker_image_clone_predictions_total", "function_worker_image_decisions_total"); err != nil {
		t.Error(err)
	}
	if got := testutil.CollectAndCount(r.requestBytes); got != 2 {
		t.Errorf("request_bytes: %d series, want one per mode seen (NodePool, unknown)", got)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

func TestNilRecorderRecordsNothing(_ *testing.T) {
	var r *Recorder
	r.Observe(Call{Mode: "NodePool", Outcome: OutcomeComposed})
}
