package nodepool

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	fnresource "github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/internal/cloneplan"
	"github.com/cozystack/function-worker-image/internal/compose/composetest"
	"github.com/cozystack/function-worker-image/internal/required"
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

	cases := map[string]struct {
		reason string
		plan   cloneplan.Plan
		waived bool
		allow  bool
		want   string // hold reason, "" for none
	}{
		"CSICloneIsLetThrough":                {reason: "A clone on the storage layer is what the golden is for.", plan: csi},
		"CopyIsHeld":                          {reason: "A host-assisted copy streams the image through the pod network per worker.", plan: copied, want: ReasonHostAssistedCopy},
		"CopyAcceptedOnPurposeIsLetThrough":   {reason: "clonePreflight.allowHostAssistedCopy accepts the copies.", plan: copied, allow: true},
		"RefusedCloneIsHeld":                  {reason: "A clone CDI refuses needs someone to act.", plan: refused, want: ReasonCloneWouldFail},
		"MissingCapacityIsHeldUntilChecked":   {reason: "CDI retries until the golden claim has status.capacity; a template let through now would never be checked.", plan: capacityMissing, want: ReasonClonePlanPending},
		"MissingSourceIsHeldUntilChecked":     {reason: "CDI waits for a source PVC it has not found (CloneWithoutSource).", plan: sourceMissing, want: ReasonClonePlanPending},
		"MissingProfileIsHeldUntilChecked":    {reason: "CDI waits for the class's StorageProfile.", plan: profileMissing, want: ReasonClonePlanPending},
		"WaivedGoldenDoesNotHoldOnItsSource":  {reason: "A pool that cloned a golden no longer ready is not held by the golden's later fate, here or in the golden gate.", plan: capacityMissing, waived: true},
		"WaivedGoldenStillWaitsForTheProfile": {reason: "The target class's StorageProfile is not the golden's fate: the pool's next disks need it.", plan: profileMissing, waived: true, want: ReasonClonePlanPending},
		"AllowCopyDoesNotSkipAPendingPlan":    {reason: "Accepting copies is no reason to let an unchecked plan through: it may still be a refusal.", plan: capacityMissing, allow: true, want: ReasonClonePlanPending},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := gateOnClonePlan(preflightInput{Pool: p, Image: img, Class: "replicated", AllowCopy: tc.allow, GoldenWaived: tc.waived, Recheck: 15 * time.Second}, tc.plan)
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
	w := world{
		GoldenPVC:      &claim,
		StorageClasses: []storagev1.StorageClass{{ObjectMeta: metav1.ObjectMeta{Name: "replicated"}, Provisioner: "csi.example.com", AllowVolumeExpansion: ptr.To(true)}},
	}
	w.Clone.Profiles = []cdiv1.StorageProfile{{ObjectMeta: metav1.ObjectMeta{Name: "replicated"}, Status: cdiv1.StorageProfileStatus{
		CloneStrategy:     ptr.To(cdiv1.CloneStrategyCsiClone),
		ClaimPropertySets: []cdiv1.ClaimPropertySet{{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, VolumeMode: block}},
	}}}
	plan := predictClone(fxImage, "replicated", resource.MustParse("20Gi"), w)
	got := gateOnClonePlan(preflightInput{Pool: fxPoolID, Image: fxImage, Class: "replicated", Recheck: 15 * time.Second}, plan)
	want := &hold{Reason: ReasonClonePlanPending, Message: `Node pool "tenant-a/demo-md0": CDI cannot plan the clone of golden image "cozy-public/talos-worker-abc-v1.13.6" onto StorageClass "replicated" yet, because PVC cozy-public/talos-worker-abc-v1.13.6 has no status.capacity.storage yet (status.phase Pending) (CDI reports Error: "source/target size info missing" and retries). Until it can, the pre-flight cannot tell a CSI clone from a host-assisted copy, so the new worker template is held back, re-checked every 15s (the Input's polling.inProgress), and the pool's existing resources are kept as they are. No action is needed, the hold lifts by itself; if status.capacity stays unset, find out why PVC cozy-public/talos-worker-abc-v1.13.6 is not Bound (kubectl describe pvc): CDI decides from that capacity whether the clone must grow.`}
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
			d, other := volumeDriver(tc.pvc, tc.pv)
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
			if diff := cmp.Diff(tc.want, goldenVolumeToRead(tc.pvc, classes)); diff != "" {
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
	pv := required.Selectors{reqGoldenPV: required.ByName("v1", "PersistentVolume", "", fxGoldenVolume)}
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
