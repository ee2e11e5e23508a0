package nodepool

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	fnresource "github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/internal/cloneplacement"
	"github.com/cozystack/function-worker-image/internal/cloneplan"
	"github.com/cozystack/function-worker-image/internal/compose/composetest"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/required"
	"github.com/cozystack/function-worker-image/internal/storageclass"
)

// TestGateOnClonePlan pins which clone plans hold a new template and with
// which reason; the messages are pinned by the golden files.
func TestGateOnClonePlan(t *testing.T) {
	p, img := fxPoolID, fxImage
	capacityMissing := cloneplan.Plan{Blocked: &cloneplan.Blocked{Reason: cloneplan.ReasonError, Message: "source/target size info missing", Waits: true, Awaits: "PVC a/b has no status.capacity.storage yet (status.phase Pending)", OnSource: true}}
	sourceMissing := cloneplan.Plan{Blocked: &cloneplan.Blocked{Reason: cloneplan.ReasonCloneWithoutSource, Message: "The source pvc a/b doesn't exist", Waits: true, Awaits: "PVC a/b does not exist (or has not been seen) yet", OnSource: true}}
	profileMissing := cloneplan.Plan{Blocked: &cloneplan.Blocked{Reason: cloneplan.ReasonErrClaimNotValid, Message: "cannot get StorageProfile", Waits: true, Awaits: "StorageProfile replicated does not exist yet"}}
	refused := cloneplan.Plan{Blocked: &cloneplan.Blocked{Reason: cloneplan.ReasonErrClaimNotValid, Message: "no accessMode specified in StorageProfile replicated"}}
	copied := cloneplan.Plan{Strategy: "copy", Via: "StorageProfile replicated status.cloneStrategy"}
	csi := cloneplan.Plan{Strategy: "csi-clone", Via: "StorageProfile replicated status.cloneStrategy"}

	nodeLocal := cloneplacement.Placement{OneNode: true, Class: "replicated", Provisioner: "topolvm.io", Statement: "provisioner topolvm.io", Driver: "TopoLVM ..."}

	cases := map[string]struct {
		reason    string
		plan      cloneplan.Plan
		waived    bool
		allow     bool
		placement cloneplacement.Placement
		want      string // hold reason, "" for none
	}{
		"CSICloneIsLetThrough":                     {reason: "A clone on the storage layer is what the golden is for.", plan: csi},
		"CopyIsHeld":                               {reason: "A host-assisted copy streams the image through the pod network per worker.", plan: copied, want: decide.ReasonHostAssistedCopy},
		"CopyAcceptedOnPurposeIsLetThrough":        {reason: "clonePreflight.allowHostAssistedCopy accepts the copies.", plan: copied, allow: true},
		"RefusedCloneIsHeld":                       {reason: "A clone CDI refuses needs someone to act.", plan: refused, want: decide.ReasonCloneWouldFail},
		"MissingCapacityIsHeldUntilChecked":        {reason: "CDI retries until the golden claim has status.capacity; a template let through now would never be checked.", plan: capacityMissing, want: decide.ReasonClonePlanPending},
		"MissingSourceIsHeldUntilChecked":          {reason: "CDI waits for a source PVC it has not found (CloneWithoutSource).", plan: sourceMissing, want: decide.ReasonClonePlanPending},
		"MissingProfileIsHeldUntilChecked":         {reason: "CDI waits for the class's StorageProfile.", plan: profileMissing, want: decide.ReasonClonePlanPending},
		"WaivedGoldenDoesNotHoldOnItsSource":       {reason: "A pool that cloned a golden no longer ready is not held by the golden's later fate, here or in the golden gate.", plan: capacityMissing, waived: true},
		"WaivedGoldenStillWaitsForTheProfile":      {reason: "The target class's StorageProfile is not the golden's fate: the pool's next disks need it.", plan: profileMissing, waived: true, want: decide.ReasonClonePlanPending},
		"AllowCopyDoesNotSkipAPendingPlan":         {reason: "Accepting copies is no reason to let an unchecked plan through: it may still be a refusal.", plan: capacityMissing, allow: true, want: decide.ReasonClonePlanPending},
		"CSICloneOnNodeLocalClassIsHeld":           {reason: "The driver makes every disk on the golden's node.", plan: csi, placement: nodeLocal, want: decide.ReasonNodeLocalClass},
		"CopyOnNodeLocalClassIsHeldAsACopy":        {reason: "CDI would copy: the copy is what needs accepting, and a copy lands on its worker's node.", plan: copied, placement: nodeLocal, want: decide.ReasonHostAssistedCopy},
		"AcceptedCopyOnNodeLocalClassIsLetThrough": {reason: "An accepted copy is made on each worker's node, not the golden's.", plan: copied, allow: true, placement: nodeLocal},
		"PendingPlanOnNodeLocalClassWaitsFirst":    {reason: "Until CDI can plan, a CSI clone is not known: the plan waits first.", plan: capacityMissing, placement: nodeLocal, want: decide.ReasonClonePlanPending},
		"RefusedCloneOnNodeLocalClassIsRefused":    {reason: "A clone CDI refuses is refused wherever it would land.", plan: refused, placement: nodeLocal, want: decide.ReasonCloneWouldFail},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := decide.GateOnClonePlan(decide.PreflightInput{Pool: p, Image: img, Class: "replicated", AllowCopy: tc.allow, GoldenWaived: tc.waived, Recheck: 15 * time.Second, Placement: tc.placement}, tc.plan)
			got := ""
			if h != nil {
				got = h.Reason
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestClonePlanPendingMessage: the message of a pending plan names the
// pool, the golden, the object and field awaited with its value, what CDI
// reports, when it is re-checked and the fix should it not clear.
func TestClonePlanPendingMessage(t *testing.T) {
	block := ptr.To(corev1.PersistentVolumeBlock)
	// The golden claim requests 6Gi and is not bound yet: no status.capacity.
	claim := corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "cozy-public", Name: "talos-worker-abc-v1.13.6"}}
	claim.Spec = corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("replicated"), VolumeMode: block,
		Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("6Gi")}}}
	claim.Status.Phase = corev1.ClaimPending
	w := read.Required{
		GoldenPVC:      &claim,
		StorageClasses: []storagev1.StorageClass{{ObjectMeta: metav1.ObjectMeta{Name: "replicated"}, Provisioner: "csi.example.com", AllowVolumeExpansion: ptr.To(true)}},
	}
	w.Clone.Profiles = []cdiv1.StorageProfile{{ObjectMeta: metav1.ObjectMeta{Name: "replicated"}, Status: cdiv1.StorageProfileStatus{
		CloneStrategy:     ptr.To(cdiv1.CloneStrategyCsiClone),
		ClaimPropertySets: []cdiv1.ClaimPropertySet{{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, VolumeMode: block}},
	}}}
	plan := decide.PredictClone(fxImage, "replicated", resource.MustParse("20Gi"), w)
	got := decide.GateOnClonePlan(decide.PreflightInput{Pool: fxPoolID, Image: fxImage, Class: "replicated", Recheck: 15 * time.Second}, plan)
	want := &decide.Hold{Reason: decide.ReasonClonePlanPending, Message: `Node pool "tenant-a/demo-md0": CDI cannot plan the clone of golden image "cozy-public/talos-worker-abc-v1.13.6" onto StorageClass "replicated" yet, because PVC cozy-public/talos-worker-abc-v1.13.6 has no status.capacity.storage yet (status.phase Pending) (CDI reports Error: "source/target size info missing" and retries). Until it can, the pre-flight cannot tell a CSI clone from a host-assisted copy, so the new worker template is held back, re-checked every 15s (the Input's polling.inProgress), and the pool's existing resources are kept as they are. No action is needed, the hold lifts by itself; if status.capacity stays unset, find out why PVC cozy-public/talos-worker-abc-v1.13.6 is not Bound (kubectl describe pvc): CDI decides from that capacity whether the clone must grow.`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the pending message names the pool, the golden, the claim, its field and value, and the fix\n-want, +got:\n%s", diff)
	}
}

func TestVolumeDriver(t *testing.T) {
	claim := func(volume string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "cozy-public", Name: "golden"}, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: volume}}
	}
	volume := func(name string, ref *corev1.ObjectReference, csi string) *corev1.PersistentVolume {
		pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{ClaimRef: ref}}
		if csi != "" {
			pv.Spec.CSI = &corev1.CSIPersistentVolumeSource{Driver: csi}
		}
		return pv
	}
	ours := &corev1.ObjectReference{Namespace: "cozy-public", Name: "golden"}
	theirs := &corev1.ObjectReference{Namespace: "cozy-public", Name: "other"}
	type result struct {
		Driver         string
		ClaimedByOther bool
	}
	cases := map[string]struct {
		reason string
		pvc    *corev1.PersistentVolumeClaim
		pv     *corev1.PersistentVolume
		want   result
	}{
		"BoundCSIVolumeGivesItsDriver": {reason: "GetDriverFromVolume returns spec.csi.driver of the PV the claim names.", pvc: claim("pv-1"), pv: volume("pv-1", ours, "linstor.csi.linbit.com"), want: result{Driver: "linstor.csi.linbit.com"}},
		"NotReadGivesNone":             {reason: "A PV not read leaves the driver to the claim's class.", pvc: claim("pv-1")},
		"UnboundClaimGivesNone":        {reason: "GetDriverFromVolume: a claim without spec.volumeName has no volume driver.", pvc: claim(""), pv: volume("pv-1", ours, "linstor.csi.linbit.com")},
		"OtherVolumeGivesNone":         {reason: "Only the PV the claim names counts.", pvc: claim("pv-1"), pv: volume("pv-2", ours, "linstor.csi.linbit.com")},
		"UnclaimedVolumeGivesNone":     {reason: "GetDriverFromVolume: a PV without claimRef gives no driver.", pvc: claim("pv-1"), pv: volume("pv-1", nil, "linstor.csi.linbit.com")},
		"NonCSIVolumeGivesNone":        {reason: "GetDriverFromVolume: a PV that is not a CSI volume gives no driver.", pvc: claim("pv-1"), pv: volume("pv-1", ours, "")},
		"VolumeOfAnotherClaimIsCDIsError": {reason: "GetDriverFromVolume: \"pvc does not match volume claim ref\".", pvc: claim("pv-1"), pv: volume("pv-1", theirs, "linstor.csi.linbit.com"),
			want: result{ClaimedByOther: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d, other := decide.VolumeDriver(tc.pvc, tc.pv)
			if diff := cmp.Diff(tc.want, result{Driver: d, ClaimedByOther: other}); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestGoldenVolumeToRead(t *testing.T) {
	claim := func(class *string, volume string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: class, VolumeName: volume}}
	}
	replicated, empty, gone := "replicated", "", "gone"
	classes := []storagev1.StorageClass{{ObjectMeta: metav1.ObjectMeta{Name: "replicated"}}}
	cases := map[string]struct {
		reason string
		pvc    *corev1.PersistentVolumeClaim
		want   string
	}{
		"ClaimOfAnExistingClassNeedsNoVolume": {reason: "The class's provisioner is the driver of a volume it provisioned.", pvc: claim(&replicated, "pv-1")},
		"ClaimWithoutClassNeedsItsVolume":     {reason: "A PVC-only golden naming no class: only its PV says the driver.", pvc: claim(nil, "pv-1"), want: "pv-1"},
		"ClaimWithEmptyClassNeedsItsVolume":   {reason: "storageClassName \"\" is no class either.", pvc: claim(&empty, "pv-1"), want: "pv-1"},
		"ClaimOfAGoneClassNeedsItsVolume":     {reason: "A class deleted since gives no provisioner.", pvc: claim(&gone, "pv-1"), want: "pv-1"},
		"UnboundClaimHasNoVolumeToRead":       {reason: "Without spec.volumeName CDI reads no PV either.", pvc: claim(nil, "")},
		"NoClaimHasNoVolumeToRead":            {reason: "A golden whose PVC is not there names no volume."},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, read.GoldenVolumeToRead(tc.pvc, classes)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestChainedRequirements: the golden PV is asked for only while a new
// clone template is gated and the golden PVC's class does not say its
// driver, by the name the PVC gives.
func TestChainedRequirements(t *testing.T) {
	builtinSpec := map[string]any{"osImage": builtin()}
	existing := composeOnce(t, builtinSpec, succeeded, nil)
	pv := required.Selectors{read.ReqGoldenPV: required.ByName("v1", "PersistentVolume", "", fxGoldenVolume)}
	cases := map[string]struct {
		reason   string
		spec     map[string]any
		world    worldFixture
		observed map[fnresource.Name]fnresource.ObservedComposed
		want     required.Selectors
	}{
		"ClaimOfAnExistingClass": {reason: "The class says the driver: no PV.", spec: builtinSpec, world: succeeded},
		"ClaimWithoutClass": {reason: "A PVC-only golden with no class: its PV by spec.volumeName.", spec: builtinSpec,
			world: worldFixture{goldenPVC: goldenPVC(""), classes: defaultClass}, want: pv},
		"ClaimWithoutClassOfAComposedTemplate": {reason: "A template already composed is not gated: nothing to read.", spec: builtinSpec,
			world: worldFixture{goldenPVC: goldenPVC(""), classes: defaultClass}, observed: existing},
		"UnboundClaimWithoutClass": {reason: "No spec.volumeName, no PV to ask for.", spec: builtinSpec,
			world: worldFixture{goldenPVC: pendingGoldenPVC(""), classes: defaultClass}},
		"HTTPPool": {reason: "An HTTP pool clones nothing.", spec: map[string]any{},
			world: worldFixture{goldenPVC: goldenPVC(""), classes: defaultClass}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := composetest.Run(Mode{}, request(t, nodePoolXR(tc.spec), tc.world, tc.observed)).Chained
			if diff := cmp.Diff(tc.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestNodeLocalClassMessage: the hold names the pool, the golden, the
// class, what it states (the parameter and its value, or the provisioner),
// what the driver does, what that does to the workers at the class's
// binding mode, and both fixes.
func TestNodeLocalClassMessage(t *testing.T) {
	block := ptr.To(corev1.PersistentVolumeBlock)
	golden := func(class string) *corev1.PersistentVolumeClaim {
		c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "cozy-public", Name: "talos-worker-abc-v1.13.6"}}
		c.Spec = corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(class), VolumeMode: block,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("6Gi")}}}
		c.Status.Phase, c.Status.Capacity = corev1.ClaimBound, corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("6Gi")}
		return c
	}
	onClass := func(sc storagev1.StorageClass) read.Required {
		sc.AllowVolumeExpansion = ptr.To(true)
		w := read.Required{GoldenPVC: golden(sc.Name), StorageClasses: []storagev1.StorageClass{sc}}
		w.Clone.Profiles = []cdiv1.StorageProfile{{ObjectMeta: metav1.ObjectMeta{Name: sc.Name}, Status: cdiv1.StorageProfileStatus{
			CloneStrategy:     ptr.To(cdiv1.CloneStrategyCsiClone),
			ClaimPropertySets: []cdiv1.ClaimPropertySet{{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeMode: block}},
		}}}
		return w
	}
	cases := map[string]struct {
		reason string
		class  storagev1.StorageClass
		want   string
	}{
		"LINSTORWithoutRemoteAccessBindingAtOnce": {
			reason: "Immediate binding: every worker VM runs on the golden's node.",
			class: storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local"}, Provisioner: "linstor.csi.linbit.com",
				Parameters: map[string]string{"linstor.csi.linbit.com/placementCount": "1", "linstor.csi.linbit.com/allowRemoteVolumeAccess": "false"}},
			want: `Node pool "tenant-a/demo-md0": CDI would have the CSI driver make each worker disk from golden image "cozy-public/talos-worker-abc-v1.13.6" on StorageClass "local" (csi-clone, StorageProfile local status.cloneStrategy), and that class is node-local: it states linstor.csi.linbit.com/allowRemoteVolumeAccess: "false" and one replica per volume (the class's parameter linstor.csi.linbit.com/placementCount), and LINSTOR clones a volume onto the nodes that hold its source and adds no replica while one is there, so each clone's only replica is on the golden's node, the only node allowed to attach it. So each worker disk would be made on the golden's node, the only node that can attach it, and every worker VM would run on that one node; the new worker template is held back. To fix it, have the catalog keep this image on a StorageClass whose volumes every node can reach (its spec.storageClass, or the image entry's storageClass) and put the pool on that class; or keep the pool's disks on StorageClass "local" and copy them over the pod network from a golden on such a class, which lands each disk on its worker's node: allow it for this class in the Input's clonePreflight.hostAssistedCopy.storageClasses.`,
		},
		"TopoLVMBindingLate": {
			reason: "WaitForFirstConsumer: a worker scheduled elsewhere never gets its disk.",
			class:  storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "lvm"}, Provisioner: "topolvm.io", VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)},
			want:   `Node pool "tenant-a/demo-md0": CDI would have the CSI driver make each worker disk from golden image "cozy-public/talos-worker-abc-v1.13.6" on StorageClass "lvm" (csi-clone, StorageProfile lvm status.cloneStrategy), and that class is node-local: it states provisioner topolvm.io, and TopoLVM keeps a volume in one node's LVM volume group and makes a clone or a snapshot restore only on its source's node. So CDI asks for each worker disk on the node its VM was scheduled to (volumeBindingMode WaitForFirstConsumer: it copies the claim's volume.kubernetes.io/selected-node onto the clone's claim and pins its prep pod there), but the driver makes it on the golden's node, so a worker scheduled on any other node never gets its disk; the new worker template is held back. To fix it, have the catalog keep this image on a StorageClass whose volumes every node can reach (its spec.storageClass, or the image entry's storageClass) and put the pool on that class; or keep the pool's disks on StorageClass "lvm" and copy them over the pod network from a golden on such a class, which lands each disk on its worker's node: allow it for this class in the Input's clonePreflight.hostAssistedCopy.storageClasses.`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := onClass(tc.class)
			plan := decide.PredictClone(fxImage, tc.class.Name, resource.MustParse("20Gi"), w)
			got := decide.GateOnClonePlan(decide.PreflightInput{Pool: fxPoolID, Image: fxImage, Class: tc.class.Name, Placement: decide.PlacementOf(tc.class.Name, tc.class.Name, w)}, plan)
			if diff := cmp.Diff(&decide.Hold{Reason: decide.ReasonNodeLocalClass, Message: tc.want}, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// onNodeLocalClass is a Succeeded 6Gi golden on class name, today's
// default, made by provisioner with parameters and volumeBindingMode mode,
// which CDI clones by strategy.
func onNodeLocalClass(name, provisioner, mode string, params map[string]any, strategy string) worldFixture {
	w := succeeded
	w.goldenDV = goldenDV("Succeeded", nil)
	_ = unstructured.SetNestedField(w.goldenDV.Object, name, "spec", "storage", "storageClassName")
	w.goldenPVC = goldenPVC(name)
	sc := expandable(storageClassObj(name, "2025-06-01T00:00:00Z", map[string]any{storageclass.AnnDefault: "true"}))
	sc.Object["provisioner"] = provisioner
	if mode != "" {
		sc.Object["volumeBindingMode"] = mode
	}
	if params != nil {
		sc.Object["parameters"] = params
	}
	w.classes = []*unstructuredT{sc}
	w.profiles = []*unstructuredT{storageProfile(name, strategy)}
	return w
}

// TestNodeLocalClassHoldsOnlyANewTemplate: a new clone template on a class
// whose driver makes every disk on the golden's node is held with
// NodeLocalClass; a template already composed on it runs on, untouched;
// copies and classes every node reaches are not held by it.
func TestNodeLocalClassHoldsOnlyANewTemplate(t *testing.T) {
	spec := map[string]any{"osImage": builtin()}
	const linstor = "linstor.csi.linbit.com"
	localOnly := map[string]any{"linstor.csi.linbit.com/placementCount": "1", "linstor.csi.linbit.com/allowRemoteVolumeAccess": "false"}
	cozystackLocal := map[string]any{"linstor.csi.linbit.com/layerList": "storage", "linstor.csi.linbit.com/allowRemoteVolumeAccess": "false"}
	remote := map[string]any{"linstor.csi.linbit.com/placementCount": "1", "linstor.csi.linbit.com/allowRemoteVolumeAccess": "true"}
	allowCopy := func(c *config.Config) { c.AllowHostAssistedCopy = true }
	// The same class under a provisioner nothing is known of: the template
	// a release before this check composed.
	composedBefore := composeOnce(t, spec, onNodeLocalClass("local", "csi.example.com", "", nil, "csi-clone"), mdReady(1))

	cases := map[string]struct {
		reason   string
		world    worldFixture
		observed map[fnresource.Name]fnresource.ObservedComposed
		config   func(*config.Config)
		want     string // "<state>/<reason>"
	}{
		"LINSTORWithoutRemoteAccessIsHeld": {
			reason: "One replica on the golden's node, attachable there alone.",
			world:  onNodeLocalClass("local", linstor, "Immediate", localOnly, "csi-clone"), want: "Held/NodeLocalClass",
		},
		"CozystackLocalClassIsHeld": {
			reason: "layerList storage, remote access false, WaitForFirstConsumer: the class cozystack installs as local.",
			world:  onNodeLocalClass("local", linstor, "WaitForFirstConsumer", cozystackLocal, "csi-clone"), want: "Held/NodeLocalClass",
		},
		"TopoLVMSnapshotStrategyIsHeld": {
			reason: "A snapshot restore is made on the source's node too.",
			world: func() worldFixture {
				w := onNodeLocalClass("lvm", "topolvm.io", "WaitForFirstConsumer", nil, "snapshot")
				w.snapshotClasses = []*unstructuredT{obj("snapshot.storage.k8s.io/v1", "VolumeSnapshotClass", "", "lvm", map[string]any{"driver": "topolvm.io"})}
				return w
			}(),
			want: "Held/NodeLocalClass",
		},
		"TopoLVMCopiedByCDIsAdviceIsAHostAssistedCopy": {
			reason: "CDI's StorageProfile advice for TopoLVM is copy: the copy hold says so.",
			world:  onNodeLocalClass("lvm", "topolvm.io", "WaitForFirstConsumer", nil, "copy"), want: "Held/HostAssistedCopy",
		},
		"TopoLVMCopiesAcceptedAreComposed": {
			reason: "An accepted copy is made on each worker's node.",
			world:  onNodeLocalClass("lvm", "topolvm.io", "WaitForFirstConsumer", nil, "copy"), config: allowCopy, want: "Open/TemplateComposed",
		},
		"LocalPathIsAHostAssistedCopy": {
			reason: "rancher.io/local-path is no CSI driver: CDI copies whatever the profile says (NoPopulator).",
			world:  onNodeLocalClass("local-path", "rancher.io/local-path", "WaitForFirstConsumer", nil, "csi-clone"), want: "Held/HostAssistedCopy",
		},
		"LINSTORWithRemoteAccessIsComposed": {
			reason: "A diskless node attaches the clone: every node reaches it.",
			world:  onNodeLocalClass("local", linstor, "Immediate", remote, "csi-clone"), want: "Open/TemplateComposed",
		},
		"UnknownLateBindingClassIsComposed": {
			reason: "WaitForFirstConsumer alone is no statement of node locality.",
			world:  onNodeLocalClass("local", "csi.example.com", "WaitForFirstConsumer", nil, "csi-clone"), want: "Open/TemplateComposed",
		},
		"ComposedTemplateOnNodeLocalClassRunsOn": {
			reason:   "Only a new template is gated: the running pool is neither rolled nor dropped.",
			world:    onNodeLocalClass("local", linstor, "Immediate", localOnly, "csi-clone"),
			observed: composedBefore, want: "Open/TemplateComposed",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := request(t, nodePoolXR(spec), tc.world, tc.observed)
			if tc.config != nil {
				tc.config(&r.Config)
			}
			got := summarize(composetest.Run(Mode{}, r).Output)
			if diff := cmp.Diff(tc.want, got.Gate); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			if tc.observed != nil {
				want := summarize(composetest.Run(Mode{}, request(t, nodePoolXR(spec), onNodeLocalClass("local", "csi.example.com", "", nil, "csi-clone"), tc.observed)).Output)
				if diff := cmp.Diff(want.Resources, got.Resources); diff != "" {
					t.Errorf("%s: the running pool's resources change\n-want, +got:\n%s", tc.reason, diff)
				}
			}
		})
	}
}
