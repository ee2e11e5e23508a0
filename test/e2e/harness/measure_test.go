package harness

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRequestTotals(t *testing.T) {
	text := `# HELP apiserver_request_total [STABLE] Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="cdi.kubevirt.io",resource="datavolumes",scope="resource",subresource="",verb="PUT",version="v1beta1"} 15278
apiserver_request_total{code="409",component="apiserver",dry_run="",group="cdi.kubevirt.io",resource="datavolumes",scope="resource",subresource="",verb="PUT",version="v1beta1"} 22
apiserver_request_total{code="200",component="apiserver",dry_run="",group="workerimage.cozystack.io",resource="xnodepools",scope="resource",subresource="status",verb="APPLY",version="v1alpha1"} 6457
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="WATCH",version="v1"} 90
apiserver_request_total{code="101",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="exec",verb="CONNECT",version="v1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="",scope="",subresource="/healthz",verb="GET",version=""} 40
apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="GET",version="v1"} 7
apiserver_request_total_other{resource="pods",verb="GET"} 1
`
	got, err := requestTotals(text)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"PUT datavolumes":         15300,
		"APPLY xnodepools/status": 6457,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requestTotals (-want +got):\n%s", diff)
	}
	if _, err := requestTotals(`apiserver_request_total{verb="GET",resource="pods"} x`); err == nil {
		t.Error("a value that is not a number: no error")
	}
}

func TestSumSeries(t *testing.T) {
	text := `# HELP apiserver_flowcontrol_request_wait_duration_seconds [BETA] Length of time a request spent waiting in its queue
# TYPE apiserver_flowcontrol_request_wait_duration_seconds histogram
apiserver_flowcontrol_request_wait_duration_seconds_bucket{execute="true",flow_schema="global-default",priority_level="global-default",le="0.005"} 4980
apiserver_flowcontrol_request_wait_duration_seconds_sum{execute="true",flow_schema="global-default",priority_level="global-default"} 0.25
apiserver_flowcontrol_request_wait_duration_seconds_count{execute="true",flow_schema="global-default",priority_level="global-default"} 4990
apiserver_flowcontrol_request_wait_duration_seconds_count{execute="false",flow_schema="global-default",priority_level="global-default"} 10
apiserver_flowcontrol_request_wait_duration_seconds_count{execute="true",flow_schema="service-accounts",priority_level="workload-low"} 70000
apiserver_flowcontrol_nominal_limit_seats{priority_level="global-default"} 49
apiserver_flowcontrol_nominal_limit_seats{priority_level="workload-low"} 245
`
	for _, tc := range []struct {
		name   string
		series string
		labels []string
		want   float64
		none   bool
	}{
		{name: "every execute of one flow schema", series: "apiserver_flowcontrol_request_wait_duration_seconds_count", labels: []string{`flow_schema="global-default"`}, want: 5000},
		{name: "both labels", series: "apiserver_flowcontrol_request_wait_duration_seconds_count", labels: []string{`flow_schema="global-default"`, `execute="true"`}, want: 4990},
		{name: "a gauge", series: "apiserver_flowcontrol_nominal_limit_seats", labels: []string{`priority_level="global-default"`}, want: 49},
		{name: "a name is not a prefix of another", series: "apiserver_flowcontrol_request_wait_duration_seconds", labels: []string{`flow_schema="global-default"`}, none: true},
		{name: "a counter not yet counted", series: "apiserver_flowcontrol_rejected_requests_total", labels: []string{`flow_schema="global-default"`}, none: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := sumSeries(strings.NewReader(text), "test", tc.series, tc.labels...)
			if tc.none {
				if !errors.Is(err, ErrNoSeries) {
					t.Fatalf("sumSeries: %v, %v; want ErrNoSeries", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("sumSeries = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
