package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
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
	sc := bufio.NewScanner(rsp.Body)
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
		return 0, fmt.Errorf("%s serves no %s %v", url, name, labels)
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
