package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// Clone claims CDI left behind in the golden's namespace do not hold a
// scale-up (issue 34, item 5). The field leaks them (CDI #3470: a tmp-pvc
// Lost beside a clone that never finished; cozystack #2908: one a prep pod
// still mounts, terminating for hours), so the scenario makes them itself,
// the way CDI v1.65.0 makes its claims: pkg/controller/clone/planner.go
// createDesiredClaim names the claim tmp-pvc-<target claim UID> in the
// source's namespace and copies the target claim's labels, annotations and
// spec onto it; the phase that creates it adds cdi.kubevirt.io/OwnedByUID
// (csi-clone.go AddOwnershipLabel). The target claims live in a tenant
// namespace of their own, which no pool reads.
//
// The Lost claim becomes Lost the way CDI's own do: its volume is rebound
// to the target (CDI common/util.go Rebind points the PV's claimRef at the
// target claim), and the real kube-controller-manager's PV binder then
// marks the claim Lost ("ClaimMisbound", Kubernetes v1.35.0
// pkg/controller/volume/persistentvolume/pv_controller.go syncBoundClaim: a
// bound claim whose volume names another claimant). Deleting the volume
// would not do it here: the API server's StorageObjectInUseProtection
// admission puts kubernetes.io/pv-protection on every PV, and the PV
// protection controller keeps a Bound PV until it is released
// (pkg/controller/volume/pvprotection/pv_protection_controller.go
// isBeingUsed), so the binder would go on seeing the volume. The volume
// plays the storage's part: a hostPath PV with Retain, pre-bound to the
// claim as a provisioner binds what it made.
//
// The terminating claim is held by a finalizer of the suite's, as
// kubernetes.io/pvc-protection holds one a pod still mounts (the suite runs
// no kubelet that would keep such a pod).

const (
	// goldenLabel is the function's label of a golden and of every disk
	// that clones it (internal/labels Golden); CDI copies it from the
	// target claim onto its tmp-pvc.
	goldenLabel = "workerimage.cozystack.io/golden"
	// ownedByUIDLabel is CDI's label of its claims with the target's UID
	// (pkg/controller/common/util.go LabelOwnedByUID, v1.65.0).
	ownedByUIDLabel = "cdi.kubevirt.io/OwnedByUID"
	// holdFinalizer keeps the terminating claim.
	holdFinalizer = "e2e.workerimage.cozystack.io/hold"
	// leakedClaimAfter is the scenario's cloneBudget.leakedClaimAfter: the
	// least the Input takes (internal/config minLeakedClaimAfter).
	leakedClaimAfter = time.Minute
)

// leakedClaims are the claims the scenario left in the golden's namespace.
type leakedClaims struct {
	Lost, Terminating string
}

// leakCloneClaims makes, in goldenNamespace, a tmp-pvc of golden left Lost
// and one left terminating, each for a target claim in tenant that is
// labelled as another pool's worker disk of golden, and waits until both
// are past leakedClaimAfter (Lost since its creation, terminating since its
// deletion), as internal/clonebudget CountClaims times them.
func leakCloneClaims(t *testing.T, tenant, golden string) leakedClaims {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	kube := cp.Kube
	inNamespace(t, tenant)
	dv, err := cp.Existing(ctx, harness.DataVolume, goldenNamespace, golden)
	if err != nil {
		t.Fatal(err)
	}
	goldenHash := dv.GetLabels()[goldenLabel]
	if goldenHash == "" {
		t.Fatalf("golden DataVolume %s/%s has no %s label", goldenNamespace, golden, goldenLabel)
	}
	class := harness.DefaultStorageClass
	// A worker disk's claim of another pool, as KubeVirt and CDI make it
	// from the pool's dataVolumeTemplate: the pool's and the golden's
	// labels. The pool label's value is no pool's of this scenario.
	target := func(name, volume string) *corev1.PersistentVolumeClaim {
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tenant, Labels: map[string]string{
				poolLabel:   "leaked0other0pool",
				goldenLabel: goldenHash,
				"app":       "containerized-data-importer",
			}},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: &class,
				// Named, so that the provisioner stand-in leaves it alone
				// (it provisions claims with no volumeName) until the
				// rebind hands it that volume.
				VolumeName: volume,
				Resources:  corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
		got, err := kube.CoreV1().PersistentVolumeClaims(tenant).Create(ctx, pvc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	// CDI's tmp-pvc of a target (planner.go createDesiredClaim), with the
	// OwnedByUID label its phase adds.
	tmpClaim := func(tgt *corev1.PersistentVolumeClaim, finalizers ...string) *corev1.PersistentVolumeClaim {
		labels := map[string]string{ownedByUIDLabel: string(tgt.UID)}
		for k, v := range tgt.Labels {
			labels[k] = v
		}
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "tmp-pvc-" + string(tgt.UID), Namespace: goldenNamespace, Labels: labels, Finalizers: finalizers},
			Spec:       *tgt.Spec.DeepCopy(),
		}
		got, err := kube.CoreV1().PersistentVolumeClaims(goldenNamespace).Create(ctx, pvc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	pvName := "e2e-leaked-" + tenant
	lostTarget := target("lost-target", pvName)
	lost := tmpClaim(lostTarget)
	// The terminating one's volume never exists: it stays Pending until
	// deleted, as cozystack #2908's WaitForFirstConsumer claim did.
	stuckTarget := target("stuck-target", "e2e-never-"+tenant)
	stuck := tmpClaim(stuckTarget, holdFinalizer)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		for _, c := range []*corev1.PersistentVolumeClaim{lost, stuck} {
			if _, err := kube.CoreV1().PersistentVolumeClaims(c.Namespace).Patch(ctx, c.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Logf("cleanup: %v", err)
			}
			if err := kube.CoreV1().PersistentVolumeClaims(c.Namespace).Delete(ctx, c.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Logf("cleanup: %v", err)
			}
		}
		for _, n := range []string{lostTarget.Name, stuckTarget.Name} {
			if err := kube.CoreV1().PersistentVolumeClaims(tenant).Delete(ctx, n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Logf("cleanup: %v", err)
			}
		}
		// No PV protection controller runs to take its finalizer off.
		if _, err := kube.CoreV1().PersistentVolumes().Patch(ctx, pvName, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Logf("cleanup: %v", err)
		}
		if err := kube.CoreV1().PersistentVolumes().Delete(ctx, pvName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Logf("cleanup: %v", err)
		}
	})
	if err := kube.CoreV1().PersistentVolumeClaims(goldenNamespace).Delete(ctx, stuck.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// The volume, pre-bound to the tmp-pvc; the PV binder binds them.
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: corev1.PersistentVolumeSpec{
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			StorageClassName:              class,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + pvName}},
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: goldenNamespace, Name: lost.Name, UID: lost.UID},
		},
	}
	if _, err := kube.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	claimPhase := func(ns, name string, want corev1.PersistentVolumeClaimPhase) {
		t.Helper()
		cp.Eventually(t, 2*time.Minute, fmt.Sprintf("PVC %s/%s to be %s", ns, name, want), func(ctx context.Context) error {
			c, err := kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if c.Status.Phase != want {
				return fmt.Errorf("phase %q", c.Status.Phase)
			}
			return nil
		})
	}
	claimPhase(goldenNamespace, lost.Name, corev1.ClaimBound)
	// CDI's RebindPhase: the volume goes to the target claim.
	cp.Eventually(t, time.Minute, "PV "+pvName+" to be rebound to "+tenant+"/"+lostTarget.Name, func(ctx context.Context) error {
		v, err := kube.CoreV1().PersistentVolumes().Get(ctx, pvName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		v.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: tenant, Name: lostTarget.Name, UID: lostTarget.UID}
		_, err = kube.CoreV1().PersistentVolumes().Update(ctx, v, metav1.UpdateOptions{})
		return err
	})
	claimPhase(tenant, lostTarget.Name, corev1.ClaimBound)
	claimPhase(goldenNamespace, lost.Name, corev1.ClaimLost)

	// Past the bound: the Lost one since its creation, the terminating one
	// since its deletion (the later of the two), with a margin for the
	// function's next call.
	s, err := kube.CoreV1().PersistentVolumeClaims(goldenNamespace).Get(ctx, stuck.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.DeletionTimestamp == nil {
		t.Fatalf("PVC %s/%s is not terminating: finalizers %v", goldenNamespace, stuck.Name, s.Finalizers)
	}
	past := s.DeletionTimestamp.Add(leakedClaimAfter + 5*time.Second)
	if l := lost.CreationTimestamp.Add(leakedClaimAfter + 5*time.Second); l.After(past) {
		past = l
	}
	t.Logf("leaked clone claims in %s: %s Lost (created %s), %s terminating (deleted %s, finalizers %v); waiting until %s, past cloneBudget.leakedClaimAfter %s",
		goldenNamespace, lost.Name, lost.CreationTimestamp.UTC().Format(time.RFC3339), stuck.Name, s.DeletionTimestamp.UTC().Format(time.RFC3339), s.Finalizers, past.UTC().Format(time.RFC3339), leakedClaimAfter)
	time.Sleep(time.Until(past))
	return leakedClaims{Lost: lost.Name, Terminating: stuck.Name}
}

// On the real CDI, Cluster API and kube-controller-manager, a pool with a
// clone budget of 2 on its class, whose golden's namespace holds two clone
// claims CDI left behind past cloneBudget.leakedClaimAfter (one Lost, one
// terminating; together enough to use up the budget if they were counted),
// scales from 0 to 4 workers: every worker disk ends Succeeded, the
// MachineDeployment reaches 4 replicas with 4 Machines, no sample has more
// than 2 of its disks cloning, the budget counts none of the leaked claims
// as another pool's clone, and CloneCapacity names them, each kind apart.
func TestLeakedCloneClaimsDoNotHoldAScaleUp(t *testing.T) {
	const workers, budget = 4, 2
	var leaked leakedClaims
	run := scaleUpUnderBudgetWith(t, "e2e-leaks", "leaks1", "leaked-claims", workers, budget, budgetCloneDuration, 8*time.Minute, budgetOptions{
		Input: func(input map[string]any) error {
			return unstructured.SetNestedField(input, leakedClaimAfter.String(), "cloneBudget", "leakedClaimAfter")
		},
		BeforeScale: func(t *testing.T, golden string) { leaked = leakCloneClaims(t, "e2e-leaks-tenant", golden) },
	})
	for _, l := range run.timeline(5 * time.Second) {
		t.Logf("timeline: %s", l)
	}
	t.Logf("budget %d with 2 leaked claims: at most %d cloning; all %d Succeeded after %s, settled after %s",
		budget, run.MaxCloning, workers, run.ToSucceeded.Round(100*time.Millisecond), run.ToSettled.Round(time.Second))

	// What the budget read of other pools while the pool grew.
	var named int
	seen := map[string]bool{}
	for _, s := range run.Samples {
		m := s.CapacityMessage
		if !seen[m] {
			seen[m] = true
			t.Logf("CloneCapacity at t=%.1fs: %s %s", s.At.Seconds(), s.Capacity, m)
		}
		if s.Cloning > budget {
			t.Errorf("more than %d worker DataVolumes cloning: %s", budget, s)
		}
		if !strings.Contains(m, "of other pools'") {
			continue // other pools' clones not read on this call
		}
		if !strings.Contains(m, "0 of other pools')") {
			t.Errorf("CloneCapacity counts other pools' clones, with only leaked claims there: %s", m)
		}
		// The leaked names appear only in the "not counted" parts.
		counted, _, _ := strings.Cut(m, "not counted")
		if strings.Contains(counted, leaked.Lost) || strings.Contains(counted, leaked.Terminating) {
			t.Errorf("CloneCapacity names a leaked claim among those counted: %s", m)
		}
		lostPart := fmt.Sprintf("not counted: 1 claim(s) CDI left behind in %s, Pending or Lost for over %s (cloneBudget.leakedClaimAfter), which no clone runs through; remove them with kubectl delete pvc -n %s %s", goldenNamespace, leakedClaimAfter, goldenNamespace, leaked.Lost)
		stuckPart := fmt.Sprintf("not counted: 1 claim(s) in %s terminating for over %s, held by a finalizer (%s)", goldenNamespace, leakedClaimAfter, leaked.Terminating)
		if strings.Contains(m, lostPart) && strings.Contains(m, stuckPart) {
			named++
		}
	}
	if named == 0 {
		t.Errorf("no sample's CloneCapacity named the Lost claim %s and the terminating claim %s apart, each with its fix", leaked.Lost, leaked.Terminating)
	}
	last := run.Samples[len(run.Samples)-1]
	if last.Succeeded != workers || last.Cloning != 0 || last.Failed != 0 || last.Replicas != workers || last.Machines != workers {
		t.Errorf("at the end: %s; want %d Succeeded worker disks, %d replicas and Machines", last, workers, workers)
	}
	nothingRefusedIn(t, run.NS)
}
