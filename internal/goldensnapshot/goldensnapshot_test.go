package goldensnapshot

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
)

func ptr[T any](v T) *T { return &v }

// sixGi is a restore size of 6Gi, a new copy each time.
func sixGi() *resource.Quantity {
	q := resource.MustParse("6Gi")
	return &q
}

// golden is the catalog's default golden (internal/defaults); its label hash
// is the one the catalog's render scenarios show.
const (
	goldenNS   = "cozy-public"
	goldenName = "talos-worker-ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515-v1.13.6"
	goldenHash = "7bcb1fa3c7cfb346"
	schematic  = "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"
)

// profile is CDI's StorageProfile of class replicated with the given
// status.dataImportCronSourceFormat, status.snapshotClass and annotation.
func profile(format *cdiv1.DataImportCronSourceFormat, statusClass *string, annotation string) *cdiv1.StorageProfile {
	p := &cdiv1.StorageProfile{
		ObjectMeta: metav1.ObjectMeta{Name: "replicated"},
		Status:     cdiv1.StorageProfileStatus{DataImportCronSourceFormat: format, SnapshotClass: statusClass},
	}
	if annotation != "" {
		p.Annotations = map[string]string{AnnSnapshotClassForDataImportCron: annotation}
	}
	return p
}

func TestPreferred(t *testing.T) {
	snapshot, pvc := ptr(cdiv1.DataImportCronSourceFormatSnapshot), ptr(cdiv1.DataImportCronSourceFormatPvc)
	cases := map[string]struct {
		reason  string
		class   string
		profile *cdiv1.StorageProfile
		want    Preference
	}{
		"NoClassKnown": {
			reason:  "A golden that names no class on a cluster without a default class has no profile to follow.",
			class:   "",
			profile: profile(snapshot, ptr("linstor-snapshots"), ""),
			want:    Preference{Why: "the golden's StorageClass is not known (no class named and no default class)"},
		},
		"NoProfile": {
			reason: "CDI creates a class's StorageProfile shortly after the class; until then the golden stays a PVC only.",
			class:  "replicated",
			want:   Preference{Why: "StorageClass replicated has no CDI StorageProfile (yet)"},
		},
		"FormatPVC": {
			reason:  "A profile that keeps boot sources as PVCs is followed, even naming a VolumeSnapshotClass.",
			class:   "replicated",
			profile: profile(pvc, ptr("linstor-snapshots"), ""),
			want:    Preference{Why: "StorageProfile replicated status.dataImportCronSourceFormat is pvc"},
		},
		"FormatUnset": {
			reason:  "CDI has not reconciled the profile's source format yet: PVC, as CDI's getSourceFormat reads it.",
			class:   "replicated",
			profile: profile(nil, ptr("linstor-snapshots"), ""),
			want:    Preference{Why: "StorageProfile replicated status.dataImportCronSourceFormat is unset"},
		},
		"SnapshotWithTheAnnotation": {
			reason:  "getSnapshotClassForDataImportCron: the annotation wins over status.snapshotClass.",
			class:   "replicated",
			profile: profile(snapshot, ptr("linstor-default"), "linstor-boot-sources"),
			want:    Preference{Snapshot: true, SnapshotClass: "linstor-boot-sources", Why: "StorageProfile replicated status.dataImportCronSourceFormat is snapshot, VolumeSnapshotClass linstor-boot-sources"},
		},
		"SnapshotWithTheAnnotationAlone": {
			reason:  "The annotation is enough without status.snapshotClass.",
			class:   "replicated",
			profile: profile(snapshot, nil, "linstor-boot-sources"),
			want:    Preference{Snapshot: true, SnapshotClass: "linstor-boot-sources", Why: "StorageProfile replicated status.dataImportCronSourceFormat is snapshot, VolumeSnapshotClass linstor-boot-sources"},
		},
		"SnapshotWithStatusSnapshotClass": {
			reason:  "Without the annotation, the class CDI resolved for the profile.",
			class:   "replicated",
			profile: profile(snapshot, ptr("linstor-snapshots"), ""),
			want:    Preference{Snapshot: true, SnapshotClass: "linstor-snapshots", Why: "StorageProfile replicated status.dataImportCronSourceFormat is snapshot, VolumeSnapshotClass linstor-snapshots"},
		},
		"SnapshotNamingNoClass": {
			reason:  "A snapshot preference without a VolumeSnapshotClass cannot be taken (and CDI writes snapshot only with one): not followed.",
			class:   "replicated",
			profile: profile(snapshot, nil, ""),
			want:    Preference{Why: "StorageProfile replicated status.dataImportCronSourceFormat is snapshot but it names no VolumeSnapshotClass (status.snapshotClass, or the cdi.kubevirt.io/snapshotClassForDataImportCron annotation)"},
		},
		"SnapshotNamingAnEmptyClass": {
			reason:  "An empty status.snapshotClass names none.",
			class:   "replicated",
			profile: profile(snapshot, ptr(""), ""),
			want:    Preference{Why: "StorageProfile replicated status.dataImportCronSourceFormat is snapshot but it names no VolumeSnapshotClass (status.snapshotClass, or the cdi.kubevirt.io/snapshotClassForDataImportCron annotation)"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Preferred(tc.class, tc.profile)); diff != "" {
				t.Errorf("%s\nPreferred(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestDesired(t *testing.T) {
	cases := map[string]struct {
		reason string
		golden Golden
		want   *snapshotv1.VolumeSnapshot
	}{
		"SnapshotOfTheGoldensClaim": {
			reason: "Named, labelled and annotated as the golden, a dynamic snapshot of the golden's PVC (named as the golden) with the class always set.",
			golden: Golden{Namespace: goldenNS, Name: goldenName, SnapshotClass: "linstor-snapshots", SchematicID: schematic, Version: "v1.13.6"},
			want: &snapshotv1.VolumeSnapshot{
				TypeMeta: metav1.TypeMeta{APIVersion: "snapshot.storage.k8s.io/v1", Kind: "VolumeSnapshot"},
				ObjectMeta: metav1.ObjectMeta{
					Name:      goldenName,
					Namespace: goldenNS,
					Labels: map[string]string{
						"workerimage.cozystack.io/golden": goldenHash,
						"app.kubernetes.io/managed-by":    "function-worker-image",
					},
					Annotations: map[string]string{
						"workerimage.cozystack.io/golden":        goldenNS + "/" + goldenName,
						"workerimage.cozystack.io/schematic-id":  schematic,
						"workerimage.cozystack.io/talos-version": "v1.13.6",
					},
				},
				Spec: snapshotv1.VolumeSnapshotSpec{
					Source:                  snapshotv1.VolumeSnapshotSource{PersistentVolumeClaimName: ptr(goldenName)},
					VolumeSnapshotClassName: ptr("linstor-snapshots"),
				},
			},
		},
		"ClaimAsTaken": {
			reason: "An observed snapshot is repeated with the claim it was taken of; without what the golden holds, no annotation of it.",
			golden: Golden{Namespace: goldenNS, Name: goldenName, Claim: "older-claim", SnapshotClass: "linstor-snapshots"},
			want: &snapshotv1.VolumeSnapshot{
				TypeMeta: metav1.TypeMeta{APIVersion: "snapshot.storage.k8s.io/v1", Kind: "VolumeSnapshot"},
				ObjectMeta: metav1.ObjectMeta{
					Name:      goldenName,
					Namespace: goldenNS,
					Labels: map[string]string{
						"workerimage.cozystack.io/golden": goldenHash,
						"app.kubernetes.io/managed-by":    "function-worker-image",
					},
					Annotations: map[string]string{"workerimage.cozystack.io/golden": goldenNS + "/" + goldenName},
				},
				Spec: snapshotv1.VolumeSnapshotSpec{
					Source:                  snapshotv1.VolumeSnapshotSource{PersistentVolumeClaimName: ptr("older-claim")},
					VolumeSnapshotClassName: ptr("linstor-snapshots"),
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Desired(tc.golden)); diff != "" {
				t.Errorf("%s\nDesired(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// taken is the golden's snapshot with the given status.
func taken(st *snapshotv1.VolumeSnapshotStatus) *snapshotv1.VolumeSnapshot {
	return &snapshotv1.VolumeSnapshot{
		ObjectMeta: metav1.ObjectMeta{Name: goldenName, Namespace: goldenNS},
		Spec: snapshotv1.VolumeSnapshotSpec{
			Source:                  snapshotv1.VolumeSnapshotSource{PersistentVolumeClaimName: ptr(goldenName)},
			VolumeSnapshotClassName: ptr("linstor-snapshots"),
		},
		Status: st,
	}
}

func TestStateOf(t *testing.T) {
	const content = "snapcontent-0b1c"
	deleting := taken(&snapshotv1.VolumeSnapshotStatus{BoundVolumeSnapshotContentName: ptr(content), ReadyToUse: ptr(true), RestoreSize: sixGi()})
	deleting.DeletionTimestamp = &metav1.Time{}
	cases := map[string]struct {
		reason string
		vs     *snapshotv1.VolumeSnapshot
		want   State
	}{
		"Missing": {
			reason: "No VolumeSnapshot.",
			want:   State{Kind: Missing},
		},
		"NoStatusIsPending": {
			reason: "Just created: the snapshot controller has not written a status yet.",
			vs:     taken(nil),
			want:   State{Kind: Pending},
		},
		"UnboundIsPending": {
			reason: "A status without a bound content.",
			vs:     taken(&snapshotv1.VolumeSnapshotStatus{ReadyToUse: ptr(false)}),
			want:   State{Kind: Pending},
		},
		"BoundNotReadyIsPending": {
			reason: "Bound, the driver still cutting it: the content and size are reported as they are.",
			vs:     taken(&snapshotv1.VolumeSnapshotStatus{BoundVolumeSnapshotContentName: ptr(content), ReadyToUse: ptr(false), RestoreSize: sixGi()}),
			want:   State{Kind: Pending, Content: content, RestoreSize: sixGi()},
		},
		"ReadyWithoutContentIsPending": {
			reason: "readyToUse before the snapshot names its content: CDI cannot find the driver yet (GetSnapshotContentFromSnapshot).",
			vs:     taken(&snapshotv1.VolumeSnapshotStatus{ReadyToUse: ptr(true), RestoreSize: sixGi()}),
			want:   State{Kind: Pending, RestoreSize: sixGi()},
		},
		"ReadyWithoutRestoreSizeIsPending": {
			reason: "readyToUse without a restoreSize: CDI refuses to size a clone from it (validateSnapshotClone).",
			vs:     taken(&snapshotv1.VolumeSnapshotStatus{BoundVolumeSnapshotContentName: ptr(content), ReadyToUse: ptr(true)}),
			want:   State{Kind: Pending, Content: content},
		},
		"Ready": {
			reason: "readyToUse, bound, sized.",
			vs:     taken(&snapshotv1.VolumeSnapshotStatus{BoundVolumeSnapshotContentName: ptr(content), ReadyToUse: ptr(true), RestoreSize: sixGi()}),
			want:   State{Kind: Ready, Content: content, RestoreSize: sixGi()},
		},
		"ErrorIsFailedWithItsMessage": {
			reason: "status.error: CDI refuses to clone from it (IsSnapshotValidForClone).",
			vs:     taken(&snapshotv1.VolumeSnapshotStatus{BoundVolumeSnapshotContentName: ptr(content), ReadyToUse: ptr(false), Error: &snapshotv1.VolumeSnapshotError{Message: ptr("rpc error: code = Internal desc = out of space")}}),
			want:   State{Kind: Failed, Content: content, Message: "rpc error: code = Internal desc = out of space"},
		},
		"ErrorWinsOverReadyToUse": {
			reason: "An error with readyToUse still true (the controller clears the error only later) is Failed.",
			vs:     taken(&snapshotv1.VolumeSnapshotStatus{BoundVolumeSnapshotContentName: ptr(content), ReadyToUse: ptr(true), RestoreSize: sixGi(), Error: &snapshotv1.VolumeSnapshotError{Message: ptr("timed out")}}),
			want:   State{Kind: Failed, Content: content, RestoreSize: sixGi(), Message: "timed out"},
		},
		"ErrorWithoutMessageSaysNoDetails": {
			reason: "An error without a message says so, as CDI does.",
			vs:     taken(&snapshotv1.VolumeSnapshotStatus{Error: &snapshotv1.VolumeSnapshotError{}}),
			want:   State{Kind: Failed, Message: "no details"},
		},
		"ErrorWithEmptyMessageSaysNoDetails": {
			reason: "An empty message is no message.",
			vs:     taken(&snapshotv1.VolumeSnapshotStatus{Error: &snapshotv1.VolumeSnapshotError{Message: ptr("")}}),
			want:   State{Kind: Failed, Message: "no details"},
		},
		"DeletionTimestampIsDeleting": {
			reason: "Being deleted, whatever its status says.",
			vs:     deleting,
			want:   State{Kind: Deleting},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := StateOf(tc.vs)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nStateOf(): -want, +got:\n%s", tc.reason, diff)
			}
			if got.Ready() != (tc.want.Kind == Ready) {
				t.Errorf("%s\nReady() = %v for %s", tc.reason, got.Ready(), got.Kind)
			}
		})
	}
}

func TestStateOfCopiesTheRestoreSize(t *testing.T) {
	vs := taken(&snapshotv1.VolumeSnapshotStatus{BoundVolumeSnapshotContentName: ptr("c"), ReadyToUse: ptr(true), RestoreSize: sixGi()})
	got := StateOf(vs)
	vs.Status.RestoreSize.Set(1)
	if got.RestoreSize.String() != "6Gi" {
		t.Errorf("StateOf() shares the snapshot's restoreSize: got %s after the snapshot changed", got.RestoreSize)
	}
}

func TestDescribe(t *testing.T) {
	const ref = goldenNS + "/talos"
	cases := map[string]struct {
		state State
		want  string
	}{
		"Missing":           {State{Kind: Missing}, "VolumeSnapshot cozy-public/talos does not exist yet"},
		"Deleting":          {State{Kind: Deleting, Content: "c"}, "VolumeSnapshot cozy-public/talos is being deleted"},
		"Failed":            {State{Kind: Failed, Message: "out of space"}, `VolumeSnapshot cozy-public/talos reports status.error "out of space"`},
		"PendingUnbound":    {State{Kind: Pending}, "VolumeSnapshot cozy-public/talos is not bound to a VolumeSnapshotContent yet"},
		"PendingBound":      {State{Kind: Pending, Content: "snapcontent-0b1c"}, "VolumeSnapshot cozy-public/talos (content snapcontent-0b1c) is not readyToUse yet"},
		"Ready":             {State{Kind: Ready, Content: "snapcontent-0b1c", RestoreSize: sixGi()}, "VolumeSnapshot cozy-public/talos is readyToUse (content snapcontent-0b1c, restoreSize 6Gi)"},
		"ReadyWithoutASize": {State{Kind: Ready, Content: "snapcontent-0b1c"}, "VolumeSnapshot cozy-public/talos is readyToUse (content snapcontent-0b1c)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.state.Describe(ref)); diff != "" {
				t.Errorf("Describe(): -want, +got:\n%s", diff)
			}
		})
	}
}

func TestSource(t *testing.T) {
	src := Source(goldenNS, goldenName)
	want := &cdiv1.DataVolumeSource{Snapshot: &cdiv1.DataVolumeSourceSnapshot{Namespace: goldenNS, Name: goldenName}}
	if diff := cmp.Diff(want, src); diff != "" {
		t.Errorf("Source(): -want, +got:\n%s", diff)
	}
}
