package decide

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/internal/cloneplacement"
	"github.com/cozystack/function-worker-image/internal/cloneplan"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/storageclass"
)

// cloneTargetFor is a worker disk of diskSize on class as CDI renders it:
// its volume and access modes from the class's StorageProfile (render/render.go
// sets none).
func cloneTargetFor(class string, diskSize resource.Quantity, w read.Required) cloneplan.Target {
	size := diskSize.DeepCopy()
	return cloneplan.Target{
		StorageClassName:   class,
		StorageClass:       read.FindClass(w.StorageClasses, class),
		Profile:            read.FindProfile(w.Clone.Profiles, class),
		Size:               &size,
		FilesystemOverhead: overheadFor(w.Clone.Overhead, class),
	}
}

// PredictClone is what CDI's clone planner will do with a worker disk: a
// clone of the golden's PVC into diskSize on class, its volume and access
// modes from the class's StorageProfile (render/render.go sets none). The golden
// is read as CDI reads it: status.capacity (nil until bound), never its
// ask; its driver is its bound PV's (volumeDriver), else its class's.
func PredictClone(img pool.Image, class string, diskSize resource.Quantity, w read.Required) cloneplan.Plan {
	return cloneplan.Predict(cloneInput(img, class, diskSize, w))
}

// cloneInput is what predictClone predicts from.
func cloneInput(img pool.Image, class string, diskSize resource.Quantity, w read.Required) cloneplan.Input {
	in := cloneplan.Input{
		SourceName:            img.GoldenRef(),
		CloneStrategyOverride: w.Clone.Override,
		SnapshotClasses:       w.Clone.SnapshotClasses,
	}
	in.Target = cloneTargetFor(class, diskSize, w)
	if pvc := w.GoldenPVC; pvc != nil {
		src := &cloneplan.Source{Name: pvc.Namespace + "/" + pvc.Name, VolumeMode: pvc.Spec.VolumeMode, Phase: pvc.Status.Phase, VolumeName: pvc.Spec.VolumeName}
		src.CSIDriver, src.VolumeClaimedByOther = VolumeDriver(pvc, w.GoldenPV)
		if sc := pvc.Spec.StorageClassName; sc != nil {
			// A class that does not exist gives no profile either
			// (getSnapshotClassForClaim reads the class first).
			if src.StorageClass = read.FindClass(w.StorageClasses, *sc); src.StorageClass != nil {
				src.Profile = read.FindProfile(w.Clone.Profiles, *sc)
			}
		} else if def := storageclass.KubernetesDefault(w.StorageClasses); def.Name != "" {
			// A claim naming no class takes its snapshot class from the
			// default class's StorageProfile (getSnapshotClassForClaim).
			src.Profile = read.FindProfile(w.Clone.Profiles, def.Name)
		}
		if q, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
			src.Request = &q
		}
		if q, ok := pvc.Status.Capacity[corev1.ResourceStorage]; ok {
			src.Capacity = &q
		}
		in.Source = src
	}
	return in
}

// PreflightInput is what the pre-flight gate decides from besides the plan.
type PreflightInput struct {
	Pool  pool.Pool
	Image pool.Image
	// Class is the class the worker disks land on; empty for CDI's default.
	Class string
	// AllowCopy is the Input's clonePreflight.allowHostAssistedCopy.
	AllowCopy bool
	// CopyChosen: the pool is on the copy path (copy.go), whose template
	// asks for the copy the plan predicts.
	CopyChosen bool
	// GoldenWaived: gateOnGolden let a pool that already cloned through an
	// unready golden, so the golden's fate does not hold it here either.
	GoldenWaived bool
	// Recheck is the Input's polling.inProgress.
	Recheck time.Duration
	// Placement is where a clone the CSI driver makes of the golden lands.
	Placement cloneplacement.Placement
}

// PlacementOf is where the CSI driver puts a clone of the golden, from
// the golden's class and the class the worker disks land on.
func PlacementOf(goldenClass, class string, w read.Required) cloneplacement.Placement {
	var golden *storagev1.StorageClass
	if goldenClass != "" {
		golden = read.FindClass(w.StorageClasses, goldenClass)
	}
	return cloneplacement.Predict(golden, read.FindClass(w.StorageClasses, class))
}

// VolumeDriver is CDI v1.65.0 clone/common.go GetDriverFromVolume: the CSI
// driver of a claim's bound PV, none for a missing, unclaimed or non-CSI PV
// (CDI then uses the class); a PV claimed by another claim is CDI's error
// "pvc does not match volume claim ref". pv is nil when not read.
func VolumeDriver(pvc *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume) (driver string, claimedByOther bool) {
	if pv == nil || pvc.Spec.VolumeName == "" || pv.Name != pvc.Spec.VolumeName || pv.Spec.ClaimRef == nil {
		return "", false
	}
	if ref := pv.Spec.ClaimRef; ref.Namespace != pvc.Namespace || ref.Name != pvc.Name {
		return "", true
	}
	if pv.Spec.CSI == nil {
		return "", false
	}
	return pv.Spec.CSI.Driver, false
}

// GateOnClonePlan holds a new clone template that CDI would refuse, or
// would silently fall back to a host-assisted copy for, streaming the image
// over the pod network per worker (clone/planner.go
// computeStrategyForSourcePVC, validateAdvancedClonePVC), unless
// clonePreflight.allowHostAssistedCopy accepts the copy or the pool asked
// for it on the copy path (copy.go); and a CSI clone or
// snapshot restore on a class whose driver would make every disk on the
// golden's node (cloneplacement), which no setting accepts.
//
// A clone CDI cannot plan yet is held too: a composed template is never
// gated again, and CDI fixes the strategy in the claim's
// cdi.kubevirt.io/cloneType on its first success. CDI retries ("source/
// target size info missing" without status.capacity, a missing source, no
// StorageProfile: datavolume/util.go), so the hold clears by itself at the
// in-progress TTL, except for what the golden gate waived.
func GateOnClonePlan(in PreflightInput, plan cloneplan.Plan) *Hold {
	p, img, class := in.Pool, in.Image, in.Class
	golden := img.GoldenRef()
	fixes := strings.Join(plan.Fixes, "; or ")
	switch {
	case plan.Blocked != nil && plan.Blocked.Waits:
		if plan.Blocked.OnSource && in.GoldenWaived {
			return nil
		}
		return &Hold{Reason: ReasonClonePlanPending, Message: msgClonePlanPending(p, golden, class, *plan.Blocked, fixes, in.Recheck)}
	case plan.Blocked != nil:
		return &Hold{Reason: ReasonCloneWouldFail, Message: msgCloneWouldFail(p, golden, class, *plan.Blocked, fixes)}
	case plan.HostAssisted() && !in.AllowCopy && !in.CopyChosen:
		return &Hold{Reason: ReasonHostAssistedCopy, Message: msgHostAssistedCopy(p, golden, class, plan, fixes)}
	case !plan.HostAssisted() && in.Placement.OneNode:
		// The driver makes the clone: where its source is. A copy (let
		// through above) lands on its worker's node.
		return &Hold{Reason: ReasonNodeLocalClass, Message: msgNodeLocalClass(p, golden, plan, in.Placement)}
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
