package nodepool

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	fnresource "github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/capacity"
	"github.com/cozystack/function-worker-image/internal/clonebudget"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/emit"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/nodepool/render"
	"github.com/cozystack/function-worker-image/internal/poolspec"
)

// capacityNamespace is where LINSTOR's external-provisioner publishes its
// CSIStorageCapacity objects.
const capacityNamespace = "piraeus-datastore"

// segment is a CSIStorageCapacity of class with capacity free, and
// maxVolume as its maximumVolumeSize ("" publishes none).
func segment(name, class, free, maxVolume string) storagev1.CSIStorageCapacity {
	c := storagev1.CSIStorageCapacity{StorageClassName: class, Capacity: ptr.To(resource.MustParse(free))}
	c.Name, c.Namespace = name, capacityNamespace
	if maxVolume != "" {
		c.MaximumVolumeSize = ptr.To(resource.MustParse(maxVolume))
	}
	return c
}

// segmentObj is segment as Crossplane sends it.
func segmentObj(name, class, free, maxVolume string) *unstructuredT {
	f := map[string]any{
		"storageClassName": class, "capacity": free,
		"nodeTopology": map[string]any{"matchLabels": map[string]any{"linbit.com/hostname": name}},
	}
	if maxVolume != "" {
		f["maximumVolumeSize"] = maxVolume
	}
	return obj("storage.k8s.io/v1", pool.KindCSIStorageCapacity, capacityNamespace, name, f)
}

// linstorParams are a LINSTOR class's parameters keeping copies replicas
// ("" keeps LINSTOR's default).
func linstorParams(copies string) map[string]string {
	p := map[string]string{"linstor.csi.linbit.com/storagePool": "data"}
	if copies != "" {
		p["linstor.csi.linbit.com/placementCount"] = copies
	}
	return p
}

// linstorClass is class replicated on LINSTOR keeping copies replicas; with
// copies "-" it is on a provisioner that names no count.
func linstorClass(copies string) storagev1.StorageClass {
	sc := storagev1.StorageClass{Provisioner: capacity.ProvisionerLINSTOR, Parameters: linstorParams(copies)}
	if copies == "-" {
		sc = storagev1.StorageClass{Provisioner: "csi.example.com"}
	}
	sc.Name = "replicated"
	return sc
}

// linstorClassObj is the fixture's default class, expandable, on LINSTOR
// keeping copies replicas, as Crossplane sends it.
func linstorClassObj(copies string) *unstructuredT {
	sc := defaultClass[0].DeepCopy()
	sc.Object["provisioner"] = capacity.ProvisionerLINSTOR
	params := map[string]any{}
	for k, v := range linstorParams(copies) {
		params[k] = v
	}
	sc.Object["parameters"] = params
	return sc
}

// goldenClaimOf is the golden's claim with status.capacity size ("" none).
func goldenClaimOf(size string) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{}
	pvc.Name, pvc.Namespace = fxGolden, "cozy-public"
	if size != "" {
		pvc.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}
	}
	return pvc
}

// capacityOutcome is the decision predictCapacity leaves and what it
// predicted.
type capacityOutcome struct {
	Replicas, MaxSurge, MaxSize, Waiting int32
	SurgeLowered                         bool
	Starting, Fit                        int32
	Known, Limited, TooLarge             bool
}

// predictFor runs predictCapacity for pool p with a clone budget of budget
// and in in flight, a 20Gi disk of the 6Gi golden onto class replicated
// (linstorClass(copies)) publishing segments.
func predictFor(t *testing.T, p clonebudget.Pool, budget int32, in clonebudget.InFlight, copies string, segments []storagev1.CSIStorageCapacity) (decide.BudgetPlan, decide.CapacityPlan) {
	t.Helper()
	pl := decide.Plan{
		Shape: pool.Shape{Size: poolspec.Size{DiskSize: resource.MustParse("20Gi")}},
		Required: read.Required{
			StorageClasses:    []storagev1.StorageClass{linstorClass(copies)},
			StorageCapacities: segments,
			GoldenPVC:         goldenClaimOf("6Gi"),
		},
	}
	b := decide.BudgetPlan{Applies: true, Class: "replicated", Pool: p, Decision: clonebudget.Decide(budget, in, p)}
	cp := decide.PredictCapacity(pl, testConfig(t), &b)
	return b, cp
}

func TestPredictCapacity(t *testing.T) {
	fixed := func(wanted int32, current *int32) clonebudget.Pool {
		return clonebudget.Pool{Wanted: wanted, Current: current, Surge: max(wanted, 1), Unavailable: 1}
	}
	// An autoscaled pool's Wanted is the resolved spec.replicas, which it
	// does not set: the default, 1.
	autoscaled := func(current int32) clonebudget.Pool {
		return clonebudget.Pool{Autoscaled: true, Wanted: 1, Current: ptr.To(current), Min: 2, Max: 20, Surge: 20, Unavailable: 1}
	}
	rolling := func(p clonebudget.Pool) clonebudget.Pool { p.Rolling = true; return p }
	two := func(a, b string) []storagev1.CSIStorageCapacity {
		return []storagev1.CSIStorageCapacity{segment("csisc-a", "replicated", a, ""), segment("csisc-b", "replicated", b, "")}
	}
	cases := map[string]struct {
		reason   string
		pool     clonebudget.Pool
		budget   int32
		in       clonebudget.InFlight
		copies   string
		segments []storagev1.CSIStorageCapacity
		want     capacityOutcome
	}{
		"FixedGrowthLimited": {
			reason: "The budget grows a pool at 5 to 10; 200Gi holds 2 clones of (20Gi + 6Gi) × 3 = 78Gi: replicas go to 7.",
			pool:   fixed(30, ptr.To[int32](5)), budget: 5, copies: "3", segments: two("120Gi", "80Gi"),
			want: capacityOutcome{Replicas: 7, MaxSurge: 4, Waiting: 23, SurgeLowered: true, Starting: 5, Fit: 2, Known: true, Limited: true},
		},
		"FixedGrowthFits": {
			reason: "400Gi holds the 5 clones the budget starts (390Gi): the budget's decision stands.",
			pool:   fixed(30, ptr.To[int32](5)), budget: 5, copies: "3", segments: two("200Gi", "200Gi"),
			want: capacityOutcome{Replicas: 10, MaxSurge: 4, Waiting: 20, SurgeLowered: true, Starting: 5, Fit: 5, Known: true},
		},
		"NewPoolNothingFits": {
			reason: "A new pool where not one clone of 26Gi fits in the 25Gi free asks for no Machine.",
			pool:   fixed(30, nil), budget: 5, segments: []storagev1.CSIStorageCapacity{segment("csisc-a", "replicated", "25Gi", "")},
			want: capacityOutcome{Replicas: 0, MaxSurge: 4, Waiting: 30, SurgeLowered: true, Starting: 5, Fit: 0, Known: true, Limited: true},
		},
		"UnboundedBudgetStillChecked": {
			reason: "A budget of 0 bounds nothing, but 400Gi holds 7 clones of (20Gi + 6Gi) × 2: a new pool of 30 asks for 7.",
			pool:   fixed(30, nil), budget: 0, copies: "2", segments: two("250Gi", "150Gi"),
			want: capacityOutcome{Replicas: 7, MaxSurge: 30, Waiting: 23, Starting: 30, Fit: 7, Known: true, Limited: true},
		},
		"AutoscaledMaxLimited": {
			reason: "The budget lets an autoscaled pool at 6 grow to 11; 80Gi holds 3 clones of 26Gi: the node-group max goes to 9.",
			pool:   autoscaled(6), budget: 5, segments: two("40Gi", "40Gi"),
			want: capacityOutcome{Replicas: 1, MaxSurge: 4, MaxSize: 9, Waiting: 11, SurgeLowered: true, Starting: 5, Fit: 3, Known: true, Limited: true},
		},
		"AutoscaledNothingFitsStaysAtCurrent": {
			reason: "No clone fits: the node-group max is the current count, never below it.",
			pool:   autoscaled(6), budget: 5, segments: []storagev1.CSIStorageCapacity{segment("csisc-a", "replicated", "25Gi", "")},
			want: capacityOutcome{Replicas: 1, MaxSurge: 4, MaxSize: 6, Waiting: 14, SurgeLowered: true, Starting: 5, Fit: 0, Known: true, Limited: true},
		},
		"RollSurgeLimited": {
			reason: "A 30-worker roll the budget lets surge 9 (+1 unavailable = 10 clones); 104Gi holds 4 of 26Gi: maxSurge goes to 4 - 1 = 3.",
			pool:   rolling(fixed(30, ptr.To[int32](30))), budget: 10, segments: two("52Gi", "52Gi"),
			want: capacityOutcome{Replicas: 30, MaxSurge: 3, SurgeLowered: true, Starting: 10, Fit: 4, Known: true, Limited: true},
		},
		"RollCountsTheClonesItRuns": {
			reason: "3 of the roll's clones run already (their space is taken): 7 more were to start, 2 fit, so maxSurge is 3 + 2 - 1 = 4.",
			pool:   rolling(fixed(30, ptr.To[int32](30))), budget: 10, in: clonebudget.InFlight{Own: 3}, segments: two("30Gi", "30Gi"),
			want: capacityOutcome{Replicas: 30, MaxSurge: 4, SurgeLowered: true, Starting: 7, Fit: 2, Known: true, Limited: true},
		},
		"RollWithoutUnavailableKeepsOneSurge": {
			reason: "With maxUnavailable 0 Cluster API needs a surge of at least 1, even when nothing fits.",
			pool:   clonebudget.Pool{Wanted: 30, Current: ptr.To[int32](30), Surge: 30, Rolling: true}, budget: 10, segments: []storagev1.CSIStorageCapacity{segment("csisc-a", "replicated", "25Gi", "")},
			want: capacityOutcome{Replicas: 30, MaxSurge: 1, SurgeLowered: true, Starting: 10, Fit: 0, Known: true, Limited: true},
		},
		"AutoscaledRollSurgeLimited": {
			reason: "An autoscaled pool of 20 at its max rolls: its surge of 20 (+1 unavailable) is bounded by its 20 workers, not by the spec's replicas it does not set; 104Gi holds 4: maxSurge goes to 3.",
			pool:   rolling(autoscaled(20)), budget: 0, segments: two("52Gi", "52Gi"),
			want: capacityOutcome{Replicas: 1, MaxSurge: 3, MaxSize: 20, SurgeLowered: true, Starting: 20, Fit: 4, Known: true, Limited: true},
		},
		"NothingPublishedIsUnknownAndUnlimited": {
			reason: "A class without CSIStorageCapacity holds nothing: the budget's decision stands.",
			pool:   fixed(30, ptr.To[int32](5)), budget: 5, copies: "3",
			want: capacityOutcome{Replicas: 10, MaxSurge: 4, Waiting: 20, SurgeLowered: true, Starting: 5, Fit: 5},
		},
		"OnlyAnotherClassPublished": {
			reason: "Another class's capacity says nothing of this one's: unknown.",
			pool:   fixed(30, ptr.To[int32](5)), budget: 5,
			segments: []storagev1.CSIStorageCapacity{segment("csisc-a", "local", "1Gi", "1Gi")},
			want:     capacityOutcome{Replicas: 10, MaxSurge: 4, Waiting: 20, SurgeLowered: true, Starting: 5, Fit: 5},
		},
		"TooLarge": {
			reason: "No segment takes a 20Gi volume (maximumVolumeSize 16Gi): whatever is free, the pool stays at 5.",
			pool:   fixed(30, ptr.To[int32](5)), budget: 5,
			segments: []storagev1.CSIStorageCapacity{segment("csisc-a", "replicated", "300Gi", "16Gi"), segment("csisc-b", "replicated", "200Gi", "12Gi")},
			want:     capacityOutcome{Replicas: 5, MaxSurge: 4, Waiting: 25, SurgeLowered: true, Starting: 5, Fit: 0, Known: true, Limited: true, TooLarge: true},
		},
		"SegmentWithoutMaximumVolumeSizeTakesTheDisk": {
			reason: "A segment that publishes no maximumVolumeSize takes a volume up to its capacity (as the scheduler compares): another segment's small maximum does not hold the pool.",
			pool:   fixed(30, ptr.To[int32](5)), budget: 5,
			segments: []storagev1.CSIStorageCapacity{segment("csisc-a", "replicated", "300Gi", "16Gi"), segment("csisc-b", "replicated", "200Gi", "")},
			want:     capacityOutcome{Replicas: 10, MaxSurge: 4, Waiting: 20, SurgeLowered: true, Starting: 5, Fit: 5, Known: true},
		},
		"DiskLargerThanEverySegmentsCapacity": {
			reason: "Without maximumVolumeSize, a disk larger than what any one segment has free fits nowhere, whatever the sum.",
			pool:   fixed(30, ptr.To[int32](5)), budget: 5, segments: two("15Gi", "15Gi"),
			want: capacityOutcome{Replicas: 5, MaxSurge: 4, Waiting: 25, SurgeLowered: true, Starting: 5, Fit: 0, Known: true, Limited: true, TooLarge: true},
		},
		"ScaleDownOnAFullClassNotHeld": {
			reason: "A scale-down starts no clone: a full class does not hold it.",
			pool:   fixed(4, ptr.To[int32](10)), budget: 5, in: clonebudget.InFlight{Own: 5}, segments: two("0", "4Gi"),
			want: capacityOutcome{Replicas: 4, MaxSurge: 4, Known: true},
		},
		"PoolAtItsCountStartsNothing": {
			reason: "A settled pool starts no clone: nothing to predict.",
			pool:   fixed(3, ptr.To[int32](3)), budget: 5, segments: two("0", "0"),
			want: capacityOutcome{Replicas: 3, MaxSurge: 3, Known: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.want.MaxSize == 0 {
				tc.want.MaxSize = tc.pool.Max
			}
			b, cp := predictFor(t, tc.pool, tc.budget, tc.in, tc.copies, tc.segments)
			got := capacityOutcome{
				Replicas: b.Replicas, MaxSurge: b.MaxSurge, MaxSize: b.MaxSize, Waiting: b.Waiting, SurgeLowered: b.SurgeLowered,
				Starting: cp.Starting, Fit: cp.Fit, Known: cp.Known, Limited: cp.Limited, TooLarge: cp.TooLarge,
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCapacityText(t *testing.T) {
	grow := clonebudget.Pool{Wanted: 30, Current: ptr.To[int32](5), Surge: 30, Unavailable: 1}
	cases := map[string]struct {
		reason   string
		class    string
		pool     clonebudget.Pool
		budget   int32
		copies   string
		segments []storagev1.CSIStorageCapacity
		want     string
	}{
		"DefaultClassUnknown": {
			reason: "Without a class, nothing names what is free.",
			pool:   grow, budget: 5,
			want: "the default class's free capacity is unknown",
		},
		"NothingPublished": {
			reason: "A driver that publishes nothing leaves the capacity unknown, and says where it would come from.",
			class:  "replicated", pool: grow, budget: 5,
			want: "the free capacity of class replicated is unknown: its driver publishes no CSIStorageCapacity for it",
		},
		"NothingStarts": {
			reason: "With no clone starting only what is free is said.",
			class:  "replicated", pool: clonebudget.Pool{Wanted: 3, Current: ptr.To[int32](3), Surge: 3, Unavailable: 1}, budget: 5,
			segments: []storagev1.CSIStorageCapacity{segment("csisc-a", "replicated", "120Gi", ""), segment("csisc-b", "replicated", "80Gi", "")},
			want:     "class replicated publishes 200Gi free in 2 CSIStorageCapacity segment(s)",
		},
		"Headroom": {
			reason: "Clones that fit: what is free, what each needs and why, and the headroom they leave.",
			class:  "replicated", pool: grow, budget: 5, copies: "3",
			segments: []storagev1.CSIStorageCapacity{segment("csisc-a", "replicated", "700Gi", ""), segment("csisc-b", "replicated", "700Gi", ""), segment("csisc-c", "replicated", "700Gi", "")},
			want:     "class replicated publishes 2100Gi free in 3 CSIStorageCapacity segment(s); each clone needs (disk 20Gi + golden 6Gi) × 3 cop(ies) (the class's parameter linstor.csi.linbit.com/placementCount) = 78Gi; the 5 starting need 390Gi, leaving 1710Gi",
		},
		"HeadroomWithLINSTORsDefault": {
			reason: "A LINSTOR class without a count keeps LINSTOR's default, one copy.",
			class:  "replicated", pool: grow, budget: 2,
			segments: []storagev1.CSIStorageCapacity{segment("csisc-a", "replicated", "100Gi", "")},
			want:     "class replicated publishes 100Gi free in 1 CSIStorageCapacity segment(s); each clone needs (disk 20Gi + golden 6Gi) × 1 cop(ies) (LINSTOR's default placementCount) = 26Gi; the 2 starting need 52Gi, leaving 48Gi",
		},
		"HeadroomOnAnotherProvisioner": {
			reason: "A provisioner that names no count keeps one copy as far as Kubernetes can tell.",
			class:  "replicated", pool: grow, budget: 1, copies: "-",
			segments: []storagev1.CSIStorageCapacity{segment("csisc-a", "replicated", "1Ti", "")},
			want:     "class replicated publishes 1Ti free in 1 CSIStorageCapacity segment(s); each clone needs (disk 20Gi + golden 6Gi) × 1 cop(ies) (its provisioner names no replica count) = 26Gi; the 1 starting need 26Gi, leaving 998Gi",
		},
		"Limited": {
			reason: "Fewer fit than were to start: how many of each.",
			class:  "replicated", pool: grow, budget: 5, copies: "3",
			segments: []storagev1.CSIStorageCapacity{segment("csisc-a", "replicated", "120Gi", ""), segment("csisc-b", "replicated", "80Gi", "")},
			want:     "class replicated publishes 200Gi free in 2 CSIStorageCapacity segment(s); each clone needs (disk 20Gi + golden 6Gi) × 3 cop(ies) (the class's parameter linstor.csi.linbit.com/placementCount) = 78Gi; 5 clone(s) were to start and 2 fit",
		},
		"TooLarge": {
			reason: "A disk no segment takes: the largest volume one does.",
			class:  "replicated", pool: grow, budget: 5,
			segments: []storagev1.CSIStorageCapacity{segment("csisc-a", "replicated", "300Gi", "16Gi"), segment("csisc-b", "replicated", "200Gi", "12Gi")},
			want:     "class replicated publishes 500Gi free in 2 CSIStorageCapacity segment(s), but the disk of 20Gi is larger than the largest volume one of its segments takes (16Gi, its maximumVolumeSize or, where it publishes none, its capacity)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, cp := predictFor(t, tc.pool, tc.budget, clonebudget.InFlight{}, tc.copies, tc.segments)
			if diff := cmp.Diff(tc.want, emit.CapacityText(cp, tc.class)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestGoldenSize(t *testing.T) {
	dv := func(size string) *cdiv1.DataVolume {
		d := &cdiv1.DataVolume{}
		d.Spec.Storage = &cdiv1.StorageSpec{Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}}
		return d
	}
	cases := map[string]struct {
		reason string
		w      read.Required
		want   string
	}{
		"ClaimsCapacity": {
			reason: "The golden's claim's status.capacity is what a clone starts at, whatever the DataVolume asked.",
			w:      read.Required{GoldenPVC: goldenClaimOf("8Gi"), GoldenDV: dv("6Gi")},
			want:   "8Gi",
		},
		"DataVolumesRequest": {
			reason: "A claim without capacity yet: the DataVolume's request.",
			w:      read.Required{GoldenPVC: goldenClaimOf(""), GoldenDV: dv("7Gi")},
			want:   "7Gi",
		},
		"InputsGoldenStorage": {
			reason: "Neither read: the Input's golden storage.",
			want:   "6Gi",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := decide.GoldenSize(decide.Plan{Required: tc.w}, testConfig(t))
			if diff := cmp.Diff(tc.want, got.String()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestDecideCapacity runs the capacity prediction through decide: the
// CSIStorageCapacity objects and classes as Crossplane sends them.
func TestDecideCapacity(t *testing.T) {
	fixed := func(n int64) map[string]any { return map[string]any{"osImage": builtin(), "replicas": n} }
	kmt, tct := names(t, fixed(30), succeeded)
	autoscaled := map[string]any{"osImage": builtin(), "minReplicas": int64(2), "maxReplicas": int64(20)}
	// The same autoscaled pool on a bigger disk: its deployment rolls.
	oldAutoscaled := map[string]any{"osImage": builtin(), "minReplicas": int64(2), "maxReplicas": int64(20), "diskSize": "30Gi"}
	oldAkmt, oldAtct := names(t, oldAutoscaled, succeeded)
	on := func(copies string, sets, disks []*unstructuredT) budgetWorld {
		w := budgetWorld{worldFixture: succeeded}
		w.classes = []*unstructuredT{linstorClassObj(copies)}
		w.sets, w.dvs = sets, disks
		return w
	}
	cases := map[string]struct {
		reason   string
		spec     map[string]any
		world    budgetWorld
		observed map[fnresource.Name]fnresource.ObservedComposed
		segments []*unstructuredT
		budget   int32
		want     budgetOutcome
	}{
		"NewPoolStartsWhatFits": {
			reason:   "A new pool of 30 with a budget of 5 on a class keeping 3 copies and publishing 200Gi starts the 2 clones of 78Gi that fit.",
			spec:     fixed(30),
			world:    on("3", nil, nil),
			segments: []*unstructuredT{segmentObj("csisc-a", "replicated", "120Gi", "120Gi"), segmentObj("csisc-b", "replicated", "80Gi", "80Gi")},
			budget:   5,
			want:     budgetOutcome{Applies: true, Replicas: ptr.To[int32](2), MaxSurge: "4", Waiting: 28, Reason: decide.ReasonInsufficientStorageCapacity},
		},
		"PlentyPublishedBudgetDecides": {
			reason:   "What the class publishes holds the 5 the budget allows: the budget decides.",
			spec:     fixed(30),
			world:    on("3", nil, nil),
			segments: []*unstructuredT{segmentObj("csisc-a", "replicated", "700Gi", ""), segmentObj("csisc-b", "replicated", "700Gi", "")},
			budget:   5,
			want:     budgetOutcome{Applies: true, Replicas: ptr.To[int32](5), MaxSurge: "4", Waiting: 25, Reason: emit.ReasonWaitingForCloneBudget},
		},
		"SegmentsOfOtherDriversOrClassesIgnored": {
			reason:   "Only the pool's class's segments are summed: another class's free space does not make room.",
			spec:     fixed(30),
			world:    on("", nil, nil),
			segments: []*unstructuredT{segmentObj("csisc-a", "replicated", "30Gi", ""), segmentObj("csisc-b", "local", "10Ti", "")},
			budget:   5,
			want:     budgetOutcome{Applies: true, Replicas: ptr.To[int32](1), MaxSurge: "4", Waiting: 29, Reason: decide.ReasonInsufficientStorageCapacity},
		},
		"UnboundedBudgetStillChecked": {
			reason:   "A budget of 0 bounds nothing, yet 400Gi holds only 7 clones of (20Gi + 6Gi) × 2.",
			spec:     fixed(30),
			world:    on("2", nil, nil),
			segments: []*unstructuredT{segmentObj("csisc-a", "replicated", "250Gi", ""), segmentObj("csisc-b", "replicated", "150Gi", "")},
			want:     budgetOutcome{Applies: true, Replicas: ptr.To[int32](7), MaxSurge: "30", Waiting: 23, Reason: decide.ReasonInsufficientStorageCapacity},
		},
		"ScaleDownOnAFullClass": {
			reason: "A pool at 10 asked for 4 goes to 4 at once, however full its class.",
			spec:   fixed(4),
			world: on("2", []*unstructuredT{budgetSetObj("ms", kmt, tct, 10, 5)},
				slices.Concat(cloningDisks("a", 5, "Succeeded"), cloningDisks("b", 5, "CloneInProgress"))),
			observed: composeOnce(t, fixed(30), succeeded, scaledTo(10, 5)),
			segments: []*unstructuredT{segmentObj("csisc-a", "replicated", "0", "0"), segmentObj("csisc-b", "replicated", "4Gi", "4Gi")},
			budget:   5,
			want:     budgetOutcome{Applies: true, InFlight: clonebudget.InFlight{Own: 5}, Replicas: ptr.To[int32](4), MaxSurge: "4", Reason: emit.ReasonWithinCloneBudget},
		},
		"AutoscaledRollBoundedByItsWorkers": {
			reason: "An autoscaled pool of 20 moved onto a new template rolls with maxSurge 20: 104Gi holds 4 clones of 26Gi, so maxSurge goes to 3 (+1 unavailable).",
			spec:   autoscaled,
			world: on("", []*unstructuredT{budgetSetObj("old", oldAkmt, oldAtct, 20, 20)},
				cloningDisks("a", 20, "Succeeded")),
			observed: composeOnce(t, oldAutoscaled, succeeded, scaledTo(20, 20)),
			segments: []*unstructuredT{segmentObj("csisc-a", "replicated", "52Gi", ""), segmentObj("csisc-b", "replicated", "52Gi", "")},
			want:     budgetOutcome{Applies: true, Rolling: true, MaxSurge: "3", MaxSize: "20", Reason: decide.ReasonInsufficientStorageCapacity},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pl := decideWithCapacity(t, tc.spec, tc.world, tc.observed, tc.budget, tc.segments)
			got := outcomeOf(pl)
			// An autoscaled deployment's replicas are the autoscaler's.
			got.Replicas = nil
			if _, ok := tc.spec["replicas"]; ok && pl.MachineDeployment != nil {
				got.Replicas = pl.MachineDeployment.Spec.Replicas
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// decideWithCapacity is decideWith with segments answering the
// CSIStorageCapacity requirement.
func decideWithCapacity(t *testing.T, spec map[string]any, w budgetWorld, observed map[fnresource.Name]fnresource.ObservedComposed, budget int32, segments []*unstructuredT) decide.Plan {
	t.Helper()
	r := request(t, nodePoolXR(spec), w.worldFixture, observed)
	r.Now = budgetNow
	r.Config.CloneBudget.Default = budget
	r.Raw[read.ReqCloneClaims] = wire(t, w.claims...)
	r.Required[read.ReqStorageCapacities] = segments
	return decided(t, r)
}

// TestCapacityOfSnapshotRestores: a template that restores its disks from
// the golden's snapshot makes the disk alone per clone, no copy of the
// golden; so does one that copies the golden from another class; one that
// clones the golden's PVC counts both.
func TestCapacityOfSnapshotRestores(t *testing.T) {
	grow := clonebudget.Pool{Wanted: 30, Current: ptr.To[int32](5), Surge: 30, Unavailable: 1}
	template := func(source map[string]any, annotations map[string]any) *composed.Unstructured {
		u := composed.New()
		meta := map[string]any{"name": pool.DiskTemplateName}
		if annotations != nil {
			meta["annotations"] = annotations
		}
		u.Object = map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"virtualMachineTemplate": map[string]any{"spec": map[string]any{
			"dataVolumeTemplates": []any{map[string]any{"metadata": meta, "spec": map[string]any{"source": source}}},
		}}}}}}
		return u
	}
	cases := map[string]struct {
		reason      string
		source      map[string]any
		annotations map[string]any
		want        string
	}{
		"CopyFromTheGoldenOnAnotherClass": {
			reason:      "A host-assisted copy makes CDI's tmp-pvc of the disk's class and size, which becomes the disk, and reads the golden on its own class: 20Gi × 3 each, 3 of the 5 fit.",
			source:      map[string]any{"pvc": map[string]any{"namespace": "cozy-public", "name": "golden"}},
			annotations: map[string]any{labels.AnnCDICloneType: "copy", labels.AnnCopyFromStorageClass: "other"},
			want:        "class replicated publishes 200Gi free in 2 CSIStorageCapacity segment(s); each host-assisted copy from the golden on another class needs disk 20Gi × 3 cop(ies) (the class's parameter linstor.csi.linbit.com/placementCount) = 60Gi; 5 clone(s) were to start and 3 fit",
		},
		"RestoreFromSnapshot": {
			reason: "200Gi holds 3 restores of 20Gi × 3 (60Gi), where it held 2 clones of the PVC: 3 of the 5 start.",
			source: map[string]any{"snapshot": map[string]any{"namespace": "cozy-public", "name": "golden"}},
			want:   "class replicated publishes 200Gi free in 2 CSIStorageCapacity segment(s); each restore from the golden's snapshot needs disk 20Gi × 3 cop(ies) (the class's parameter linstor.csi.linbit.com/placementCount) = 60Gi; 5 clone(s) were to start and 3 fit",
		},
		"CloneOfThePVC": {
			reason: "The same pool cloning the golden's PVC: (20Gi + 6Gi) × 3 each, 2 fit.",
			source: map[string]any{"pvc": map[string]any{"namespace": "cozy-public", "name": "golden"}},
			want:   "class replicated publishes 200Gi free in 2 CSIStorageCapacity segment(s); each clone needs (disk 20Gi + golden 6Gi) × 3 cop(ies) (the class's parameter linstor.csi.linbit.com/placementCount) = 78Gi; 5 clone(s) were to start and 2 fit",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pl := decide.Plan{
				Shape:           pool.Shape{Size: poolspec.Size{DiskSize: resource.MustParse("20Gi")}},
				MachineTemplate: render.MachineTemplate{Desired: template(tc.source, tc.annotations)},
				Required: read.Required{
					StorageClasses:    []storagev1.StorageClass{linstorClass("3")},
					StorageCapacities: []storagev1.CSIStorageCapacity{segment("csisc-a", "replicated", "120Gi", ""), segment("csisc-b", "replicated", "80Gi", "")},
					GoldenPVC:         goldenClaimOf("6Gi"),
				},
			}
			b := decide.BudgetPlan{Applies: true, Class: "replicated", Pool: grow, Decision: clonebudget.Decide(5, clonebudget.InFlight{}, grow)}
			cp := decide.PredictCapacity(pl, testConfig(t), &b)
			if diff := cmp.Diff(tc.want, emit.CapacityText(cp, "replicated")); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
