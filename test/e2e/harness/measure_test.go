package harness

import (
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
