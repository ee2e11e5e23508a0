// Package cloneplan predicts how CDI will clone a DataVolume from a source
// PVC (CSI clone, snapshot, or host-assisted copy over the pod network) and,
// for a copy, the cdi.kubevirt.io/cloneFallbackReason CDI records and what
// would avoid it. A fleet cloned from one golden by copies streams the whole
// image once per worker, the cost the golden exists to avoid, and CDI does it
// silently; the prediction says so before the first worker is created.
//
// It follows CDI v1.64.0-v1.66.0 (identical here): datavolume/util.go,
// pvc-clone-controller.go and controller-base.go for the PVC and clone
// checks; clone/planner.go computeStrategyForSourcePVC and
// validateAdvancedClonePVC, clone/common.go GetCommonDriver and
// GetDriverFromVolume, common/util.go GetVolumeSnapshotClass for the
// strategy; populators/clone-populator.go getCloneStrategy for a strategy
// the DataVolume asks for (Target.CloneType). docs/cdi-behaviour.md has the
// line ranges.
package cloneplan

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/internal/labels"
)

// Fallback reasons: the Warning event reason CDI emits on the target PVC when
// it falls back to a host-assisted copy (clone/planner.go constants;
// NoPopulator from datavolume/clone-controller-base.go).
const (
	ReasonNoVolumeSnapshotClass    = "NoVolumeSnapshotClass"
	ReasonIncompatibleProvisioners = "IncompatibleProvisioners"
	ReasonIncompatibleVolumeModes  = "IncompatibleVolumeModes"
	ReasonNoVolumeExpansion        = "NoVolumeExpansion"
	ReasonNoPopulator              = "NoPopulator"
)

// Fallback messages: what CDI writes into the target PVC's
// cdi.kubevirt.io/cloneFallbackReason annotation, verbatim.
const (
	MessageNoVolumeSnapshotClass    = "No compatible volumesnapshotclass found"
	MessageIncompatibleProvisioners = "Provisioners are incompatible"
	MessageIncompatibleVolumeModes  = "The volume modes of source and target are incompatible"
	MessageNoVolumeExpansion        = "No volume expansion is possible"
	MessageNoPopulator              = "In tree storage class does not support snapshot/clone"
)

// Reasons CDI gives when it picks no strategy at all.
const (
	// ReasonErrClaimNotValid: the target PVC cannot be built.
	ReasonErrClaimNotValid = "ErrClaimNotValid"
	// ReasonCloneWithoutSource: the source PVC does not exist; CDI waits.
	ReasonCloneWithoutSource = "CloneWithoutSource"
	// ReasonCloneValidationFailed: the DataVolume controller refuses the clone.
	ReasonCloneValidationFailed = "CloneValidationFailed"
	// ReasonError: the planner errored; CDI writes Running=False and retries.
	ReasonError = "Error"
)

// AnnDefaultSnapshotClass marks the default VolumeSnapshotClass of a driver
// (common/util.go AnnDefaultSnapshotClass).
const AnnDefaultSnapshotClass = "snapshot.storage.kubernetes.io/is-default-class"

// AnnMinimumSupportedPVCSize on a StorageProfile raises every PVC CDI renders
// for its class to at least that size (common/util.go GetEffectiveVolumeSize).
const AnnMinimumSupportedPVCSize = "cdi.kubevirt.io/minimumSupportedPvcSize"

// DefaultFilesystemOverhead is CDI's unset global overhead
// (pkg/common/common.go DefaultGlobalOverhead).
const DefaultFilesystemOverhead cdiv1.Percent = "0.06"

// VolumeSnapshotClass is what CDI reads of a VolumeSnapshotClass.
type VolumeSnapshotClass struct {
	Name   string
	Driver string
	// Default is true when the class carries AnnDefaultSnapshotClass: "true".
	Default bool
}

// Source is the PVC being cloned, as CDI sees it.
type Source struct {
	// Name is the PVC's name, for messages.
	Name string
	// StorageClass is the PVC's class, nil when it does not exist.
	StorageClass *storagev1.StorageClass
	// Profile is the StorageProfile CDI reads the source's
	// status.snapshotClass from (clone/common.go getSnapshotClassForClaim):
	// the PVC's class's, else the Kubernetes default class's (common/util.go
	// GetStorageClassByNameWithK8sFallback); nil when absent.
	Profile *cdiv1.StorageProfile
	// CSIDriver is the bound PV's spec.csi.driver; empty when unknown or not
	// CSI, and CDI then uses the class's provisioner (clone/common.go
	// GetDriverFromVolume, GetCommonDriver).
	CSIDriver string
	// VolumeName is spec.volumeName; VolumeClaimedByOther is true when that
	// PV's spec.claimRef names another claim, which GetDriverFromVolume
	// returns as an error on every attempt.
	VolumeName           string
	VolumeClaimedByOther bool
	// Phase is status.phase, for messages.
	Phase corev1.PersistentVolumeClaimPhase
	// VolumeMode is the PVC's spec.volumeMode; nil means Filesystem.
	VolumeMode *corev1.PersistentVolumeMode
	// Request is spec.resources.requests.storage.
	Request *resource.Quantity
	// Capacity is status.capacity.storage; nil while the PVC is unbound.
	Capacity *resource.Quantity
}

// Target is the clone DataVolume's spec.storage and the class it lands on.
type Target struct {
	// StorageClassName is the class the DataVolume names, if any.
	StorageClassName string
	// StorageClass is the named class, else the default CDI reads
	// (internal/storageclass.Default); nil when there is none.
	StorageClass *storagev1.StorageClass
	// Profile is CDI's StorageProfile of that class, nil when absent.
	Profile *cdiv1.StorageProfile
	// VolumeMode and AccessModes are spec.storage's; CDI fills what is
	// missing from the profile's claimPropertySets.
	VolumeMode  *corev1.PersistentVolumeMode
	AccessModes []corev1.PersistentVolumeAccessMode
	// Size is the requested storage; nil means CDI sizes the target from the
	// source, which never needs expanding.
	Size *resource.Quantity
	// FilesystemOverhead is CDIConfig's status.filesystemOverhead for the
	// class, which CDI inflates a Filesystem target by; empty is the default.
	FilesystemOverhead cdiv1.Percent
	// NoPopulator is true when CDI will not use its clone populator: no
	// CSIDriver object for the provisioner, or usePopulator: "false" on the
	// DataVolume (datavolume/controller-base.go shouldUseCDIPopulator). A
	// class of a provisioner that is no CSI driver (notCSIDriver) takes the
	// same path whatever the caller says.
	NoPopulator bool
	// CloneType is the cdi.kubevirt.io/cloneType annotation the DataVolume
	// carries, empty for none. CDI copies a DataVolume's annotations onto
	// the claim it creates (datavolume/controller-base.go
	// newPersistentVolumeClaim), and its clone populator takes a strategy
	// already saved there instead of planning one (populators/
	// clone-populator.go getCloneStrategy, getSavedCloneStrategy), so the
	// planner's choice and its checks (validateSourcePVC,
	// validateAdvancedClonePVC) are skipped.
	CloneType cdiv1.CDICloneStrategy
}

// notCSIDriver are provisioners that are no CSI driver: no CSIDriver object
// is named after them, so CDI never uses its clone populator for their
// classes (datavolume/controller-base.go shouldUseCDIPopulator, util.go
// storageClassCSIDriverExists) and copies every clone host-assisted. Both
// are external provisioners on sig-storage-lib-external-provisioner:
// rancher/local-path-provisioner (main.go DefaultProvisionerName) and
// OpenEBS's dynamic-localpv-provisioner (cmd/provisioner-localpv/app/
// start.go provisionerName; provisioner.go validateVolumeSource refuses a
// clone or a snapshot source).
var notCSIDriver = map[string]bool{
	"rancher.io/local-path": true,
	"openebs.io/local":      true,
}

// withoutPopulator reports the DataVolume controller's legacy path, always
// a host-assisted copy.
func withoutPopulator(t Target) bool {
	return t.NoPopulator || t.StorageClass == nil || notCSIDriver[t.StorageClass.Provisioner]
}

// Input is everything the prediction reads.
type Input struct {
	// SourceName names the source PVC, for the message when it is missing.
	SourceName string
	// Source is nil when the source PVC does not exist.
	Source *Source
	Target Target
	// CloneStrategyOverride is the CDI resource's spec.cloneStrategyOverride
	// (cluster-wide; CDIConfig has no clone strategy).
	CloneStrategyOverride *cdiv1.CDICloneStrategy
	// SnapshotClasses are the cluster's VolumeSnapshotClasses.
	SnapshotClasses []VolumeSnapshotClass
}

// Plan is CDI's choice.
type Plan struct {
	// Strategy is what CDI records in the target PVC's
	// cdi.kubevirt.io/cloneType; empty when Blocked.
	Strategy cdiv1.CDICloneStrategy
	// Via says where CDI took the strategy from, for messages.
	Via string
	// Fallback is set when CDI falls back to copy.
	Fallback *Fallback
	// Blocked is why CDI picks no strategy yet.
	Blocked *Blocked
	// Fixes would make CDI clone by CSI or snapshot, or unblock it.
	Fixes []string
}

// Fallback is a host-assisted fallback as CDI records it.
type Fallback struct {
	// Reason is the Warning event's reason (Reason* constants).
	Reason string
	// Message is the cdi.kubevirt.io/cloneFallbackReason annotation.
	Message string
}

// Blocked is why CDI computes no strategy.
type Blocked struct {
	// Reason is CDI's condition reason (Reason* constants).
	Reason string
	// Message is CDI's condition message.
	Message string
	// Waits is true when CDI retries and it resolves without anyone acting.
	Waits bool
	// Awaits is, when Waits, a clause naming the object and field CDI waits
	// for ("PVC ns/name has no status.capacity.storage yet ...").
	Awaits string
	// OnSource is true when CDI waits for the source PVC, not the target's
	// StorageProfile.
	OnSource bool
}

// HostAssisted reports whether CDI copies over the pod network.
func (p Plan) HostAssisted() bool { return p.Strategy == cdiv1.CloneStrategyHostAssisted }

// Predict follows CDI's order: render the target PVC (datavolume/util.go),
// check the clone (pvc-clone-controller.go syncClone), populator or legacy
// path (controller-base.go shouldUseCDIPopulator), then the planner
// (clone/planner.go computeStrategyForSourcePVC).
func Predict(in Input) Plan {
	t := in.Target
	mode, refused := renderTarget(t)
	if refused != nil {
		return *refused
	}
	src := in.Source
	if src == nil {
		return blockedPlan(&Blocked{Reason: ReasonCloneWithoutSource, Message: fmt.Sprintf("The source pvc %s doesn't exist", in.SourceName), Waits: true,
			Awaits: fmt.Sprintf("PVC %s does not exist (or has not been seen) yet", in.SourceName), OnSource: true},
			fmt.Sprintf("if PVC %s never appears, create it (CDI clones as soon as it exists)", in.SourceName))
	}
	if blocked := validateClone(src, t); blocked != nil {
		return blockedPlan(blocked, "request at least the source's size")
	}
	if withoutPopulator(t) {
		return noPopulatorPlan(t)
	}
	if t.CloneType != "" {
		return requestedPlan(t.CloneType)
	}
	request := targetRequest(t, mode)
	if !measuredByCDI(src, mode) {
		if blocked := validateSourceSize(src, request); blocked != nil {
			return blockedPlan(blocked, "request at least the source's size")
		}
	}

	strategy, via := chooseStrategy(in)
	plan := Plan{Strategy: strategy, Via: via}
	if src.VolumeClaimedByOther && strategy != cdiv1.CloneStrategyHostAssisted {
		// clone/common.go GetDriverFromVolume errors for both advanced
		// strategies, on every attempt.
		return blockedPlan(&Blocked{Reason: ReasonError, Message: "pvc does not match volume claim ref"},
			fmt.Sprintf("bind PVC %s to a PersistentVolume of its own: PersistentVolume %s (its spec.volumeName) names another claim in spec.claimRef", src.Name, src.VolumeName))
	}
	driver := commonDriver(src, t.StorageClass)
	switch strategy {
	case cdiv1.CloneStrategyHostAssisted:
		plan.Fixes = copyChosenFixes(in, driver)
		return plan
	case cdiv1.CloneStrategySnapshot:
		if _, blocked, fix := snapshotClass(in, driver); blocked != nil {
			return blockedPlan(blocked, fix)
		} else if fix != "" {
			return fallbackPlan(plan, ReasonNoVolumeSnapshotClass, MessageNoVolumeSnapshotClass, fix)
		}
	case cdiv1.CloneStrategyCsiClone:
	default:
		// planner.go Plan: a strategy CDI does not know (a bad
		// cdi.kubevirt.io/clone-strategy annotation on the class) errors.
		return blockedPlan(&Blocked{Reason: ReasonError, Message: fmt.Sprintf("unknown strategy/source %s", strategy)},
			fmt.Sprintf("set StorageProfile %s spec.cloneStrategy, or the StorageClass's cdi.kubevirt.io/clone-strategy annotation, to csi-clone, snapshot or copy", t.StorageClass.Name))
	}
	return advancedChecks(plan, src, t, mode, driver, request)
}

// requestedPlan is a strategy the DataVolume asks for in its cloneType
// annotation: the populator plans it as saved (clone/planner.go Plan), and
// errors "unknown strategy/source S" for any it cannot plan from a PVC.
func requestedPlan(strategy cdiv1.CDICloneStrategy) Plan {
	switch strategy {
	case cdiv1.CloneStrategyHostAssisted, cdiv1.CloneStrategySnapshot, cdiv1.CloneStrategyCsiClone:
		return Plan{Strategy: strategy, Via: "the DataVolume's " + labels.AnnCDICloneType + " annotation"}
	}
	return blockedPlan(&Blocked{Reason: ReasonError, Message: fmt.Sprintf("unknown strategy/source %s", strategy)},
		fmt.Sprintf("remove the DataVolume's %s annotation or set it to copy, snapshot or csi-clone, and re-create the DataVolume", labels.AnnCDICloneType))
}

// renderTarget is the target PVC as datavolume/util.go renders it, the
// first step of every clone whatever its source: its volume mode, or the
// plan of a claim CDI cannot build.
func renderTarget(t Target) (corev1.PersistentVolumeMode, *Plan) {
	mode, blocked := renderVolumeMode(t)
	if blocked != nil {
		p := blockedPlan(blocked, claimFix(t, blocked))
		return "", &p
	}
	if blocked := checkSize(t.Size); blocked != nil {
		p := blockedPlan(blocked, "request at least 1Mi")
		return "", &p
	}
	return mode, nil
}

// advancedChecks is planner.go validateAdvancedClonePVC: one CSI driver, one
// volume mode and, to grow, a class that allows expansion.
func advancedChecks(plan Plan, src *Source, t Target, mode corev1.PersistentVolumeMode, driver string, request *resource.Quantity) Plan {
	if driver == "" {
		return fallbackPlan(plan, ReasonIncompatibleProvisioners, MessageIncompatibleProvisioners,
			fmt.Sprintf("clone within one CSI driver: the source is on %s, the target on StorageClass %s (provisioner %s)", sourceDriverText(src), t.StorageClass.Name, t.StorageClass.Provisioner))
	}
	if srcMode := resolveMode(src.VolumeMode); srcMode != mode {
		return fallbackPlan(plan, ReasonIncompatibleVolumeModes, MessageIncompatibleVolumeModes,
			fmt.Sprintf("give the target the source's volume mode %s (spec.storage.volumeMode, or the first claimPropertySets entry of StorageProfile %s), not %s", srcMode, t.StorageClass.Name, mode))
	}
	if src.Capacity == nil {
		// planner.go validateAdvancedClonePVC reads status.capacity, never the
		// request, and errors (retried) without it. A claim gets it when it
		// binds; Crossplane's informer can deliver the claim after the
		// DataVolume already reads Succeeded.
		phase := string(src.Phase)
		if phase == "" {
			phase = "unset"
		}
		return blockedPlan(&Blocked{Reason: ReasonError, Message: "source/target size info missing", Waits: true,
			Awaits: fmt.Sprintf("PVC %s has no status.capacity.storage yet (status.phase %s)", src.Name, phase), OnSource: true},
			fmt.Sprintf("if status.capacity stays unset, find out why PVC %s is not Bound (kubectl describe pvc): CDI decides from that capacity whether the clone must grow", src.Name))
	}
	if request != nil && src.Capacity.Cmp(*request) < 0 && !allowsExpansion(t.StorageClass) {
		return fallbackPlan(plan, ReasonNoVolumeExpansion, MessageNoVolumeExpansion,
			fmt.Sprintf("set allowVolumeExpansion: true on StorageClass %s, or request the source DataVolume's size so that the clone (%s requested) need not grow past the source's %s", t.StorageClass.Name, request.String(), src.Capacity.String()))
	}
	return plan
}

// chooseStrategy is planner.go computeStrategyForSourcePVC: the CDI
// resource's override, else the target class's StorageProfile
// status.cloneStrategy, else snapshot.
func chooseStrategy(in Input) (cdiv1.CDICloneStrategy, string) {
	if in.CloneStrategyOverride != nil {
		return *in.CloneStrategyOverride, "the CDI resource's spec.cloneStrategyOverride"
	}
	name := in.Target.StorageClass.Name
	p := in.Target.Profile
	switch {
	case p == nil:
		return cdiv1.CloneStrategySnapshot, fmt.Sprintf("CDI's default, snapshot (no StorageProfile %s)", name)
	case p.Status.CloneStrategy == nil:
		return cdiv1.CloneStrategySnapshot, fmt.Sprintf("CDI's default, snapshot (StorageProfile %s states no cloneStrategy)", name)
	}
	return *p.Status.CloneStrategy, fmt.Sprintf("StorageProfile %s status.cloneStrategy", name)
}

// copyChosenFixes explains a copy CDI was told to make (no fallback reason).
func copyChosenFixes(in Input, driver string) []string {
	if in.CloneStrategyOverride != nil {
		return []string{"remove spec.cloneStrategyOverride from the CDI resource: it makes every clone in the cluster a host-assisted copy"}
	}
	name := in.Target.StorageClass.Name
	d := in.Target.StorageClass.Provisioner
	if driver != "" {
		d = driver
	}
	// storageprofile-controller.go reconcileCloneStrategy writes copy from
	// spec.cloneStrategy, the class's cdi.kubevirt.io/clone-strategy
	// annotation, or a class with no VolumeSnapshotClass for its driver.
	return []string{fmt.Sprintf("set spec.cloneStrategy on StorageProfile %s to csi-clone (if driver %s supports volume cloning) or snapshot (with a VolumeSnapshotClass for driver %s); CDI sets status.cloneStrategy to copy from spec.cloneStrategy, the StorageClass's cdi.kubevirt.io/clone-strategy annotation, or when no VolumeSnapshotClass exists for the driver", name, d, d)}
}

// snapshotClass is clone/common.go GetCompatibleVolumeSnapshotClass and
// common/util.go GetVolumeSnapshotClass: the class both StorageProfiles
// name, else the driver's default, else its first by name. Without one it
// returns a blocking error, or the fix for the fallback.
func snapshotClass(in Input, driver string) (string, *Blocked, string) {
	if driver == "" {
		return "", nil, fmt.Sprintf("clone within one CSI driver: the source is on %s, the target on StorageClass %s (provisioner %s); CDI needs a VolumeSnapshotClass of the driver both share", sourceDriverText(in.Source), in.Target.StorageClass.Name, in.Target.StorageClass.Provisioner)
	}
	if name := commonSnapshotClassName(in.Source, in.Target); name != "" {
		for _, c := range in.SnapshotClasses {
			if c.Name != name {
				continue
			}
			if c.Driver == driver {
				return name, nil, ""
			}
			return "", nil, fmt.Sprintf("VolumeSnapshotClass %s, which the StorageProfiles name in status.snapshotClass, belongs to driver %s, not %s: set spec.snapshotClass on the StorageProfiles to a VolumeSnapshotClass of driver %s", name, c.Driver, driver, driver)
		}
		return "", &Blocked{Reason: ReasonError, Message: fmt.Sprintf("volumesnapshotclasses.snapshot.storage.k8s.io %q not found", name)},
			fmt.Sprintf("create VolumeSnapshotClass %s for driver %s, or set spec.snapshotClass on the StorageProfiles to one that exists", name, driver)
	}
	var candidates []string
	for _, c := range in.SnapshotClasses {
		if c.Driver != driver {
			continue
		}
		if c.Default {
			return c.Name, nil, ""
		}
		candidates = append(candidates, c.Name)
	}
	if len(candidates) > 0 {
		sort.Strings(candidates)
		return candidates[0], nil, ""
	}
	return "", nil, fmt.Sprintf("create a VolumeSnapshotClass for driver %s, or set spec.cloneStrategy: csi-clone on StorageProfile %s if the driver supports volume cloning", driver, in.Target.StorageClass.Name)
}

// commonSnapshotClassName is clone/common.go getCommonSnapshotClass.
func commonSnapshotClassName(src *Source, t Target) string {
	if src.Profile == nil || t.Profile == nil {
		return ""
	}
	a, b := src.Profile.Status.SnapshotClass, t.Profile.Status.SnapshotClass
	if a == nil || b == nil || *a != *b {
		return ""
	}
	return *a
}

// commonDriver is clone/common.go GetCommonDriver: the source's PV driver,
// else its class's provisioner, if it equals the target class's provisioner
// (the target is unbound while CDI plans); empty otherwise.
func commonDriver(src *Source, target *storagev1.StorageClass) string {
	d := src.CSIDriver
	if d == "" {
		if src.StorageClass == nil {
			return ""
		}
		d = src.StorageClass.Provisioner
	}
	if d != target.Provisioner {
		return ""
	}
	return d
}

func sourceDriverText(src *Source) string {
	switch {
	case src.CSIDriver != "":
		return "driver " + src.CSIDriver
	case src.StorageClass != nil:
		return fmt.Sprintf("StorageClass %s (provisioner %s)", src.StorageClass.Name, src.StorageClass.Provisioner)
	case src.VolumeName != "":
		return fmt.Sprintf("no StorageClass CDI can find, and its PersistentVolume %s (spec.volumeName) is not a CSI volume CDI can read", src.VolumeName)
	}
	return "no StorageClass CDI can find"
}

// noPopulatorPlan is the legacy path, always host-assisted
// (clone-controller-base.go fallbackToHostAssisted).
func noPopulatorPlan(t Target) Plan {
	fix := "use a StorageClass whose provisioner is a CSI driver with a CSIDriver object, and leave cdi.kubevirt.io/storage.usePopulator unset on the DataVolume; CDI plans CSI clones and snapshots only through its clone populator"
	switch {
	case t.StorageClass != nil && notCSIDriver[t.StorageClass.Provisioner]:
		fix = fmt.Sprintf("use a StorageClass of a CSI driver: the provisioner of StorageClass %s, %s, is none, so CDI can only copy onto it", t.StorageClass.Name, t.StorageClass.Provisioner)
	case t.StorageClass == nil && t.StorageClassName != "":
		fix = fmt.Sprintf("create StorageClass %s, or name one that exists; CDI plans CSI clones and snapshots only for a class it can read", t.StorageClassName)
	case t.StorageClass == nil:
		fix = "name a StorageClass, or mark a default one CDI reads; CDI plans CSI clones and snapshots only for a class it can read"
	}
	return fallbackPlan(Plan{Strategy: cdiv1.CloneStrategyHostAssisted, Via: "the DataVolume controller (no clone populator)"}, ReasonNoPopulator, MessageNoPopulator, fix)
}

func fallbackPlan(p Plan, reason, message, fix string) Plan {
	p.Strategy = cdiv1.CloneStrategyHostAssisted
	p.Fallback = &Fallback{Reason: reason, Message: message}
	p.Fixes = []string{fix}
	return p
}

func blockedPlan(b *Blocked, fix string) Plan {
	p := Plan{Blocked: b}
	if fix != "" {
		p.Fixes = []string{fix}
	}
	return p
}

// renderVolumeMode is datavolume/util.go
// renderPvcSpecVolumeModeAndAccessModesAndStorageClass: the target's volume
// mode, or why CDI cannot build the PVC.
func renderVolumeMode(t Target) (corev1.PersistentVolumeMode, *Blocked) {
	claimNotValid := func(msg string, waits bool) *Blocked {
		return &Blocked{Reason: ReasonErrClaimNotValid, Message: msg, Waits: waits}
	}
	if t.StorageClass == nil {
		if len(t.AccessModes) == 0 {
			return "", claimNotValid("PVC spec is missing accessMode and no storageClass to choose profile", false)
		}
		return resolveMode(t.VolumeMode), nil
	}
	name := t.StorageClass.Name
	// The StorageProfile controller creates it shortly after the class.
	notFound := fmt.Sprintf("storageprofiles.cdi.kubevirt.io %q not found", name)
	hasMode := t.VolumeMode != nil && *t.VolumeMode != ""
	switch {
	case hasMode && len(t.AccessModes) > 0:
		return resolveMode(t.VolumeMode), nil
	case t.Profile == nil && len(t.AccessModes) == 0 && hasMode:
		return "", profileAwaited(claimNotValid(fmt.Sprintf("no accessMode specified and cannot get StorageProfile %s: %s", name, notFound), true), name)
	case t.Profile == nil:
		return "", profileAwaited(claimNotValid("cannot get StorageProfile: "+notFound, true), name)
	}
	sets := t.Profile.Status.ClaimPropertySets
	switch {
	case !hasMode && len(t.AccessModes) == 0:
		// getDefaultVolumeAndAccessMode: the first set, with access modes.
		if len(sets) > 0 && len(sets[0].AccessModes) > 0 {
			return resolveMode(sets[0].VolumeMode), nil
		}
		return "", claimNotValid(fmt.Sprintf("no accessMode specified in StorageProfile %s", name), false)
	case !hasMode:
		// getDefaultVolumeMode: the first set sharing an access mode, else
		// Filesystem.
		for _, cps := range sets {
			for _, a := range cps.AccessModes {
				for _, want := range t.AccessModes {
					if a == want {
						return resolveMode(cps.VolumeMode), nil
					}
				}
			}
		}
		return corev1.PersistentVolumeFilesystem, nil
	}
	// getDefaultAccessModes: a set of the requested mode with access modes.
	for _, cps := range sets {
		if cps.VolumeMode != nil && *cps.VolumeMode == *t.VolumeMode && len(cps.AccessModes) > 0 {
			return *t.VolumeMode, nil
		}
	}
	return "", claimNotValid(fmt.Sprintf("no matching accessMode specified in StorageProfile %s", name), false)
}

// profileAwaited says the claim waits for the StorageProfile CDI creates for
// every StorageClass (storageprofile-controller.go).
func profileAwaited(b *Blocked, class string) *Blocked {
	b.Awaits = fmt.Sprintf("StorageProfile %s, whose status.claimPropertySets give the worker disk its access and volume modes, does not exist yet", class)
	return b
}

func claimFix(t Target, b *Blocked) string {
	switch {
	case b.Waits:
		return fmt.Sprintf("if StorageProfile %s never appears, check that CDI is running: its StorageProfile controller creates one for every StorageClass", t.StorageClass.Name)
	case t.StorageClass == nil:
		return "name an existing StorageClass, or mark one as default with storageclass.kubernetes.io/is-default-class or storageclass.kubevirt.io/is-default-virt-class (CDI ignores the beta annotation)"
	}
	return fmt.Sprintf("set spec.claimPropertySets (accessModes and volumeMode) on StorageProfile %s, or set accessModes and volumeMode on the DataVolume", t.StorageClass.Name)
}

// checkSize is datavolume/util.go renderPvcSpecVolumeSize's floor.
func checkSize(size *resource.Quantity) *Blocked {
	if size != nil && size.Value() < 1<<20 {
		return &Blocked{Reason: ReasonErrClaimNotValid, Message: "PVC Spec is not valid - storage size should be at least 1MiB"}
	}
	return nil
}

// validateClone is pvc-clone-controller.go validateClone for spec.storage:
// only a Block source's request is compared, with the uninflated size.
func validateClone(src *Source, t Target) *Blocked {
	if t.Size == nil || resolveMode(src.VolumeMode) != corev1.PersistentVolumeBlock {
		return nil
	}
	if msg := compareRequests(src.Request, effectiveSize(*t.Size, t.Profile)); msg != "" {
		return &Blocked{Reason: ReasonCloneValidationFailed, Message: "The clone doesn't meet the validation requirements: " + msg}
	}
	return nil
}

// validateSourceSize is planner.go validateSourcePVC, on the rendered
// request; a target sized from the source passes.
func validateSourceSize(src *Source, request *resource.Quantity) *Blocked {
	if request == nil {
		return nil
	}
	if msg := compareRequests(src.Request, *request); msg != "" {
		return &Blocked{Reason: ReasonError, Message: msg}
	}
	return nil
}

// measuredByCDI reports a Filesystem source cloned to a Block target: CDI
// measures the image (pvc-clone-controller.go detectCloneSize) and marks the
// clone permissiveClone, so the planner skips its size check (planner.go
// validateSourcePVC). The image size is not an input; the differing volume
// modes decide the fallback anyway.
func measuredByCDI(src *Source, mode corev1.PersistentVolumeMode) bool {
	return resolveMode(src.VolumeMode) == corev1.PersistentVolumeFilesystem && mode == corev1.PersistentVolumeBlock
}

// compareRequests is common/util.go ValidateRequestedCloneSize.
func compareRequests(source *resource.Quantity, target resource.Quantity) string {
	if source == nil {
		return "source/target missing storage resource requests"
	}
	if source.Value() > target.Value() {
		return fmt.Sprintf("target resources requests storage size is smaller than the source %d < %d", target.Value(), source.Value())
	}
	return ""
}

// targetRequest is the target's storage request as datavolume/util.go
// renderPvcSpecVolumeSize renders it: Filesystem inflated by the overhead
// (common/util.go InflateSizeWithOverhead), then the profile's minimum.
func targetRequest(t Target, mode corev1.PersistentVolumeMode) *resource.Quantity {
	if t.Size == nil {
		return nil
	}
	bytes := t.Size.Value()
	if mode == corev1.PersistentVolumeFilesystem {
		overhead := t.FilesystemOverhead
		if overhead == "" {
			overhead = DefaultFilesystemOverhead
		}
		// As CDI does, a malformed overhead counts as 0.
		f, _ := strconv.ParseFloat(string(overhead), 64)
		const block = 1 << 20
		aligned := int64(math.Ceil(float64(bytes)/float64(block))) * block
		bytes = int64(math.Ceil(float64(aligned) * (1 + f)))
	}
	// CDI writes it in decimal notation; binary has the same value and reads
	// as the size the user wrote.
	q := effectiveSize(*resource.NewQuantity(bytes, resource.BinarySI), t.Profile)
	return &q
}

// effectiveSize is common/util.go GetEffectiveVolumeSize.
func effectiveSize(size resource.Quantity, p *cdiv1.StorageProfile) resource.Quantity {
	if p == nil {
		return size
	}
	if v, ok := p.Annotations[AnnMinimumSupportedPVCSize]; ok {
		if floor, err := resource.ParseQuantity(v); err == nil && size.Cmp(floor) < 0 {
			return floor
		}
	}
	return size
}

func allowsExpansion(sc *storagev1.StorageClass) bool {
	return sc.AllowVolumeExpansion != nil && *sc.AllowVolumeExpansion
}

// resolveMode is CDI's util.ResolveVolumeMode.
func resolveMode(m *corev1.PersistentVolumeMode) corev1.PersistentVolumeMode {
	if m != nil && *m == corev1.PersistentVolumeBlock {
		return corev1.PersistentVolumeBlock
	}
	return corev1.PersistentVolumeFilesystem
}
