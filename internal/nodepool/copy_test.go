package nodepool

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	fnresource "github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/capacity"
	"github.com/cozystack/function-worker-image/internal/cdistate"
	"github.com/cozystack/function-worker-image/internal/clonebudget"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/compose/composetest"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/emit"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/nodepool/render"
	"github.com/cozystack/function-worker-image/internal/observed"
	"github.com/cozystack/function-worker-image/internal/storageclass"
)

// listing is a config that lists classes in
// clonePreflight.hostAssistedCopy.storageClasses.
func listing(t testing.TB, classes ...string) config.Config {
	t.Helper()
	c := testConfig(t)
	c.HostAssistedCopyClasses = classes
	return c
}

func TestChooseCopy(t *testing.T) {
	ready := cdistate.State{Kind: cdistate.Succeeded}
	local, replicated := pool.Class{Name: "local", From: "spec.storageClass"}, pool.Class{Name: "replicated", From: "the golden DataVolume's spec"}
	http := fxImage
	http.Source = pool.SourceHTTP
	cases := map[string]struct {
		reason string
		cfg    config.Config
		img    pool.Image
		golden cdistate.State
		pool   pool.Class
		gold   pool.Class
		want   *read.CopyPath
	}{
		"ListedClassCopiesFromTheGoldenOnAnotherClass": {
			reason: "A pool on a listed class, its golden on another: the copy path, naming both classes and the golden.",
			cfg:    listing(t, "local"), img: fxImage, golden: ready, pool: local, gold: replicated,
			want: &read.CopyPath{Class: "local", Golden: "cozy-public/talos-worker-abc-v1.13.6", GoldenClass: "replicated"},
		},
		"UnlistedClassIsNoCopyPath": {
			reason: "Another class listed is no choice for this one.",
			cfg:    listing(t, "lvm"), img: fxImage, golden: ready, pool: local, gold: replicated,
		},
		"NothingListedIsNoCopyPath": {
			reason: "The default: no class copies across.",
			cfg:    testConfig(t), img: fxImage, golden: ready, pool: local, gold: replicated,
		},
		"GoldensOwnClassIsNoCopyPath": {
			reason: "On its golden's class a pool clones as CDI plans it; its fallbacks are allowHostAssistedCopy's alone.",
			cfg:    listing(t, "local"), img: fxImage, golden: ready, pool: local, gold: pool.Class{Name: "local"},
		},
		"MissingGoldenIsNoCopyPath": {
			reason: "Without a golden there is no class to copy from; the golden gate holds.",
			cfg:    listing(t, "local"), img: fxImage, golden: cdistate.State{Kind: cdistate.Missing}, pool: local, gold: replicated,
		},
		"ImportingGoldenIsACopyPathTheGoldenGateHolds": {
			reason: "The choice is the classes'; whether the golden is ready is gateOnGolden's.",
			cfg:    listing(t, "local"), img: fxImage, golden: cdistate.State{Kind: cdistate.Importing}, pool: local, gold: replicated,
			want: &read.CopyPath{Class: "local", Golden: "cozy-public/talos-worker-abc-v1.13.6", GoldenClass: "replicated"},
		},
		"GoldenOfNoClassIsNoCopyPath": {
			reason: "A golden whose class resolves to nothing has nothing to compare.",
			cfg:    listing(t, "local"), img: fxImage, golden: ready, pool: local,
		},
		"HTTPPoolNeverCopies": {
			reason: "An HTTP import has no golden.",
			cfg:    listing(t, "local"), img: http, golden: ready, pool: local, gold: replicated,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := decide.ChooseCopy(tc.cfg, tc.img, tc.golden, tc.pool, tc.gold)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestGateCloneOnTheCopyPath(t *testing.T) {
	six := resource.MustParse("6Gi")
	golden := &cdiv1.DataVolume{Spec: cdiv1.DataVolumeSpec{Storage: &cdiv1.StorageSpec{
		StorageClassName: ptrTo("replicated"),
		Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: six}},
	}}}
	in := func(cfg config.Config, disk string) decide.GateInput {
		g := decide.GateInput{
			Pool: fxPoolID, Image: fxImage, DiskSize: resource.MustParse(disk), GoldenDV: golden,
			Golden:    cdistate.State{Kind: cdistate.Succeeded},
			PoolClass: pool.Class{Name: "local", From: "spec.storageClass"}, GoldenClass: pool.Class{Name: "replicated", From: "the golden DataVolume's spec"},
		}
		g.Copy = decide.ChooseCopy(cfg, g.Image, g.Golden, g.PoolClass, g.GoldenClass)
		return g
	}
	mismatch := &decide.Hold{Reason: decide.ReasonStorageClassMismatch, Message: `Node pool "tenant-a/demo-md0" is on StorageClass "local" (from spec.storageClass) but its golden image "cozy-public/talos-worker-abc-v1.13.6" is on "replicated" (from the golden DataVolume's spec); across StorageClasses CDI falls back to a host-assisted copy over the pod network or leaves the clone to the CSI driver, which can hang, so the new worker template is held back. Neither side can move in place: a golden's class is fixed for its lifetime and a pool's storageClass is immutable. Add "local" to the XWorkerImageCatalog's spec.storageClasses (or to images[].storageClasses of schematicID abc, version v1.13.6): the catalog then keeps golden cozy-public/talos-worker-abc-v1.13.6-amd64-25bf8e1a23 on that class, which this pool clones as soon as it is Succeeded (a node-local class cannot serve clones to every node: for one, copy instead); or, to copy each worker disk from this golden by CDI's host-assisted clone (one full copy per worker over the pod network, in the cluster), list "local" in the Input's clonePreflight.hostAssistedCopy.storageClasses; or switch the pool to osImage.factory.`}
	cases := map[string]struct {
		reason string
		in     decide.GateInput
		want   *decide.Hold
	}{
		"ListedClassLiftsTheMismatchHold": {
			reason: "The copy across the classes is the operator's choice: no StorageClassMismatch.",
			in:     in(listing(t, "local"), "20Gi"),
		},
		"UnlistedClassKeepsTheMismatchHoldNamingTheFix": {
			reason: "Not listed, the pool is held as before, and the message names the list as one fix.",
			in:     in(listing(t, "lvm"), "20Gi"), want: mismatch,
		},
		"ListedClassStillNeedsADiskAsLargeAsTheGolden": {
			reason: "The size floor still holds: cdi-upload-server cannot write a 6Gi image into less.",
			in:     in(listing(t, "local"), "4Gi"),
			want:   &decide.Hold{Reason: decide.ReasonDiskTooSmall, Message: `Node pool "tenant-a/demo-md0": spec.diskSize 4Gi is smaller than golden image "cozy-public/talos-worker-abc-v1.13.6" storage 6Gi; a CDI clone target must be at least the source size, so the new worker template is held back. Raise spec.diskSize to 6Gi or larger.`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, decide.GateClone(tc.in)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestCopyOfReadsWhatRenderWrites: a template rendered on the copy path
// says so, with the classes and the golden; any other template does not.
func TestCopyOfReadsWhatRenderWrites(t *testing.T) {
	cfg := testConfig(t)
	spec := v1alpha1.NodePoolSpec{ClusterName: "demo", PoolShape: v1alpha1.PoolShape{OSImage: &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{}}}}
	img, s := resolveOSImage(spec, cfg), resolveShapeOf(t, spec, cfg)
	c := &read.CopyPath{Class: "local", Golden: img.GoldenRef(), GoldenClass: "replicated"}
	cases := map[string]struct {
		reason string
		src    render.DiskSource
		want   *read.CopyPath
	}{
		"CopyTemplateSaysSo":    {reason: "Both annotations on the disk: the copy path, as chosen.", src: render.DiskSource{Copy: c}, want: c},
		"CloneTemplateIsNone":   {reason: "A clone of the golden's PVC asks CDI for nothing.", src: render.DiskSource{}},
		"RestoreTemplateIsNone": {reason: "A restore from the golden's snapshot is no copy.", src: render.DiskSource{FromSnapshot: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mt, err := render.Machine(fxPoolID, img, s, "local", render.Rendering, tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, read.CopyOf(mt.Desired)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
	if got := read.CopyOf(nil); got != nil {
		t.Errorf("no template is no copy path, got %+v", got)
	}
}

func TestCloneHealthOnTheCopyPath(t *testing.T) {
	c := &read.CopyPath{Class: "local", Golden: "cozy-public/talos-worker-abc-v1.13.6", GoldenClass: "replicated"}
	dv := func(name string, ann map[string]string) cdiv1.DataVolume {
		return cdiv1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann}}
	}
	chosen := dv("demo-md0-a-disk-system", map[string]string{labels.AnnCDICloneType: "copy", labels.AnnCopyFromStorageClass: "replicated"})
	fellBack := dv("demo-md0-b-disk-system", map[string]string{labels.AnnCDICloneType: "copy"})
	copying := compose.Condition{Type: decide.ConditionCloneHealthy, Status: compose.StatusTrue, Reason: decide.ReasonHostAssistedCopy,
		Message: `Node pool "tenant-a/demo-md0" copies each worker disk from golden image "cozy-public/talos-worker-abc-v1.13.6" on StorageClass "replicated" onto StorageClass "local" by CDI's host-assisted clone, as the Input's clonePreflight.hostAssistedCopy.storageClasses lists "local": a full copy of the image per worker over the pod network, at most the clone budget of class "local" at once. This was chosen, not a fault; for CSI clones instead, put the pool's disks on the golden's class "replicated" (a new pool: storageClass is immutable). Removing "local" from the list holds the pool's next new template and changes no running one.`}
	cases := map[string]struct {
		reason  string
		dvs     []cdiv1.DataVolume
		reads   read.Reads
		copying *read.CopyPath
		want    compose.Condition
	}{
		"CopyPathIsTrueWithReasonHostAssistedCopy": {
			reason: "The chosen copies are reported, True: no fault, but not silent.",
			dvs:    []cdiv1.DataVolume{chosen}, reads: read.Reads{Workers: true}, copying: c, want: copying,
		},
		"CopyPathSaysSoWithoutReadingTheDisks": {
			reason:  "It comes from the template: a settled pool that reads no disk keeps saying it.",
			copying: c, want: copying,
		},
		"ChosenCopiesAreNoSurpriseAfterTheTemplateMovedOn": {
			reason: "Disks the copy path made, while the pool rolls onto a CSI clone template, are not reported as fallbacks.",
			dvs:    []cdiv1.DataVolume{chosen}, reads: read.Reads{Workers: true},
			want: compose.Condition{Type: decide.ConditionCloneHealthy, Status: compose.StatusTrue, Reason: "NoCloneProblems", Message: `No worker disk of node pool "tenant-a/demo-md0" is waiting for a missing clone source or was cloned by a host-assisted copy.`},
		},
		"FallbackCopyIsStillAFault": {
			reason: "A copy CDI fell back to, without the copy path's mark, is reported False as before, whatever the template.",
			dvs:    []cdiv1.DataVolume{chosen, fellBack}, reads: read.Reads{Workers: true}, copying: c,
			want: compose.Condition{Type: decide.ConditionCloneHealthy, Status: compose.StatusFalse, Reason: "HostAssistedClone", Message: `Node pool "tenant-a/demo-md0": worker DataVolumes demo-md0-b-disk-system in namespace tenant-a were cloned by a host-assisted copy instead of a CSI clone (CDI's cloneType copy; the reason CDI gives is the cdi.kubevirt.io/cloneFallbackReason annotation of each one's PVC); check that the golden and the pool share a StorageClass, CSI driver and volume mode, and that the class allows volume expansion.`},
		},
		"TooManyDisksStaysUnknown": {
			reason: "A pool too large to read reports Unknown, copy path or not.",
			reads:  read.Reads{TooManyWorkers: true, WorkerDisks: 900}, copying: c,
			want: compose.Condition{Type: decide.ConditionCloneHealthy, Status: compose.StatusUnknown, Reason: decide.ReasonTooManyWorkerDisks, Message: decide.MsgTooManyWorkerDisks(fxPoolID, 900, 256)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := decide.CloneHealth(fxPoolID, fxImage, tc.dvs, nil, tc.reads, 256, fxStallBounds, tc.copying)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCopyingResult(t *testing.T) {
	copying := compose.Condition{Type: decide.ConditionCloneHealthy, Status: compose.StatusTrue, Reason: decide.ReasonHostAssistedCopy, Message: "m"}
	was := func(status, reason string) []compose.ObservedCondition {
		return []compose.ObservedCondition{{Type: decide.ConditionCloneHealthy, Status: status, Reason: reason, Message: "old"}}
	}
	cases := map[string]struct {
		reason   string
		c        compose.Condition
		previous []compose.ObservedCondition
		want     []compose.Result
	}{
		"TakingTheCopyPathWarnsOnce": {
			reason: "From NoCloneProblems to the copy path: a Warning with the message.",
			c:      copying, previous: was("True", "NoCloneProblems"),
			want: []compose.Result{{Severity: compose.SeverityWarning, Reason: decide.ReasonHostAssistedCopy, Message: "m"}},
		},
		"FirstCallWarns": {
			reason: "A new pool on the copy path has no previous condition.",
			c:      copying,
			want:   []compose.Result{{Severity: compose.SeverityWarning, Reason: decide.ReasonHostAssistedCopy, Message: "m"}},
		},
		"SteadyStateIsSilent": {
			reason: "Results only on transitions; a changed message alone is none.",
			c:      copying, previous: was("True", decide.ReasonHostAssistedCopy),
		},
		"OtherTrueReasonsAreSilent": {
			reason: "Only the copy path warns while True.",
			c:      compose.Condition{Type: decide.ConditionCloneHealthy, Status: compose.StatusTrue, Reason: "NoCloneProblems"}, previous: was("False", "HostAssistedClone"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []compose.Result
			if r, ok := emit.CopyingResult(tc.c, tc.previous); ok {
				got = append(got, r)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// copyWorld is the cozystack layout of cozystack #2908: a Succeeded 6Gi
// golden on LINSTOR class replicated (the default, every node reaches it),
// and class local of the same driver keeping one replica without remote
// access, binding late. Both profiles say csi-clone, so without the copy
// path CDI would hand LINSTOR a cross-class clone.
func copyWorld() worldFixture {
	w := succeeded
	replicated := expandable(storageClassObj("replicated", "2025-06-01T00:00:00Z", map[string]any{storageclass.AnnDefault: "true"}))
	replicated.Object["provisioner"] = capacity.ProvisionerLINSTOR
	local := expandable(storageClassObj("local", "2025-01-01T00:00:00Z", nil))
	local.Object["provisioner"] = capacity.ProvisionerLINSTOR
	local.Object["volumeBindingMode"] = "WaitForFirstConsumer"
	local.Object["parameters"] = map[string]any{"linstor.csi.linbit.com/placementCount": "1", "linstor.csi.linbit.com/allowRemoteVolumeAccess": "false"}
	w.classes = []*unstructuredT{replicated, local}
	w.profiles = []*unstructuredT{storageProfile("replicated", "csi-clone"), storageProfile("local", "csi-clone")}
	return w
}

// copyOutcome is what a call on the copy path decides, compared whole.
type copyOutcome struct {
	Gate string
	// DiskAsks are the composed current template's disk annotations of
	// the copy path (nil when none).
	DiskAsks     map[string]string
	CloneHealthy string
	// Strategy is the clone the pre-flight predicted ("" when none ran).
	Strategy string
	Results  []string
}

func copyOutcomeOf(out compose.Output, pl decide.Plan) copyOutcome {
	o := copyOutcome{Gate: summarize(out).Gate, Strategy: string(pl.ClonePlan.Strategy)}
	if name, _ := out.Status["template"].(string); name != "" {
		if d := out.Resources[read.MachineTemplateResource(name)]; d != nil {
			a, _, _ := unstructured.NestedStringMap(read.SystemDiskTemplate(d.Resource), "metadata", "annotations")
			for _, k := range []string{labels.AnnCDICloneType, labels.AnnCopyFromStorageClass} {
				if v, ok := a[k]; ok {
					if o.DiskAsks == nil {
						o.DiskAsks = map[string]string{}
					}
					o.DiskAsks[k] = v
				}
			}
		}
	}
	for _, c := range out.Conditions {
		if c.Type == decide.ConditionCloneHealthy {
			o.CloneHealthy = string(c.Status) + "/" + c.Reason
		}
	}
	for _, r := range out.Results {
		o.Results = append(o.Results, string(r.Severity)+"/"+r.Reason)
	}
	return o
}

// TestCopyPath composes a pool on class local from the golden on class
// replicated, with the class listed or not, and pools the list must not
// change.
func TestCopyPath(t *testing.T) {
	onLocal := map[string]any{"osImage": builtin(), "storageClass": "local"}
	asks := map[string]string{labels.AnnCDICloneType: "copy", labels.AnnCopyFromStorageClass: "replicated"}
	listLocal := func(c *config.Config) { c.HostAssistedCopyClasses = []string{"local"} }
	// A pool that ran on local before its golden was re-created on
	// replicated: its template clones by CSI within local.
	sameClass := copyWorld()
	sameClass.goldenDV = goldenDV("Succeeded", nil)
	_ = unstructured.SetNestedField(sameClass.goldenDV.Object, "local", "spec", "storage", "storageClassName")
	sameClass.goldenPVC = goldenPVC("local")
	localBefore := func() worldFixture {
		w := sameClass
		// A provisioner nothing is known of, so no NodeLocalClass hold.
		w.classes = []*unstructuredT{expandable(storageClassObj("local", "2025-01-01T00:00:00Z", nil))}
		return w
	}()
	// ran is the pool composed once in w, as observed on the next call,
	// with the status it reported.
	type ran struct {
		observed map[fnresource.Name]fnresource.ObservedComposed
		status   map[string]any
	}
	run := func(w worldFixture, cfg func(*config.Config)) ran {
		r := request(t, nodePoolXR(onLocal), w, nil)
		if cfg != nil {
			cfg(&r.Config)
		}
		out := composetest.Run(Mode{}, r).Output
		if out.Fatal != nil {
			t.Fatal(out.Fatal)
		}
		return ran{observed: observedFrom(out.Resources, mdReady(2)), status: reported(t, out)}
	}
	ranCSIClone, ranCopy := run(localBefore, nil), run(copyWorld(), listLocal)
	cases := map[string]struct {
		reason string
		spec   map[string]any
		world  worldFixture
		ran    *ran
		config func(*config.Config)
		want   copyOutcome
	}{
		"ListedClassCopiesFromTheReplicatedGolden": {
			reason: "Listed, the hold is lifted, the disk asks CDI for the copy, the pre-flight predicts it and does not hold it, and CloneHealthy says so with a Warning.",
			spec:   onLocal, world: copyWorld(), config: listLocal,
			want: copyOutcome{Gate: "Open/TemplateComposed", DiskAsks: asks, CloneHealthy: "True/HostAssistedCopy", Strategy: "copy",
				Results: []string{"Normal/TemplateChanged", "Warning/HostAssistedCopy"}},
		},
		"UnlistedClassIsHeldWithTheFix": {
			reason: "Not listed: StorageClassMismatch, as before, with the list as one fix.",
			spec:   onLocal, world: copyWorld(), config: func(c *config.Config) { c.HostAssistedCopyClasses = []string{"lvm"} },
			want: copyOutcome{Gate: "Held/StorageClassMismatch", CloneHealthy: "True/NoCloneProblems", Results: []string{"Warning/StorageClassMismatch"}},
		},
		"ListedClassOnTheGoldensOwnClassClonesAsCDIPlans": {
			reason: "A golden on local itself is no copy path: the CSI clone on the node-local class is held as before.",
			spec:   onLocal, world: sameClass, config: listLocal,
			want: copyOutcome{Gate: "Held/NodeLocalClass", CloneHealthy: "True/NoCloneProblems", Strategy: "csi-clone", Results: []string{"Warning/NodeLocalClass"}},
		},
		"ListedClassStillWaitsForTheGolden": {
			reason: "The golden must be Succeeded (gateOnGolden), whatever its class.",
			spec:   onLocal, config: listLocal,
			world: func() worldFixture {
				w := copyWorld()
				w.goldenDV = goldenDV("ImportInProgress", nil)
				return w
			}(),
			want: copyOutcome{Gate: "Held/GoldenImporting", CloneHealthy: "True/NoCloneProblems", Results: []string{"Warning/GoldenImporting"}},
		},
		"RunningPoolIsNotRolledWhenItsClassIsListed": {
			reason: "A template already running records the pool's request, which the list is no part of: kept, nothing rolls.",
			spec:   onLocal, world: copyWorld(), ran: &ranCSIClone, config: listLocal,
			want: copyOutcome{Gate: "Open/TemplateComposed", CloneHealthy: "True/NoCloneProblems"},
		},
		"CopyingPoolIsNotRolledWhenTheListEmpties": {
			reason: "Removing the class keeps the running copy template, which still says what it does.",
			spec:   onLocal, world: copyWorld(), ran: &ranCopy,
			want: copyOutcome{Gate: "Open/TemplateComposed", DiskAsks: asks, CloneHealthy: "True/HostAssistedCopy"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := nodePoolXR(tc.spec)
			var observed map[fnresource.Name]fnresource.ObservedComposed
			if tc.ran != nil {
				xr, observed = withStatus(xr, tc.ran.status), tc.ran.observed
			}
			r := request(t, xr, tc.world, observed)
			if tc.config != nil {
				tc.config(&r.Config)
			}
			out := composetest.Run(Mode{}, r).Output
			if out.Fatal != nil {
				t.Fatal(out.Fatal)
			}
			if diff := cmp.Diff(tc.want, copyOutcomeOf(out, decided(t, r))); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			if tc.ran != nil {
				if n := read.MachineTemplateResource(out.Status["template"].(string)); tc.ran.observed[n].Resource == nil {
					t.Errorf("%s: a new template %s is composed", tc.reason, n)
				}
			}
		})
	}
}

// reported is the status a call wrote, as the next call observes it on
// the composite: the function's fields and its conditions.
func reported(t *testing.T, out compose.Output) map[string]any {
	t.Helper()
	st := map[string]any{}
	b, err := json.Marshal(out.Status)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	var conds []any
	for _, c := range out.Conditions {
		conds = append(conds, map[string]any{"type": c.Type, "status": string(c.Status), "reason": c.Reason, "message": c.Message})
	}
	st["conditions"] = conds
	return st
}

// TestCopiesCountInTheCloneBudget: a pool on the copy path is bounded by
// the budget of its own class, counting the other pools' copies of the
// golden onto that class (CDI's tmp-pvc in the golden's namespace has the
// disk's class and labels), and its capacity prediction counts each copy
// as the disk alone.
func TestCopiesCountInTheCloneBudget(t *testing.T) {
	other := labels.PoolHash(fxNamespace, fxCluster, "md1")
	var claims []*unstructuredT
	for i, class := range []string{"local", "local", "local", "replicated", "replicated"} {
		claims = append(claims, cloneClaim("cozy-public", fmt.Sprintf("tmp-pvc-%d", i), other, class))
	}
	type outcome struct {
		Class    string
		InFlight clonebudget.InFlight
		Replicas int32
		Golden   string
		Reason   string
	}
	cases := map[string]struct {
		reason string
		free   string
		want   outcome
	}{
		"BudgetBoundsTheCopies": {
			reason: "Budget 5 on class local, 3 of its copies run for another pool (the 2 on replicated are another class's): 2 start.",
			free:   "45Gi",
			want:   outcome{Class: "local", InFlight: clonebudget.InFlight{Others: 3}, Replicas: 2, Golden: "0", Reason: emit.ReasonWaitingForCloneBudget},
		},
		"CapacityCountsEachCopyAsTheDisk": {
			reason: "25Gi free holds one 20Gi copy on local's one replica; counting the 6Gi golden as a clone does (26Gi) would fit none.",
			free:   "25Gi",
			want:   outcome{Class: "local", InFlight: clonebudget.InFlight{Others: 3}, Replicas: 1, Golden: "0", Reason: decide.ReasonInsufficientStorageCapacity},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := request(t, nodePoolXR(map[string]any{"osImage": builtin(), "storageClass": "local", "replicas": int64(30)}), copyWorld(), nil)
			r.Config.HostAssistedCopyClasses = []string{"local"}
			r.Config.CloneBudget.Default = 5
			r.Raw[read.ReqCloneClaims] = wire(t, claims...)
			r.Required[read.ReqStorageCapacities] = []*unstructuredT{segmentObj("csisc-a", "local", tc.free, "")}
			pl := decided(t, r)
			b := pl.Budget
			got := outcome{Class: b.Class, InFlight: b.InFlight, Replicas: b.Replicas, Golden: b.Capacity.Golden.String(), Reason: emit.CloneCapacityCondition(pl).Reason}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestWorkerDataVolumeKeepsTheCopyMark: a worker disk of the copy path, as
// the pool reads it from the wire (world.go), is still copyChosen; clone
// health reported it a fallback when only cloneType was kept.
func TestWorkerDataVolumeKeepsTheCopyMark(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": observed.CDIAPIVersion,
		"kind":       observed.KindDataVolume,
		"metadata": map[string]any{"name": "demo-md0-a-disk-system", "namespace": "tenant-a", "annotations": map[string]any{
			labels.AnnCDICloneType: "copy", labels.AnnCopyFromStorageClass: "replicated", "cdi.kubevirt.io/storage.clone.token": "x",
		}},
		"status": map[string]any{"phase": "Succeeded"},
	}}
	dv, err := observed.WorkerDataVolume(wire(t, u)[0], read.WorkerDVAnnotations...)
	if err != nil {
		t.Fatal(err)
	}
	if !read.CopyChosen(dv) {
		t.Errorf("a worker disk of the copy path, read as the pool reads it, is not copyChosen: annotations %v", dv.Annotations)
	}
	if _, ok := dv.Annotations["cdi.kubevirt.io/storage.clone.token"]; ok {
		t.Errorf("annotations clone health does not read are kept: %v", dv.Annotations)
	}
}
