package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// FunctionCalls counts the RunFunction calls the function answered for the
// composite kind/namespace/name since the log offset from (a value of
// FunctionLogOffset): the calls that decided ("Composed") and those that
// only returned requirements. The function runs with --debug and logs one
// of the two for every call that reaches a mode (fn.go), as zap's
// development encoder writes it: time, level, caller, message, then the
// fields as JSON.
func (cp *ControlPlane) FunctionCalls(from int64, kind, ns, name string) (composed, requirements int, err error) {
	f, err := os.Open(cp.function.LogPath)
	if err != nil {
		return 0, 0, err
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(from, 0); err != nil {
		return 0, 0, err
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), "\t", 5)
		if len(fields) < 5 || (fields[3] != "Composed" && fields[3] != "Returning requirements") {
			continue
		}
		var kv struct {
			Kind      string `json:"xr-kind"`
			Namespace string `json:"xr-namespace"`
			Name      string `json:"xr-name"`
		}
		if json.Unmarshal([]byte(fields[4]), &kv) != nil || kv.Kind != kind || kv.Namespace != ns || kv.Name != name {
			continue
		}
		if fields[3] == "Composed" {
			composed++
		} else {
			requirements++
		}
	}
	return composed, requirements, sc.Err()
}

// FunctionLogOffset is the function log's size now: FunctionCalls from it
// counts only the calls that come after.
func (cp *ControlPlane) FunctionLogOffset() (int64, error) {
	st, err := os.Stat(cp.function.LogPath)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// CrossplaneRSS is the resident set of the Crossplane core process in
// bytes (VmRSS of /proc/<pid>/status).
func (cp *ControlPlane) CrossplaneRSS() (int64, error) {
	return rss(cp.crossplane.Pid())
}

// CrossplaneHeapInUse is go_memstats_heap_inuse_bytes of the Crossplane
// core process, from its metrics endpoint: unlike RSS it does not lag
// behind the garbage collector returning memory.
func (cp *ControlPlane) CrossplaneHeapInUse(ctx context.Context) (int64, error) {
	v, err := cp.CrossplaneMetric(ctx, "go_memstats_heap_inuse_bytes")
	return int64(v), err
}

// CrossplaneMetric sums the samples of the series name on Crossplane's
// metrics endpoint whose labels include every one of labels (each as
// written there, e.g. `result="Dropped"`).
func (cp *ControlPlane) CrossplaneMetric(ctx context.Context, name string, labels ...string) (float64, error) {
	return scrape(ctx, cp.crossplaneMetrics, name, labels...)
}

// FunctionMetric is CrossplaneMetric for the function's own metrics
// (--metrics-address, docs/operations.md).
func (cp *ControlPlane) FunctionMetric(ctx context.Context, name string, labels ...string) (float64, error) {
	return scrape(ctx, cp.functionMetrics, name, labels...)
}

// scrape sums the samples of series name at url whose labels include all
// of labels; an error when there is none.
func scrape(ctx context.Context, url, name string, labels ...string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = rsp.Body.Close() }()
	return sumSeries(rsp.Body, url, name, labels...)
}

// APIServerMetric is CrossplaneMetric for the kube-apiserver's /metrics,
// read as the suite's admin.
func (cp *ControlPlane) APIServerMetric(ctx context.Context, name string, labels ...string) (float64, error) {
	b, err := cp.apiServerMetrics(ctx)
	if err != nil {
		return 0, err
	}
	return sumSeries(bytes.NewReader(b), "kube-apiserver /metrics", name, labels...)
}

// ErrNoSeries is what sumSeries returns when no series matches: a counter
// that has not counted yet (apiserver_flowcontrol_rejected_requests_total
// before the first rejection) is absent, not zero.
var ErrNoSeries = errors.New("no such series")

// sumSeries sums the samples of series name in the Prometheus text r
// (from src) whose labels include all of labels.
func sumSeries(r io.Reader, src, name string, labels ...string) (float64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	sum, found := 0.0, false
sample:
	for sc.Scan() {
		line := sc.Text()
		series, value, ok := strings.Cut(line, " ")
		if !ok || (series != name && !strings.HasPrefix(series, name+"{")) {
			continue
		}
		for _, l := range labels {
			if !strings.Contains(series, l) {
				continue sample
			}
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", line, err)
		}
		sum, found = sum+f, true
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if !found {
		return 0, fmt.Errorf("%s serves %s %v: %w", src, name, labels, ErrNoSeries)
	}
	return sum, nil
}

func rss(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// APIServerRSS is the resident set of the kube-apiserver in bytes.
func (cp *ControlPlane) APIServerRSS() (int64, error) { return rss(cp.apiServer.Pid()) }

// APIServerCPU and CrossplaneCPU are the CPU time the kube-apiserver and
// Crossplane core have used (Process.CPU): with the function's, they say
// which process a load saturates first.
func (cp *ControlPlane) APIServerCPU() (time.Duration, error) { return cp.apiServer.CPU() }

// CrossplaneCPU: see APIServerCPU.
func (cp *ControlPlane) CrossplaneCPU() (time.Duration, error) { return cp.crossplane.CPU() }

// APIServerRequests is the kube-apiserver's apiserver_request_total summed
// per "VERB resource[/subresource]" (every client, every response code;
// WATCH and other long-running requests left out, since they count
// connections, not work): which requests a load turns into.
func (cp *ControlPlane) APIServerRequests(ctx context.Context) (map[string]float64, error) {
	b, err := cp.apiServerMetrics(ctx)
	if err != nil {
		return nil, err
	}
	return requestTotals(string(b))
}

// apiServerMetrics reads the kube-apiserver's /metrics as the suite's admin.
func (cp *ControlPlane) apiServerMetrics(ctx context.Context) ([]byte, error) {
	b, err := cp.Kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver /metrics: %w", err)
	}
	return b, nil
}

// requestTotals is APIServerRequests' reading of the metrics text.
func requestTotals(text string) (map[string]float64, error) {
	out := map[string]float64{}
	for line := range strings.Lines(text) {
		series, value, ok := strings.Cut(strings.TrimSpace(line), " ")
		labels, ok2 := strings.CutPrefix(series, "apiserver_request_total{")
		if !ok || !ok2 {
			continue
		}
		l := promLabels(strings.TrimSuffix(labels, "}"))
		if l["verb"] == "WATCH" || l["verb"] == "CONNECT" || l["resource"] == "" {
			continue
		}
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", line, err)
		}
		key := l["verb"] + " " + l["resource"]
		if l["subresource"] != "" {
			key += "/" + l["subresource"]
		}
		out[key] += f
	}
	return out, nil
}

// promLabels parses a Prometheus series' labels, `a="x",b="y"`; the
// apiserver's label values hold no quotes or commas.
func promLabels(s string) map[string]string {
	out := map[string]string{}
	for kv := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok {
			out[k] = strings.Trim(v, `"`)
		}
	}
	return out
}

// CPU is the CPU time (user and system) the process's current incarnation
// has used, from /proc/<pid>/stat (utime and stime, in clock ticks of
// 1/100 s: USER_HZ on Linux).
func (p *Process) CPU() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid()))
	if err != nil {
		return 0, err
	}
	// The command may hold spaces and parentheses: the fields start after
	// the last ')'. utime and stime are fields 14 and 15, the 12th and 13th
	// after it.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", p.Pid(), b)
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}

// Metric sums the series name of the process's own metrics (see scrape).
func (p *Process) Metric(ctx context.Context, name string, labels ...string) (float64, error) {
	if p.metrics == "" {
		return 0, fmt.Errorf("%s serves no metrics", p.Name)
	}
	return scrape(ctx, p.metrics, name, labels...)
}

// Histogram is a Prometheus histogram's cumulative buckets: upper bound to
// count, +Inf included.
type Histogram map[float64]float64

// CrossplaneHistogram reads the buckets of histogram name (summed over
// every series whose labels include all of labels) from Crossplane's
// metrics.
func (cp *ControlPlane) CrossplaneHistogram(ctx context.Context, name string, labels ...string) (Histogram, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cp.crossplaneMetrics, nil)
	if err != nil {
		return nil, err
	}
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rsp.Body.Close() }()
	h := Histogram{}
	sc := bufio.NewScanner(rsp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
bucket:
	for sc.Scan() {
		series, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || !strings.HasPrefix(series, name+"_bucket{") {
			continue
		}
		for _, l := range labels {
			if !strings.Contains(series, l) {
				continue bucket
			}
		}
		_, le, ok := strings.Cut(series, `le="`)
		if !ok {
			continue
		}
		le, _, _ = strings.Cut(le, `"`)
		bound, err := strconv.ParseFloat(le, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", series, err)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return nil, err
		}
		h[bound] += v
	}
	return h, sc.Err()
}

// Since is h less an earlier reading of the same histogram.
func (h Histogram) Since(earlier Histogram) Histogram {
	out := Histogram{}
	for b, v := range h {
		out[b] = v - earlier[b]
	}
	return out
}

// Quantile is the upper bound of the bucket the q-quantile falls in (the
// bucket resolution is all a histogram keeps), and the count.
func (h Histogram) Quantile(q float64) (bound, count float64) {
	bounds := make([]float64, 0, len(h))
	for b := range h {
		bounds = append(bounds, b)
	}
	sort.Float64s(bounds)
	if len(bounds) == 0 {
		return 0, 0
	}
	count = h[bounds[len(bounds)-1]]
	for _, b := range bounds {
		if h[b] >= q*count {
			return b, count
		}
	}
	return bounds[len(bounds)-1], count
}
