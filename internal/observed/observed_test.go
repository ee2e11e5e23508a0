package observed

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
)

func TestDataVolumeMetaAndStatus(t *testing.T) {
	cases := map[string]struct {
		reason  string
		obj     map[string]any
		want    *cdiv1.DataVolume
		wantErr string
	}{
		"IdentityLabelsAnnotationsAndStatus": {
			reason: "What a pool reads of its worker disks is converted; the spec is not.",
			obj: map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
				"metadata": map[string]any{"name": "w", "namespace": "t", "labels": map[string]any{"a": "b"}, "annotations": map[string]any{"c": "d"}, "uid": "u"},
				"spec":     map[string]any{"source": map[string]any{"pvc": map[string]any{"name": "g", "namespace": "cozy-public"}}},
				"status":   map[string]any{"phase": "Succeeded", "restartCount": int64(2), "claimName": "w"}},
			want: &cdiv1.DataVolume{
				TypeMeta:   metav1.TypeMeta{APIVersion: "cdi.kubevirt.io/v1beta1", Kind: "DataVolume"},
				ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "t", Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"}},
				Status:     cdiv1.DataVolumeStatus{Phase: cdiv1.Succeeded, RestartCount: 2, ClaimName: "w"},
			},
		},
		"NoStatusIsEmptyStatus": {
			reason: "A disk CDI has not reconciled yet has no status, which is not an error.",
			obj:    map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": map[string]any{"name": "w"}},
			want:   &cdiv1.DataVolume{TypeMeta: metav1.TypeMeta{APIVersion: "cdi.kubevirt.io/v1beta1", Kind: "DataVolume"}, ObjectMeta: metav1.ObjectMeta{Name: "w"}},
		},
		"StatusOfTheWrongShapeIsAnError": {
			reason:  "A malformed object is reported, never panicked on.",
			obj:     map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": map[string]any{"name": "w", "namespace": "t"}, "status": "broken"},
			wantErr: `cannot read DataVolume "t/w": status is a string, not an object`,
		},
		"OtherKindIsRefused": {
			reason:  "A misrouted object never passes as a DataVolume.",
			obj:     map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": map[string]any{"name": "w", "namespace": "t"}},
			wantErr: `PersistentVolumeClaim "t/w" is a v1 PersistentVolumeClaim, not a cdi.kubevirt.io/v1beta1 DataVolume`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := DataVolumeMetaAndStatus(&unstructured.Unstructured{Object: tc.obj})
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Fatalf("%s\n-want error, +got error:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, got); err == nil && diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestPVCMetaAndSpec(t *testing.T) {
	class := "replicated"
	got, err := PVCMetaAndSpec(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
		"metadata": map[string]any{"name": "w", "namespace": "t", "annotations": map[string]any{"cdi.kubevirt.io/cloneType": "copy"}},
		"spec":     map[string]any{"storageClassName": class},
		"status":   map[string]any{"phase": "Bound"}}})
	want := &corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "t", Annotations: map[string]string{"cdi.kubevirt.io/cloneType": "copy"}},
		Spec:       corev1.PersistentVolumeClaimSpec{StorageClassName: &class},
	}
	if diff := cmp.Diff(want, got); err != nil || diff != "" {
		t.Errorf("a claim's identity, annotations and spec are read, its status is not (err %v)\n-want, +got:\n%s", err, diff)
	}
}
