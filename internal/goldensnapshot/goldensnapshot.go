// Package goldensnapshot is the one definition of a snapshot golden: when a
// golden is kept as a VolumeSnapshot too, what that VolumeSnapshot is, and
// what state it is in. The catalog composes it; a node pool clones from it.
//
// Each PVC-to-PVC clone takes a snapshot of its source on some drivers
// (ceph-csi RBD: a temporary snapshot of the image per clone, flattening
// from 250 and refusing from 450 snapshots on one image, ceph/ceph-csi
// #1195, #1678), while a VolumeSnapshot source is one snapshot and N
// restores (CDI doc/clone-from-volumesnapshot-source.md). CDI keeps its own
// boot sources as snapshots exactly where the StorageProfile says so, and
// so does the function:
//   - CDI v1.65.0 pkg/controller/storageprofile-controller.go
//     reconcileDataImportCronSourceFormat sets
//     status.dataImportCronSourceFormat from spec, else from the
//     provisioners it knows (pkg/storagecapabilities
//     GetAdvisedSourceFormat: Ceph RBD, ONTAP, GCE PD), and back to pvc
//     when the class has no VolumeSnapshotClass;
//   - pkg/controller/dataimportcron-controller.go handleSnapshot takes the
//     snapshot of a finished import, named as its PVC, with the class of
//     getSnapshotClassForDataImportCron: the profile's
//     cdi.kubevirt.io/snapshotClassForDataImportCron annotation, else
//     status.snapshotClass.
package goldensnapshot

import (
	"fmt"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/internal/labels"
)

// Identity of the kind.
const (
	APIVersion = "snapshot.storage.k8s.io/v1"
	Kind       = "VolumeSnapshot"
	// ContentKind is the cluster-scoped object a VolumeSnapshot binds to.
	ContentKind = "VolumeSnapshotContent"
)

// AnnSnapshotClassForDataImportCron names, on a StorageProfile, the
// VolumeSnapshotClass CDI takes boot-source snapshots with (CDI v1.65.0
// pkg/controller/common/util.go AnnSnapshotClassForDataImportCron).
const AnnSnapshotClassForDataImportCron = "cdi.kubevirt.io/snapshotClassForDataImportCron"

// Preference is whether a class keeps golden sources as snapshots.
type Preference struct {
	// Snapshot is true when the class's StorageProfile prefers snapshot
	// sources and names a VolumeSnapshotClass to take them with.
	Snapshot bool
	// SnapshotClass is that VolumeSnapshotClass.
	SnapshotClass string
	// Why says, for messages, what the profile says.
	Why string
}

// Preferred reads a class's StorageProfile as CDI's DataImportCron does
// (getSourceFormat, getSnapshotClassForDataImportCron): snapshot when
// status.dataImportCronSourceFormat is snapshot and a VolumeSnapshotClass is
// named. CDI writes snapshot only while the class has a VolumeSnapshotClass,
// so a profile saying snapshot without one is not followed.
func Preferred(class string, p *cdiv1.StorageProfile) Preference {
	switch {
	case class == "":
		return Preference{Why: "the golden's StorageClass is not known (no class named and no default class)"}
	case p == nil:
		return Preference{Why: fmt.Sprintf("StorageClass %s has no CDI StorageProfile (yet)", class)}
	case p.Status.DataImportCronSourceFormat == nil || *p.Status.DataImportCronSourceFormat != cdiv1.DataImportCronSourceFormatSnapshot:
		format := "unset"
		if f := p.Status.DataImportCronSourceFormat; f != nil {
			format = string(*f)
		}
		return Preference{Why: fmt.Sprintf("StorageProfile %s status.dataImportCronSourceFormat is %s", class, format)}
	}
	vsc := p.Annotations[AnnSnapshotClassForDataImportCron]
	if vsc == "" && p.Status.SnapshotClass != nil {
		vsc = *p.Status.SnapshotClass
	}
	if vsc == "" {
		return Preference{Why: fmt.Sprintf("StorageProfile %s status.dataImportCronSourceFormat is snapshot but it names no VolumeSnapshotClass (status.snapshotClass, or the %s annotation)", class, AnnSnapshotClassForDataImportCron)}
	}
	return Preference{Snapshot: true, SnapshotClass: vsc, Why: fmt.Sprintf("StorageProfile %s status.dataImportCronSourceFormat is snapshot, VolumeSnapshotClass %s", class, vsc)}
}

// Golden is what a golden's snapshot is made of.
type Golden struct {
	Namespace string
	// Name is the golden's name: its DataVolume's, its PVC's (CDI names the
	// claim after the DataVolume) and its snapshot's. One name for all
	// three keeps the catalog's clone RBAC as it is: CDI authorizes a
	// snapshot source as create on datavolumes/source for the snapshot's
	// name in its namespace (containerized-data-importer-api
	// pkg/apis/core/v1beta1/authorize_utils.go
	// getExplicitResourceAttributeSnapshot), the rule the catalog's
	// ClusterRole grants by the golden's name.
	Name string
	// Claim is the golden's PVC; empty means Name.
	Claim string
	// SnapshotClass is the VolumeSnapshotClass to take it with.
	SnapshotClass string
	SchematicID   string
	Version       string
}

// Desired is the golden's VolumeSnapshot: a dynamic snapshot of its PVC,
// named and labelled as the golden, so that pools select it as they select
// the golden. spec.volumeSnapshotClassName is always set: CDI refuses to
// clone from a snapshot without it (common/util.go IsSnapshotValidForClone).
func Desired(g Golden) *snapshotv1.VolumeSnapshot {
	claim := g.Claim
	if claim == "" {
		claim = g.Name
	}
	class := g.SnapshotClass
	vs := &snapshotv1.VolumeSnapshot{
		TypeMeta: metav1.TypeMeta{APIVersion: APIVersion, Kind: Kind},
		ObjectMeta: metav1.ObjectMeta{
			Name:        g.Name,
			Namespace:   g.Namespace,
			Labels:      labels.OfGolden(g.Namespace, g.Name),
			Annotations: map[string]string{labels.AnnGolden: labels.GoldenRef(g.Namespace, g.Name)},
		},
		Spec: snapshotv1.VolumeSnapshotSpec{
			Source:                  snapshotv1.VolumeSnapshotSource{PersistentVolumeClaimName: &claim},
			VolumeSnapshotClassName: &class,
		},
	}
	if g.SchematicID != "" {
		vs.Annotations[labels.AnnSchematicID] = g.SchematicID
	}
	if g.Version != "" {
		vs.Annotations[labels.AnnTalosVersion] = g.Version
	}
	return vs
}

// Kind of a snapshot's state.
type StateKind string

// States of a golden's snapshot.
const (
	// Missing: no VolumeSnapshot (yet).
	Missing StateKind = "Missing"
	// Pending: created, not ready to use: the snapshot-controller has not
	// bound a content, or the driver has not cut the snapshot.
	Pending StateKind = "Pending"
	// Ready: readyToUse, bound to a content, with a restore size.
	Ready StateKind = "Ready"
	// Failed: status.error is set; the snapshotter retries, but CDI
	// refuses to clone from it meanwhile (IsSnapshotValidForClone).
	Failed StateKind = "Failed"
	// Deleting: being deleted.
	Deleting StateKind = "Deleting"
)

// State is a golden snapshot's state as the snapshot-controller reports it
// (external-snapshotter v8 pkg/common-controller/snapshot_controller.go
// updateSnapshotStatus: boundVolumeSnapshotContentName, readyToUse,
// restoreSize, creationTime and error, copied from the content's status).
type State struct {
	Kind StateKind
	// Message is the snapshot's status.error message, when Failed.
	Message string
	// RestoreSize is status.restoreSize, nil when not reported.
	RestoreSize *resource.Quantity
	// Content is status.boundVolumeSnapshotContentName.
	Content string
}

// StateOf reads a VolumeSnapshot; nil is Missing.
func StateOf(vs *snapshotv1.VolumeSnapshot) State {
	if vs == nil {
		return State{Kind: Missing}
	}
	if vs.DeletionTimestamp != nil {
		return State{Kind: Deleting}
	}
	st := vs.Status
	if st == nil {
		return State{Kind: Pending}
	}
	s := State{Kind: Pending}
	if st.RestoreSize != nil {
		q := st.RestoreSize.DeepCopy()
		s.RestoreSize = &q
	}
	if st.BoundVolumeSnapshotContentName != nil {
		s.Content = *st.BoundVolumeSnapshotContentName
	}
	switch {
	case st.Error != nil:
		s.Kind = Failed
		s.Message = "no details"
		if st.Error.Message != nil && *st.Error.Message != "" {
			s.Message = *st.Error.Message
		}
	case st.ReadyToUse != nil && *st.ReadyToUse && s.Content != "" && s.RestoreSize != nil:
		s.Kind = Ready
	}
	return s
}

// Ready reports whether worker disks may be restored from it.
func (s State) Ready() bool { return s.Kind == Ready }

// Describe says what the state is, for messages.
func (s State) Describe(ref string) string {
	switch s.Kind {
	case Missing:
		return fmt.Sprintf("VolumeSnapshot %s does not exist yet", ref)
	case Deleting:
		return fmt.Sprintf("VolumeSnapshot %s is being deleted", ref)
	case Failed:
		return fmt.Sprintf("VolumeSnapshot %s reports status.error %q", ref, s.Message)
	case Pending:
		if s.Content == "" {
			return fmt.Sprintf("VolumeSnapshot %s is not bound to a VolumeSnapshotContent yet", ref)
		}
		return fmt.Sprintf("VolumeSnapshot %s (content %s) is not readyToUse yet", ref, s.Content)
	}
	size := ""
	if s.RestoreSize != nil {
		size = ", restoreSize " + s.RestoreSize.String()
	}
	return fmt.Sprintf("VolumeSnapshot %s is readyToUse (content %s%s)", ref, s.Content, size)
}

// Source is the DataVolume source that restores from a golden's snapshot.
func Source(namespace, name string) *cdiv1.DataVolumeSource {
	return &cdiv1.DataVolumeSource{Snapshot: &cdiv1.DataVolumeSourceSnapshot{Namespace: namespace, Name: name}}
}
