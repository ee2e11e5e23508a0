package compose

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composite"
)

func msg(s string) *string { return &s }

func TestWrite(t *testing.T) {
	target := fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum()
	cases := map[string]struct {
		reason string
		out    Output
		want   *fnv1.RunFunctionResponse
	}{
		"FatalWritesOnlyTheFatal": {
			reason: "A fatal stops the pipeline; nothing else a mode decided may leak into the response.",
			out:    Output{Fatal: errors.New("boom"), TTL: time.Second, Status: map[string]any{"x": 1}, Conditions: []Condition{{Type: "A", Status: StatusTrue, Reason: "R"}}},
			want: &fnv1.RunFunctionResponse{Meta: &fnv1.ResponseMeta{}, Results: []*fnv1.Result{{
				Severity: fnv1.Severity_SEVERITY_FATAL, Message: "boom", Target: fnv1.Target_TARGET_COMPOSITE.Enum(),
			}}},
		},
		"ConditionsAreSortedAndResultsKeepTheirOrder": {
			reason: "The same Output gives the same bytes whatever order a mode built its conditions in.",
			out: Output{
				TTL:        15 * time.Second,
				Status:     map[string]any{"b": "2", "a": "1"},
				Conditions: []Condition{{Type: "Zeta", Status: StatusFalse, Reason: "No", Message: "z"}, {Type: "Alpha", Status: StatusUnknown, Reason: "Maybe", Message: "a"}},
				Results:    []Result{{Severity: SeverityWarning, Reason: "Held", Message: "w"}, {Severity: SeverityNormal, Message: "n"}},
			},
			want: &fnv1.RunFunctionResponse{
				Meta:    &fnv1.ResponseMeta{Ttl: durationpb.New(15 * time.Second)},
				Desired: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"status":{"a":"1","b":"2"}}`)}},
				Conditions: []*fnv1.Condition{
					{Type: "Alpha", Status: fnv1.Status_STATUS_CONDITION_UNKNOWN, Reason: "Maybe", Message: msg("a"), Target: target},
					{Type: "Zeta", Status: fnv1.Status_STATUS_CONDITION_FALSE, Reason: "No", Message: msg("z"), Target: target},
				},
				Results: []*fnv1.Result{
					{Severity: fnv1.Severity_SEVERITY_WARNING, Reason: msg("Held"), Message: "w", Target: target},
					{Severity: fnv1.Severity_SEVERITY_NORMAL, Message: "n", Target: target},
				},
			},
		},
		"NotReadyMarksTheCompositeNotReady": {
			reason: "A held pool must not be reported Ready by Crossplane although everything it composes is ready.",
			out:    Output{NotReady: true},
			want: &fnv1.RunFunctionResponse{
				Meta:    &fnv1.ResponseMeta{},
				Desired: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{}`), Ready: fnv1.Ready_READY_FALSE}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := &fnv1.RunFunctionResponse{Meta: &fnv1.ResponseMeta{}}
			dxr := &resource.Composite{Resource: composite.New()}
			if err := Write(rsp, dxr, tc.out); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, rsp, protocmp.Transform()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestEarlierStepsDesiredCompositePassesThrough(t *testing.T) {
	cases := map[string]struct {
		reason string
		ready  fnv1.Ready
		out    Output
		want   *fnv1.Resource
	}{
		"ReadyFalseKept": {
			reason: "An earlier step's READY_FALSE, fields and connection details survive this step's status.",
			ready:  fnv1.Ready_READY_FALSE,
			out:    Output{Status: map[string]any{"gate": "Open"}},
			want: &fnv1.Resource{
				Resource:          resource.MustStructJSON(`{"spec":{"fromEarlier":"x"},"status":{"earlier":true,"gate":"Open"}}`),
				ConnectionDetails: map[string][]byte{"kubeconfig": []byte("k")},
				Ready:             fnv1.Ready_READY_FALSE,
			},
		},
		"ReadyTrueKeptWhenNotHeld": {
			reason: "An earlier step's READY_TRUE is not this step's to drop.",
			ready:  fnv1.Ready_READY_TRUE,
			out:    Output{Status: map[string]any{"gate": "Open"}},
			want: &fnv1.Resource{
				Resource:          resource.MustStructJSON(`{"spec":{"fromEarlier":"x"},"status":{"earlier":true,"gate":"Open"}}`),
				ConnectionDetails: map[string][]byte{"kubeconfig": []byte("k")},
				Ready:             fnv1.Ready_READY_TRUE,
			},
		},
		"HoldOverridesAnEarlierReadyTrue": {
			reason: "A held pool has no workers: not ready, whatever an earlier step said.",
			ready:  fnv1.Ready_READY_TRUE,
			out:    Output{Status: map[string]any{"gate": "Held"}, NotReady: true},
			want: &fnv1.Resource{
				Resource:          resource.MustStructJSON(`{"spec":{"fromEarlier":"x"},"status":{"earlier":true,"gate":"Held"}}`),
				ConnectionDetails: map[string][]byte{"kubeconfig": []byte("k")},
				Ready:             fnv1.Ready_READY_FALSE,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := &fnv1.RunFunctionRequest{Desired: &fnv1.State{Composite: &fnv1.Resource{
				Resource:          resource.MustStructJSON(`{"spec":{"fromEarlier":"x"},"status":{"earlier":true}}`),
				ConnectionDetails: map[string][]byte{"kubeconfig": []byte("k")},
				Ready:             tc.ready,
			}}}
			dxr, err := DesiredComposite(req)
			if err != nil {
				t.Fatal(err)
			}
			rsp := &fnv1.RunFunctionResponse{Meta: &fnv1.ResponseMeta{}}
			if err := Write(rsp, dxr, tc.out); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, rsp.GetDesired().GetComposite(), protocmp.Transform()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestToDesired(t *testing.T) {
	dv := &cdiv1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "cozy-public"},
		Spec:       cdiv1.DataVolumeSpec{ContentType: cdiv1.DataVolumeKubeVirt, Source: &cdiv1.DataVolumeSource{HTTP: &cdiv1.DataVolumeSourceHTTP{URL: "https://f/i.raw.xz"}}},
		Status:     cdiv1.DataVolumeStatus{Phase: cdiv1.Succeeded},
	}
	c, err := ToDesired(dv, DropZero("spec", "finalCheckpoint"), DropZero("spec", "contentType"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
		"metadata": map[string]any{"name": "g", "namespace": "cozy-public"},
		"spec":     map[string]any{"contentType": "kubevirt", "source": map[string]any{"http": map[string]any{"url": "https://f/i.raw.xz"}}},
	}
	if diff := cmp.Diff(want, c.Object); diff != "" {
		t.Errorf("status is never desired, a zero finalCheckpoint is dropped, a set contentType is kept\n-want, +got:\n%s", diff)
	}
}
