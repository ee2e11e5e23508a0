package observed

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/internal/cloneplan"
)

func TestWorkerDataVolume(t *testing.T) {
	cases := map[string]struct {
		reason  string
		obj     map[string]any
		want    cdiv1.DataVolume
		wantErr string
	}{
		"IdentityLabelsOneAnnotationAndStatus": {
			reason: "What clone health reads of a worker disk is read, its progress and restarts included (internal/stall); the spec, other annotations and the rest of the status are not.",
			obj: map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
				"metadata": map[string]any{"name": "w", "namespace": "t", "labels": map[string]any{"a": "b"}, "uid": "u",
					"annotations": map[string]any{"cdi.kubevirt.io/cloneType": "csi-clone", "cdi.kubevirt.io/storage.clone.token": "eyJ..."}},
				"spec": map[string]any{"source": map[string]any{"pvc": map[string]any{"name": "g", "namespace": "cozy-public"}}},
				"status": map[string]any{"phase": "Succeeded", "progress": "100.0%", "restartCount": int64(2), "claimName": "w", "conditions": []any{
					map[string]any{"type": "Bound", "status": "False", "reason": "CloneWithoutSource", "message": "gone", "lastTransitionTime": "2026-12-01T00:00:00Z"},
				}}},
			want: cdiv1.DataVolume{
				TypeMeta:   metav1.TypeMeta{APIVersion: "cdi.kubevirt.io/v1beta1", Kind: "DataVolume"},
				ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "t", Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"cdi.kubevirt.io/cloneType": "csi-clone"}},
				Status: cdiv1.DataVolumeStatus{Phase: cdiv1.Succeeded, Progress: "100.0%", RestartCount: 2, ClaimName: "w", Conditions: []cdiv1.DataVolumeCondition{
					{Type: cdiv1.DataVolumeBound, Status: corev1.ConditionFalse, Reason: "CloneWithoutSource", Message: "gone"},
				}},
			},
		},
		"NoStatusIsEmptyStatus": {
			reason: "A disk CDI has not reconciled yet has no status, which is not an error.",
			obj:    map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": map[string]any{"name": "w"}},
			want:   cdiv1.DataVolume{TypeMeta: metav1.TypeMeta{APIVersion: "cdi.kubevirt.io/v1beta1", Kind: "DataVolume"}, ObjectMeta: metav1.ObjectMeta{Name: "w"}},
		},
		"StatusOfTheWrongShapeIsAnError": {
			reason:  "A malformed object is reported, never panicked on.",
			obj:     map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": map[string]any{"name": "w", "namespace": "t"}, "status": "broken"},
			wantErr: `cannot read DataVolume "t/w": status is not an object`,
		},
		"PhaseOfTheWrongTypeIsAnError": {
			reason:  "A phase that is not a string is named by its path.",
			obj:     map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": map[string]any{"name": "w", "namespace": "t"}, "status": map[string]any{"phase": int64(3)}},
			wantErr: `cannot read DataVolume "t/w": status.phase is not a string`,
		},
		"RestartCountOfTheWrongTypeIsAnError": {
			reason:  "A restart count that is no 32-bit integer is named by its path.",
			obj:     map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": map[string]any{"name": "w", "namespace": "t"}, "status": map[string]any{"restartCount": 1.5}},
			wantErr: `cannot read DataVolume "t/w": status.restartCount is not a 32-bit integer`,
		},
		"ConditionOfTheWrongShapeIsAnError": {
			reason:  "A condition that is not an object is named by its index.",
			obj:     map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": map[string]any{"name": "w", "namespace": "t"}, "status": map[string]any{"conditions": []any{"x"}}},
			wantErr: `cannot read DataVolume "t/w": status.conditions[0] is not an object`,
		},
		"LabelOfTheWrongTypeIsAnError": {
			reason:  "A label value that is not a string is refused, as the API server would never send it.",
			obj:     map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": map[string]any{"name": "w", "namespace": "t", "labels": map[string]any{"a": int64(1)}}},
			wantErr: `cannot read DataVolume "t/w": metadata.labels: a is not a string`,
		},
		"OtherKindIsRefused": {
			reason:  "A misrouted object never passes as a DataVolume.",
			obj:     map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": map[string]any{"name": "w", "namespace": "t"}},
			wantErr: `PersistentVolumeClaim "t/w" is a v1 PersistentVolumeClaim, not a cdi.kubevirt.io/v1beta1 DataVolume`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkWire(t, tc.reason, tc.obj, func(s *structpb.Struct) (cdiv1.DataVolume, error) {
				return WorkerDataVolume(s, "cdi.kubevirt.io/cloneType")
			}, tc.want, tc.wantErr)
		})
	}
}

// checkWire reads obj's wire form with read and compares the result, or the
// error, with what the case wants.
func checkWire[T any](t *testing.T, reason string, obj map[string]any, read func(*structpb.Struct) (T, error), want T, wantErr string) {
	t.Helper()
	s, err := structpb.NewStruct(obj)
	if err != nil {
		t.Fatal(err)
	}
	got, err := read(s)
	gotErr := ""
	if err != nil {
		gotErr = err.Error()
	}
	if diff := cmp.Diff(wantErr, gotErr); diff != "" {
		t.Fatalf("%s\n-want error, +got error:\n%s", reason, diff)
	}
	if diff := cmp.Diff(want, got); err == nil && diff != "" {
		t.Errorf("%s\n-want, +got:\n%s", reason, diff)
	}
}

func TestVolumeSnapshotClass(t *testing.T) {
	vsc := func(driver any, ann map[string]any) map[string]any {
		md := map[string]any{"name": "linstor"}
		if ann != nil {
			md["annotations"] = ann
		}
		obj := map[string]any{"apiVersion": "snapshot.storage.k8s.io/v1", "kind": "VolumeSnapshotClass", "metadata": md, "deletionPolicy": "Delete"}
		if driver != nil {
			obj["driver"] = driver
		}
		return obj
	}
	cases := map[string]struct {
		reason  string
		obj     map[string]any
		want    cloneplan.VolumeSnapshotClass
		wantErr string
	}{
		"NameDriverAndDefault": {
			reason: "CDI picks a driver's default-annotated class first (common/util.go GetVolumeSnapshotClass).",
			obj:    vsc("linstor.csi.linbit.com", map[string]any{"snapshot.storage.kubernetes.io/is-default-class": "true"}),
			want:   cloneplan.VolumeSnapshotClass{Name: "linstor", Driver: "linstor.csi.linbit.com", Default: true},
		},
		"OnlyTrueIsDefault": {
			reason: "CDI compares the annotation with \"true\".",
			obj:    vsc("linstor.csi.linbit.com", map[string]any{"snapshot.storage.kubernetes.io/is-default-class": "yes"}),
			want:   cloneplan.VolumeSnapshotClass{Name: "linstor", Driver: "linstor.csi.linbit.com"},
		},
		"MissingDriverIsAnError": {
			reason:  "A class without a driver matches nothing; reading it as one would hide a malformed object.",
			obj:     vsc(nil, nil),
			wantErr: `cannot read VolumeSnapshotClass "linstor": driver is <nil> <nil>, not a driver name`,
		},
		"DriverOfTheWrongTypeIsAnError": {
			reason:  "A malformed object is reported, never panicked on.",
			obj:     vsc(int64(3), nil),
			wantErr: `cannot read VolumeSnapshotClass "linstor": driver is int64 3, not a driver name`,
		},
		"OtherKindIsRefused": {
			reason:  "A misrouted object never passes as a VolumeSnapshotClass.",
			obj:     map[string]any{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": map[string]any{"name": "linstor"}},
			wantErr: `StorageClass "linstor" is a storage.k8s.io/v1 StorageClass, not a snapshot.storage.k8s.io/v1 VolumeSnapshotClass`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := VolumeSnapshotClass(&unstructured.Unstructured{Object: tc.obj})
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Fatalf("%s\n-want error, +got error:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestStorageProfile(t *testing.T) {
	got, err := StorageProfile(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "StorageProfile",
		"metadata": map[string]any{"name": "replicated", "annotations": map[string]any{"cdi.kubevirt.io/minimumSupportedPvcSize": "1Gi"}},
		"spec":     map[string]any{},
		"status": map[string]any{"cloneStrategy": "csi-clone", "snapshotClass": "linstor",
			"claimPropertySets": []any{map[string]any{"accessModes": []any{"ReadWriteMany"}, "volumeMode": "Block"}}}}})
	csi, snap, mode := cdiv1.CloneStrategyCsiClone, "linstor", corev1.PersistentVolumeBlock
	want := &cdiv1.StorageProfile{
		TypeMeta:   metav1.TypeMeta{APIVersion: "cdi.kubevirt.io/v1beta1", Kind: "StorageProfile"},
		ObjectMeta: metav1.ObjectMeta{Name: "replicated", Annotations: map[string]string{"cdi.kubevirt.io/minimumSupportedPvcSize": "1Gi"}},
		Status: cdiv1.StorageProfileStatus{CloneStrategy: &csi, SnapshotClass: &snap,
			ClaimPropertySets: []cdiv1.ClaimPropertySet{{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, VolumeMode: &mode}}},
	}
	if diff := cmp.Diff(want, got); err != nil || diff != "" {
		t.Errorf("what the clone planner reads of a StorageProfile is converted (err %v)\n-want, +got:\n%s", err, diff)
	}
	if _, err := StorageProfile(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "StorageProfile",
		"metadata": map[string]any{"name": "replicated"}, "status": map[string]any{"claimPropertySets": "broken"}}}); err == nil {
		t.Error("a malformed StorageProfile must be reported")
	}
}

func TestCDIAndCDIConfig(t *testing.T) {
	cr, err := CDI(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "CDI",
		"metadata": map[string]any{"name": "cdi"}, "spec": map[string]any{"cloneStrategyOverride": "copy"}}})
	if err != nil || cr.Spec.CloneStrategyOverride == nil || *cr.Spec.CloneStrategyOverride != cdiv1.CloneStrategyHostAssisted {
		t.Errorf("the CDI resource's cloneStrategyOverride is read, got %v (err %v)", cr, err)
	}
	cfg, err := CDIConfig(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "CDIConfig",
		"metadata": map[string]any{"name": "config"}, "status": map[string]any{"filesystemOverhead": map[string]any{"global": "0.06", "storageClass": map[string]any{"local": "0.1"}}}}})
	if err != nil || cfg.Status.FilesystemOverhead == nil || cfg.Status.FilesystemOverhead.StorageClass["local"] != "0.1" {
		t.Errorf("CDIConfig's filesystem overhead is read, got %v (err %v)", cfg, err)
	}
}

func TestWorkerPVC(t *testing.T) {
	class := "replicated"
	cases := map[string]struct {
		reason  string
		obj     map[string]any
		want    corev1.PersistentVolumeClaim
		wantErr string
	}{
		"IdentityLabelsAndClass": {
			reason: "What the class of a finished clone is read from; annotations and status are not read.",
			obj: map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
				"metadata": map[string]any{"name": "w", "namespace": "t", "labels": map[string]any{"a": "b"}, "annotations": map[string]any{"cdi.kubevirt.io/cloneType": "copy"}},
				"spec":     map[string]any{"storageClassName": class, "volumeName": "pv"},
				"status":   map[string]any{"phase": "Bound"}},
			want: corev1.PersistentVolumeClaim{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
				ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "t", Labels: map[string]string{"a": "b"}},
				Spec:       corev1.PersistentVolumeClaimSpec{StorageClassName: &class},
			},
		},
		"NoClass": {
			reason: "A claim that names no class has none.",
			obj:    map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": map[string]any{"name": "w", "namespace": "t"}, "spec": map[string]any{}},
			want:   corev1.PersistentVolumeClaim{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"}, ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "t"}},
		},
		"ClassOfTheWrongTypeIsAnError": {
			reason:  "A class that is not a string is named by its path.",
			obj:     map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": map[string]any{"name": "w", "namespace": "t"}, "spec": map[string]any{"storageClassName": true}},
			wantErr: `cannot read PersistentVolumeClaim "t/w": spec.storageClassName is not a string`,
		},
		"OtherKindIsRefused": {
			reason:  "A misrouted object never passes as a claim.",
			obj:     map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": map[string]any{"name": "w", "namespace": "t"}},
			wantErr: `DataVolume "t/w" is a cdi.kubevirt.io/v1beta1 DataVolume, not a v1 PersistentVolumeClaim`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { checkWire(t, tc.reason, tc.obj, WorkerPVC, tc.want, tc.wantErr) })
	}
}

func TestCloneClaim(t *testing.T) {
	class := "replicated"
	created := metav1.NewTime(time.Date(2025, time.March, 1, 10, 0, 0, 0, time.UTC))
	deleted := metav1.NewTime(time.Date(2025, time.March, 1, 10, 5, 0, 0, time.UTC))
	claim := func(meta, status map[string]any) map[string]any {
		meta["name"], meta["namespace"] = "tmp-pvc-1", "cozy-public"
		obj := map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": map[string]any{"storageClassName": class, "volumeName": "pv"}}
		if status != nil {
			obj["status"] = status
		}
		return obj
	}
	meta := metav1.ObjectMeta{Name: "tmp-pvc-1", Namespace: "cozy-public"}
	typeMeta := metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"}
	cases := map[string]struct {
		reason  string
		obj     map[string]any
		want    corev1.PersistentVolumeClaim
		wantErr string
	}{
		"TimestampsAndPhase": {
			reason: "What tells a clone that runs from a claim CDI left behind: when it was made, when it was deleted, its phase.",
			obj: claim(map[string]any{"creationTimestamp": "2025-03-01T10:00:00Z", "deletionTimestamp": "2025-03-01T10:05:00Z", "labels": map[string]any{"a": "b"}},
				map[string]any{"phase": "Lost"}),
			want: corev1.PersistentVolumeClaim{TypeMeta: typeMeta,
				ObjectMeta: metav1.ObjectMeta{Name: meta.Name, Namespace: meta.Namespace, Labels: map[string]string{"a": "b"}, CreationTimestamp: created, DeletionTimestamp: &deleted},
				Spec:       corev1.PersistentVolumeClaimSpec{StorageClassName: &class}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimLost}},
		},
		"NoTimestampsNoStatus": {
			reason: "A claim that says neither when it was made nor its phase reads as such: zero times, no phase.",
			obj:    claim(map[string]any{}, nil),
			want:   corev1.PersistentVolumeClaim{TypeMeta: typeMeta, ObjectMeta: meta, Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &class}},
		},
		"MalformedTimestampIsAnError": {
			reason:  "A time that is not RFC 3339 is named with its field, not taken for zero.",
			obj:     claim(map[string]any{"creationTimestamp": "yesterday"}, nil),
			wantErr: `cannot read PersistentVolumeClaim "cozy-public/tmp-pvc-1": metadata.creationTimestamp "yesterday" is not an RFC 3339 time`,
		},
		"PhaseOfTheWrongTypeIsAnError": {
			reason:  "A phase that is not a string is named by its path.",
			obj:     claim(map[string]any{}, map[string]any{"phase": 3.0}),
			wantErr: `cannot read PersistentVolumeClaim "cozy-public/tmp-pvc-1": status.phase is not a string`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { checkWire(t, tc.reason, tc.obj, CloneClaim, tc.want, tc.wantErr) })
	}
}
