// Package metrics turns what each RunFunction call decided into the
// Prometheus series a platform alerts on: calls by mode and outcome, the
// size of requests and responses, the decisions (conditions) each mode
// reports, the composites whose latest call held a change or was refused,
// the catalogs' goldens by state and the clone pre-flight's predictions.
//
// The function keeps no state between calls for its decisions; these
// metrics are the one exception, and they are never read back. The state
// gauges (composites, held and refused composites, goldens) describe each
// composite by its latest call, forgotten when it has not been called
// for three of its TTLs: Crossplane calls every composite at least once a
// TTL, so a composite that stopped being called was deleted (or its
// Crossplane stopped). With several replicas each counts the composites it
// served in that window: aggregate with max, not sum (docs/operations.md).
package metrics

import (
	"cmp"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cozystack/function-worker-image/internal/compose"
)

// Namespace prefixes every series.
const Namespace = "function_worker_image"

// Outcome of a call.
type Outcome string

// Outcomes.
const (
	// OutcomeComposed: the mode decided and the response carries its
	// desired state.
	OutcomeComposed Outcome = "composed"
	// OutcomeRequirements: the mode asked for required resources Crossplane
	// had not sent yet and decided nothing.
	OutcomeRequirements Outcome = "requirements"
	// OutcomeFatal: the call returned a fatal result.
	OutcomeFatal Outcome = "fatal"
)

// ModeUnknown labels a call refused before its mode was known (a bad
// Input, no composite, an unsupported Crossplane).
const ModeUnknown = "unknown"

// Call is what one RunFunction call did.
type Call struct {
	// Mode is the composite's mode, ModeUnknown before it is known.
	Mode string
	// Composite identifies the composite (kind, namespace, name); empty
	// when the request names none.
	Composite string
	// Catalog names the catalog for the goldens gauge (catalog mode).
	Catalog string
	Outcome Outcome
	// RequestBytes and ResponseBytes are the messages' wire sizes.
	RequestBytes, ResponseBytes int
	// TTL is the response's TTL: Crossplane calls again within it.
	TTL time.Duration
	// Conditions and Signals are the mode's Output, for a composed call.
	Conditions []compose.Condition
	Signals    compose.Signals
}

// Recorder records calls. A nil Recorder records nothing.
type Recorder struct {
	calls            *prometheus.CounterVec
	requestBytes     *prometheus.HistogramVec
	responseBytes    *prometheus.HistogramVec
	decisions        *prometheus.CounterVec
	clonePredictions *prometheus.CounterVec

	state *stateCollector
}

// sizeBuckets span a tenant cluster's 1 KiB to the 4 MiB default limit and
// past it (docs/performance.md, "Message size and the 4 MiB limit").
var sizeBuckets = prometheus.ExponentialBuckets(1024, 4, 10)

// New registers the recorder's series on reg. now is the clock the state
// gauges expire by (time.Now outside tests).
func New(reg prometheus.Registerer, now func() time.Time) (*Recorder, error) {
	r := &Recorder{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "calls_total",
			Help: "RunFunction calls by mode and outcome (composed, requirements: asked Crossplane for required resources and decided nothing, fatal).",
		}, []string{"mode", "outcome"}),
		requestBytes: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "request_bytes",
			Help:    "Size of RunFunction requests on the wire, by mode; the function refuses requests above --max-recv-message-size (4 MiB).",
			Buckets: sizeBuckets,
		}, []string{"mode"}),
		responseBytes: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "response_bytes",
			Help:    "Size of RunFunction responses on the wire, by mode.",
			Buckets: sizeBuckets,
		}, []string{"mode"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "decisions_total",
			Help: "Conditions the function set on composites, one per condition per composed call, by mode, condition type, status and reason.",
		}, []string{"mode", "condition", "status", "reason"}),
		clonePredictions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "clone_predictions_total",
			Help: "The clone pre-flight's predictions of how CDI clones a new template's worker disks: strategy (csi-clone, snapshot, copy, or empty when CDI would not plan), the fallback to a host-assisted copy CDI would take, and what blocks it.",
		}, []string{"strategy", "fallback", "blocked"}),
		state: newStateCollector(now),
	}
	for _, c := range []prometheus.Collector{r.calls, r.requestBytes, r.responseBytes, r.decisions, r.clonePredictions, r.state} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Observe records one call.
func (r *Recorder) Observe(c Call) {
	if r == nil {
		return
	}
	mode := c.Mode
	if mode == "" {
		mode = ModeUnknown
	}
	r.calls.WithLabelValues(mode, string(c.Outcome)).Inc()
	r.requestBytes.WithLabelValues(mode).Observe(float64(c.RequestBytes))
	r.responseBytes.WithLabelValues(mode).Observe(float64(c.ResponseBytes))
	if c.Outcome == OutcomeComposed {
		for _, cond := range c.Conditions {
			r.decisions.WithLabelValues(mode, cond.Type, string(cond.Status), cond.Reason).Inc()
		}
		if p := c.Signals.ClonePlan; p != nil {
			r.clonePredictions.WithLabelValues(p.Strategy, p.Fallback, p.Blocked).Inc()
		}
	}
	if c.Composite == "" || c.Outcome == OutcomeRequirements {
		// A requirements call decides nothing: the composite keeps what
		// its last decision said.
		return
	}
	r.state.record(c.Composite, entry{
		mode:    mode,
		catalog: c.Catalog,
		fatal:   c.Outcome == OutcomeFatal,
		hold:    c.Signals.Hold,
		goldens: c.Signals.Goldens,
		expires: r.state.now().Add(expiryOf(c.TTL)),
	})
}

// expiryOf is how long a composite counts after a call with this TTL.
func expiryOf(ttl time.Duration) time.Duration {
	return max(3*ttl, minExpiry)
}

// minExpiry keeps a composite on a short in-progress TTL from flapping out
// of the gauges while Crossplane's queue is busy.
const minExpiry = 2 * time.Minute

// entry is a composite's latest decision.
type entry struct {
	mode, catalog string
	fatal         bool
	hold          string
	goldens       []compose.GoldenSignal
	expires       time.Time
}

// stateCollector serves the state gauges, computed at scrape time from the
// composites' latest decisions, so series of deleted composites vanish on
// their own instead of staying at their last value.
type stateCollector struct {
	mu      sync.Mutex
	entries map[string]entry
	now     func() time.Time

	composites, held, refused, goldens *prometheus.Desc
}

func newStateCollector(now func() time.Time) *stateCollector {
	return &stateCollector{
		entries:    map[string]entry{},
		now:        now,
		composites: prometheus.NewDesc(Namespace+"_composites", "Composites this replica decided for within three of their TTLs, by mode.", []string{"mode"}, nil),
		held:       prometheus.NewDesc(Namespace+"_held_composites", "Composites whose latest decision holds a change back (a node pool's gate), by mode and reason.", []string{"mode", "reason"}, nil),
		refused:    prometheus.NewDesc(Namespace+"_refused_composites", "Composites whose latest call returned a fatal result (invalid spec, catalog drift, support matrix), by mode.", []string{"mode"}, nil),
		goldens:    prometheus.NewDesc(Namespace+"_goldens", "Golden images by catalog, import state (Succeeded, Importing, Pending, Stalled, Failing, Failed, Permanent, WaitingForSource, Missing, Unreadable) and whether they are retiring.", []string{"catalog", "state", "retiring"}, nil),
	}
}

// record replaces key's entry. A fatal call keeps the hold and goldens its
// previous decision reported: a refusal changes nothing composed.
func (s *stateCollector) record(key string, e entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.entries[key]; ok && e.fatal && s.now().Before(prev.expires) {
		e.hold, e.goldens = prev.hold, prev.goldens
		if e.catalog == "" {
			e.catalog = prev.catalog
		}
	}
	s.entries[key] = e
}

// Describe implements prometheus.Collector.
func (s *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{s.composites, s.held, s.refused, s.goldens} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: it forgets expired composites,
// then counts the rest.
func (s *stateCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range s.snapshot() {
		ch <- m
	}
}

// snapshot is the gauges' values, in a fixed order.
func (s *stateCollector) snapshot() []prometheus.Metric {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	type heldKey struct{ mode, reason string }
	type goldenKey struct{ catalog, state, retiring string }
	composites, refused := map[string]int{}, map[string]int{}
	held := map[heldKey]int{}
	goldens := map[goldenKey]int{}
	for key, e := range s.entries {
		if !now.Before(e.expires) {
			delete(s.entries, key)
			continue
		}
		composites[e.mode]++
		if e.fatal {
			refused[e.mode]++
		}
		if e.hold != "" {
			held[heldKey{e.mode, e.hold}]++
		}
		for _, g := range e.goldens {
			retiring := "false"
			if g.Retiring {
				retiring = "true"
			}
			goldens[goldenKey{e.catalog, g.State, retiring}]++
		}
	}
	var out []prometheus.Metric
	for _, mode := range slices.Sorted(maps.Keys(composites)) {
		out = append(out, prometheus.MustNewConstMetric(s.composites, prometheus.GaugeValue, float64(composites[mode]), mode))
	}
	for _, mode := range slices.Sorted(maps.Keys(refused)) {
		out = append(out, prometheus.MustNewConstMetric(s.refused, prometheus.GaugeValue, float64(refused[mode]), mode))
	}
	for _, k := range slices.SortedFunc(maps.Keys(held), func(a, b heldKey) int {
		return cmp.Or(cmp.Compare(a.mode, b.mode), cmp.Compare(a.reason, b.reason))
	}) {
		out = append(out, prometheus.MustNewConstMetric(s.held, prometheus.GaugeValue, float64(held[k]), k.mode, k.reason))
	}
	for _, k := range slices.SortedFunc(maps.Keys(goldens), func(a, b goldenKey) int {
		return cmp.Or(cmp.Compare(a.catalog, b.catalog), cmp.Compare(a.state, b.state), cmp.Compare(a.retiring, b.retiring))
	}) {
		out = append(out, prometheus.MustNewConstMetric(s.goldens, prometheus.GaugeValue, float64(goldens[k]), k.catalog, k.state, k.retiring))
	}
	return out
}
