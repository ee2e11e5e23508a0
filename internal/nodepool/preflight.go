package nodepool

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/internal/cloneplan"
)

// Reasons the clone pre-flight holds a new template.
const (
	// ReasonHostAssistedCopy: CDI would copy every worker disk over the pod
	// network instead of a CSI clone or a snapshot.
	ReasonHostAssistedCopy = "HostAssistedCopy"
	// ReasonCloneWouldFail: CDI would refuse the worker disks outright.
	ReasonCloneWouldFail = "CloneWouldFail"
)

// cloneTarget is what the pre-flight reads of the cluster: the classes, CDI's
// StorageProfiles of them, the VolumeSnapshotClasses, the CDI resource's
// clone strategy override and CDIConfig's filesystem overhead.
type cloneTarget struct {
	Profiles        []cdiv1.StorageProfile
	SnapshotClasses []cloneplan.VolumeSnapshotClass
	Override        *cdiv1.CDICloneStrategy
	Overhead        *cdiv1.FilesystemOverhead
}

// predictClone is what CDI's clone planner will do with a worker disk of
// this pool: its DataVolume template clones the golden's PVC into diskSize
// on class (empty: CDI's default, already resolved by the caller), with no
// volume or access mode of its own (render.go), so CDI takes them from the
// class's StorageProfile.
func predictClone(img image, class string, diskSize resource.Quantity, w world) cloneplan.Plan {
	in := cloneplan.Input{
		SourceName:            img.GoldenNamespace + "/" + img.GoldenName,
		CloneStrategyOverride: w.Clone.Override,
		SnapshotClasses:       w.Clone.SnapshotClasses,
	}
	size := diskSize.DeepCopy()
	in.Target = cloneplan.Target{
		StorageClassName:   class,
		StorageClass:       findClass(w.StorageClasses, class),
		Profile:            findProfile(w.Clone.Profiles, class),
		Size:               &size,
		FilesystemOverhead: overheadFor(w.Clone.Overhead, class),
	}
	if pvc := w.GoldenPVC; pvc != nil {
		src := &cloneplan.Source{Name: pvc.Namespace + "/" + pvc.Name, VolumeMode: pvc.Spec.VolumeMode}
		if sc := pvc.Spec.StorageClassName; sc != nil {
			src.StorageClass = findClass(w.StorageClasses, *sc)
			src.Profile = findProfile(w.Clone.Profiles, *sc)
		}
		if q, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
			src.Request = &q
		}
		if q, ok := pvc.Status.Capacity[corev1.ResourceStorage]; ok {
			src.Capacity = &q
		}
		in.Source = src
	}
	return cloneplan.Predict(in)
}

// gateOnClonePlan holds a new clone template when CDI would not clone the
// worker disks on the storage layer: a host-assisted copy streams the whole
// image through the pod network per worker, which is what the golden exists
// to avoid, and CDI falls back to it silently (clone/planner.go
// computeStrategyForSourcePVC, validateAdvancedClonePVC). A platform that
// accepts the copy on purpose sets clonePreflight.allowHostAssistedCopy. A
// clone CDI would refuse outright is held too; what CDI only waits for (a
// StorageProfile it has not created yet, a source not bound yet) is not.
func gateOnClonePlan(p pool, img image, class string, plan cloneplan.Plan, allowCopy bool) *hold {
	golden := img.GoldenNamespace + "/" + img.GoldenName
	fixes := strings.Join(plan.Fixes, "; or ")
	switch {
	case plan.Blocked != nil && !plan.Blocked.Waits:
		return &hold{Reason: ReasonCloneWouldFail, Message: fmt.Sprintf(
			"Node pool %q: CDI would refuse every worker disk cloned from golden image %q on StorageClass %q (%s: %s), so the new worker template is held back. To fix it, %s.",
			p.Ref(), golden, classText(class), plan.Blocked.Reason, plan.Blocked.Message, orDefault(fixes, "check the StorageClass and its CDI StorageProfile"))}
	case plan.HostAssisted() && !allowCopy:
		why := "because " + plan.Via + " is copy"
		if plan.Fallback != nil {
			why = fmt.Sprintf("because its clone planner would fall back (%s: %q)", plan.Fallback.Reason, plan.Fallback.Message)
		}
		return &hold{Reason: ReasonHostAssistedCopy, Message: fmt.Sprintf(
			"Node pool %q: CDI would clone each worker disk from golden image %q on StorageClass %q as a host-assisted copy over the pod network, %s, so the new worker template is held back. To get a CSI clone or a snapshot, %s; or set diskSize to the golden's size; or, to accept the copies, set the Input's clonePreflight.allowHostAssistedCopy to true.",
			p.Ref(), golden, classText(class), why, orDefault(fixes, "set the StorageProfile's spec.cloneStrategy"))}
	}
	return nil
}

func classText(class string) string {
	if class == "" {
		return "<none>"
	}
	return class
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func findClass(classes []storagev1.StorageClass, name string) *storagev1.StorageClass {
	for i := range classes {
		if classes[i].Name == name {
			return &classes[i]
		}
	}
	return nil
}

// findProfile is CDI's StorageProfile of a class: it has the class's name.
func findProfile(profiles []cdiv1.StorageProfile, class string) *cdiv1.StorageProfile {
	for i := range profiles {
		if profiles[i].Name == class {
			return &profiles[i]
		}
	}
	return nil
}

// overheadFor is CDIConfig status.filesystemOverhead for a class: its own
// entry, else the global one; empty lets cloneplan use CDI's default.
func overheadFor(o *cdiv1.FilesystemOverhead, class string) cdiv1.Percent {
	if o == nil {
		return ""
	}
	if v, ok := o.StorageClass[class]; ok {
		return v
	}
	return o.Global
}
