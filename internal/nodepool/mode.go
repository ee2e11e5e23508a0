package nodepool

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/observed"
	"github.com/cozystack/function-worker-image/internal/poolspec"
	"github.com/cozystack/function-worker-image/internal/required"
)

// Mode is the node-pool mode.
type Mode struct{}

// Prepare implements compose.Mode: the call is decoded and resolved once,
// for Requirements and Compose alike.
func (Mode) Prepare(r compose.Request) compose.Call {
	return prepare(r)
}

// call is one call of a pool, decoded once.
type call struct {
	r    compose.Request
	err  error
	pool pool
	spec v1alpha1.NodePoolSpec
	img  image
	// shape is the resolved shape, without its installer repository
	// (decide resolves it: it can fail, and only Compose reports that).
	shape shape
	obs   composedState
	prev  previous
	// known is the next template's class when known without the cluster
	// (declared, or the one the pool runs on); desired is that template.
	known   *class
	desired *renderedTemplate
	// request is the spec's part of the templates' requests.
	request requestSpec
	reads   reads
	// teardown, when set, is why the pool was asked to go: nothing else is
	// decided (teardown.go).
	teardown teardown
	// goldenBase is the unsuffixed golden of the pool's image, choice the
	// golden of its architecture (goldenchoice.go).
	goldenBase string
	choice     goldenChoice
}

// renderedTemplate is a machine template rendered for one class, so that
// Compose reuses what Requirements rendered.
type renderedTemplate struct {
	Class    string
	Template machineTemplate
	err      error
}

func prepare(r compose.Request) *call {
	c := &call{r: r}
	c.obs = readComposed(r.Observed, r.Config.ClusterAPIVersion)
	c.prev = compose.PreviousStatus[previous](r.Composite)
	// A pool asked to go is removed whatever its spec says now: an invalid
	// spec must not keep its workers running.
	if c.teardown = teardownOf(r.Composite); c.teardown != "" {
		return c
	}
	var resolved poolspec.Pool
	c.pool, c.spec, resolved, c.err = readPool(r.Composite, r.Config)
	if c.err != nil {
		return c
	}
	c.img = resolved.Image
	if c.img.Source == SourceClone {
		// The golden of the pool's architecture (goldenchoice.go).
		c.goldenBase = c.img.GoldenName
		c.choice = chooseGoldenOf(c.img, r.Config, c.spec.StorageClass, c.obs.runningGolden(c.img), r.Peek)
		c.img.GoldenName = c.choice.Name
	}
	if c.request, c.err = requestSpecOf(c.spec, resolved.Size.Labels.Machine, r.Config.Arch); c.err != nil {
		return c
	}
	c.shape = resolveShape(c.spec, resolved.Size, r.Config)
	in := readsInput{
		Image: c.img, DeclaredClass: c.spec.StorageClass, Observed: c.obs, Ceiling: ceiling(c.shape),
		WaitForGrant: r.Config.WaitForCloneGrant, MaxWorkerDisks: r.Config.MaxWorkerDisks,
	}
	in.PreviousHealth, in.HasPrevious = compose.ConditionOf(c.prev.Conditions, ConditionCloneHealthy)
	if c.img.Source == SourceClone {
		if c.spec.StorageClass != "" {
			c.known = &class{Name: c.spec.StorageClass, From: "spec.storageClass"}
		} else if k, ok := c.obs.runningClass(c.img); ok {
			c.known = &k
		}
		if c.known != nil {
			// Hashed once: the template is kept for it, and a running
			// template recording another was not rendered for it.
			var t machineTemplate
			request, err := requestOf(c.request, r.Config.Requested, c.known.Name, nil)
			if err == nil {
				t, err = machineTemplateOn(c, c.shape, c.known.Name, request, diskSource{})
				in.Asked = c.askedAnew(request)
			}
			c.desired = &renderedTemplate{Class: c.known.Name, Template: t, err: err}
			if err == nil {
				in.Desired = t.Name
			}
		}
	}
	c.reads = planReads(in)
	c.reads.KubeVirt = writesArchitecture(c.img, r.Config)
	return c
}

// askedAnew reports whether the pool asks for something its running
// template was not rendered for: the template records another request
// than request, the pool's.
// The template this call renders then may differ from it in what no
// request records (the disk's source: snapshot.go), so the call reads what
// decides that. A template that records no request (an earlier release's)
// is no such change: reading then would roll a pool on a release.
func (c *call) askedAnew(request string) bool {
	running, _ := c.obs.inEffect()
	u, ok := c.obs.Resources[machineTemplateResource(running)]
	if !ok || running == "" {
		return false
	}
	recorded := u.GetAnnotations()[AnnRequest]
	return recorded != "" && recorded != request
}

// Requirements asks for what this call's decisions read. An invalid spec
// is fatal here already: a golden named after invalid values is no golden.
func (c *call) Requirements() (required.Selectors, error) {
	if c.teardown != "" {
		// Removal decides from what the pool composed alone.
		return nil, nil
	}
	if c.err != nil {
		return nil, c.err
	}
	sel := selectors(c.pool, c.img, c.shape.InstanceType, c.r.Config, c.reads)
	if otherArch(c.img, c.r.Config) {
		archSelectors(sel, c.img, c.goldenBase)
	}
	if c.img.Source == SourceClone && c.spec.StorageClass != "" {
		classSelectors(sel, c.img, c.spec.StorageClass)
	}
	if c.reads.KubeVirt {
		kubeVirtSelectors(sel)
	}
	if v1alpha1.BootstrapModeOf(c.spec.Bootstrap) == v1alpha1.BootstrapJoin {
		addJoinSelectors(sel, joinRefsOf(c.pool, c.r.Config.Join))
	}
	if c.obs.adopting() {
		adoptionSelectors(sel, c.pool, clusterapi.APIVersion(c.r.Config.ClusterAPIVersion))
	}
	return sel, nil
}

// ChainedRequirements implements compose.Chained: the templates an existing
// MachineDeployment of the pool's name runs on (adopt.go), and the golden
// PVC's bound PersistentVolume.
func (c *call) ChainedRequirements(got required.Resolved) required.Selectors {
	if c.err != nil || c.teardown != "" {
		return nil
	}
	sel := required.Selectors{}
	if c.obs.adopting() {
		maps.Copy(sel, adoptionChained(c.pool, got))
	}
	if pv := c.goldenVolume(got); pv != nil {
		maps.Copy(sel, pv)
	}
	if content := c.goldenSnapshotContent(got); content != nil {
		maps.Copy(sel, content)
	}
	if len(sel) == 0 {
		return nil
	}
	return sel
}

// goldenVolume asks for the golden PVC's bound PersistentVolume, when the
// pre-flight needs its CSI driver (goldenVolumeToRead).
func (c *call) goldenVolume(got required.Resolved) required.Selectors {
	if c.img.Source != SourceClone || !c.reads.Clone {
		return nil
	}
	var pvc *corev1.PersistentVolumeClaim
	for _, u := range got[reqGoldenPVC] {
		if is(u, c.img.GoldenNamespace, c.img.GoldenName) {
			// An unreadable claim is reported by Compose (readWorld).
			pvc, _ = observed.PVC(u)
		}
	}
	// Only the classes' names matter here; Compose decodes them.
	classes := make([]storagev1.StorageClass, 0, len(got[reqStorageClasses]))
	for _, u := range got[reqStorageClasses] {
		classes = append(classes, storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: u.GetName()}})
	}
	name := goldenVolumeToRead(pvc, classes)
	if name == "" {
		return nil
	}
	return required.Selectors{reqGoldenPV: required.ByName(observed.CoreAPIVersion, observed.KindPV, "", name)}
}

// Raw implements compose.Call: worker DataVolumes and PVCs, which grow with
// the pool, are read from the wire (observed.WorkerDataVolume, WorkerPVC).
func (c *call) Raw() map[string]bool {
	return map[string]bool{reqWorkerDVs: true, reqWorkerPVCs: true, reqCloneClaims: true}
}

// Compose reads what the pool composed and last reported, decides, writes.
func (c *call) Compose(got required.Resolved, raw required.Raw) compose.Output {
	if c.teardown != "" {
		return composeTeardown(c.r.Composite, c.teardown, c.obs, c.prev)
	}
	if c.err != nil {
		return compose.Output{Fatal: c.err}
	}
	pl, err := decide(c, got, raw)
	if err != nil {
		return compose.Output{Fatal: err}
	}
	out, err := emit(pl, c.prev, c.r.Config)
	if err != nil {
		return compose.Output{Fatal: err}
	}
	// The guard goes with whatever deployment the pool composes or keeps.
	if err := pl.guardDeletion(out.Resources, c.r.Composite, c.r.Config.Usages); err != nil {
		return compose.Output{Fatal: err}
	}
	return out
}
