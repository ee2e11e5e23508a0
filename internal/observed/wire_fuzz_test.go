package observed

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/internal/labels"
)

// FuzzWorkerDataVolume feeds the wire reader arbitrary JSON objects. It must
// never panic, and whenever it and the typed conversion it replaces
// (apimachinery's reflective converter) both accept an object, they agree on
// every field the reader reads.
func FuzzWorkerDataVolume(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"cdi.kubevirt.io/v1beta1","kind":"DataVolume","metadata":{"name":"w","namespace":"t","labels":{"a":"b"},"annotations":{"cdi.kubevirt.io/cloneType":"copy","x":"y"}},"status":{"phase":"Succeeded","claimName":"w","conditions":[{"type":"Bound","status":"False","reason":"CloneWithoutSource","message":"m"}]}}`,
		`{"apiVersion":"cdi.kubevirt.io/v1beta1","kind":"DataVolume","metadata":{"name":"w"},"status":null}`,
		`{"apiVersion":"cdi.kubevirt.io/v1beta1","kind":"DataVolume","metadata":{"name":"w"},"status":{"phase":"CSICloneInProgress","progress":"N/A","restartCount":2}}`,
		`{"apiVersion":"cdi.kubevirt.io/v1beta1","kind":"DataVolume","metadata":{"labels":null},"status":{"conditions":[1]}}`,
		`{"kind":"DataVolume","status":"x"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var obj map[string]any
		if json.Unmarshal(data, &obj) != nil {
			return
		}
		s, err := structpb.NewStruct(obj)
		if err != nil {
			return
		}
		got, err := WorkerDataVolume(s, labels.AnnCDICloneType)
		if err != nil {
			return
		}
		typed := &cdiv1.DataVolume{}
		if Into(&unstructured.Unstructured{Object: s.AsMap()}, CDIAPIVersion, KindDataVolume, typed) != nil {
			return
		}
		want := cdiv1.DataVolume{TypeMeta: typed.TypeMeta}
		want.Name, want.Namespace, want.Labels = typed.Name, typed.Namespace, typed.Labels
		if v, ok := typed.Annotations[labels.AnnCDICloneType]; ok {
			want.Annotations = map[string]string{labels.AnnCDICloneType: v}
		}
		want.Status.Phase, want.Status.ClaimName = typed.Status.Phase, typed.Status.ClaimName
		want.Status.Progress, want.Status.RestartCount = typed.Status.Progress, typed.Status.RestartCount
		for _, c := range typed.Status.Conditions {
			want.Status.Conditions = append(want.Status.Conditions, cdiv1.DataVolumeCondition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message})
		}
		if len(want.Labels) == 0 {
			want.Labels = nil
		}
		if len(got.Status.Conditions) == 0 && len(want.Status.Conditions) == 0 {
			got.Status.Conditions, want.Status.Conditions = nil, nil
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the wire reader and the typed conversion disagree on %s\n-typed, +wire:\n%s", data, diff)
		}
	})
}
