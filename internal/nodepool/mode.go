package nodepool

import (
	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/emit"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/nodepool/render"
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
	pool pool.Pool
	spec v1alpha1.NodePoolSpec
	img  pool.Image
	// shape is the resolved shape, without its installer repository
	// (decide resolves it: it can fail, and only Compose reports that).
	shape pool.Shape
	obs   read.Composed
	prev  read.Previous
	// known is the next template's class when known without the cluster
	// (declared, or the one the pool runs on); desired is that template.
	known   *pool.Class
	desired *decide.Rendered
	// ask is the spec's part of the templates' asks.
	ask   render.AskSpec
	reads read.Reads
	// teardown, when set, is why the pool was asked to go: nothing else is
	// decided (emit/teardown.go).
	teardown emit.Teardown
	// goldenBase is the unsuffixed golden of the pool's image, choice the
	// golden of its architecture (read/goldenchoice.go).
	goldenBase string
	choice     read.GoldenChoice
	// readIn is readInput's, once built.
	readIn *read.Input
}

func prepare(r compose.Request) *call {
	c := &call{r: r}
	c.obs = read.ReadComposed(r.Observed, r.Config.ClusterAPIVersion)
	c.prev = compose.PreviousStatus[read.Previous](r.Composite)
	// A pool asked to go is removed whatever its spec says now: an invalid
	// spec must not keep its workers running.
	if c.teardown = emit.TeardownOf(r.Composite); c.teardown != "" {
		return c
	}
	var resolved poolspec.Pool
	c.pool, c.spec, resolved, c.err = pool.ReadPool(r.Composite, r.Config)
	if c.err != nil {
		return c
	}
	c.img = resolved.Image
	if c.img.Source == pool.SourceClone {
		// The golden of the pool's architecture (read/goldenchoice.go).
		c.goldenBase = c.img.GoldenName
		c.choice = read.ChooseGoldenOf(c.img, r.Config, c.spec.StorageClass, c.obs.RunningGolden(c.img), r.Peek)
		c.img.GoldenName = c.choice.Name
	}
	if c.ask, c.err = render.AskSpecOf(c.spec, resolved.Size.Labels.Machine, r.Config.Arch); c.err != nil {
		return c
	}
	c.shape = pool.ResolveShape(c.spec, resolved.Size, r.Config)
	in := read.ReadsInput{
		Image: c.img, DeclaredClass: c.spec.StorageClass, Composed: c.obs, Ceiling: read.Ceiling(c.shape),
		WaitForGrant: r.Config.WaitForCloneGrant, MaxWorkerDisks: r.Config.MaxWorkerDisks,
	}
	in.PreviousHealth, in.HasPrevious = compose.ConditionOf(c.prev.Conditions, decide.ConditionCloneHealthy)
	if c.img.Source == pool.SourceClone {
		if c.spec.StorageClass != "" {
			c.known = &pool.Class{Name: c.spec.StorageClass, From: "spec.storageClass"}
		} else if k, ok := c.obs.RunningClass(c.img); ok {
			c.known = &k
		}
		if c.known != nil {
			// Hashed once: the template is kept for it, and a running
			// template recording another was not rendered for it.
			var t render.MachineTemplate
			ask, err := render.AskOf(c.ask, r.Config.Requested, c.known.Name, nil)
			if err == nil {
				t, err = decide.MachineTemplateOn(c.input(), c.shape, c.known.Name, ask, render.DiskSource{})
				in.Asked = c.askedAnew(ask)
			}
			c.desired = &decide.Rendered{Class: c.known.Name, Template: t, Err: err}
			if err == nil {
				in.Desired = t.Name
			}
		}
	}
	c.reads = read.PlanReads(in)
	c.reads.KubeVirt = read.WritesArchitecture(c.img, r.Config)
	return c
}

// askedAnew reports whether the pool asks for something its running
// template was not rendered for: the template records another ask
// than ask, the pool's.
// The template this call renders then may differ from it in what no
// ask records (the disk's source: snapshot.go), so the call reads what
// decides that. A template that records no ask (an earlier release's)
// is no such change: reading then would roll a pool on a release.
func (c *call) askedAnew(ask string) bool {
	running, _ := c.obs.InEffect()
	u, ok := c.obs.Resources[read.MachineTemplateResource(running)]
	if !ok || running == "" {
		return false
	}
	recorded := u.GetAnnotations()[pool.AnnAsk]
	return recorded != "" && recorded != ask
}

// readInput is what the table of reads (read/table.go) decides this
// call's reads from, built once and kept in the call: the table's rows take
// it by pointer, and a copy per use would be a heap allocation of the
// Input's size each time.
func (c *call) readInput() *read.Input {
	if c.readIn == nil {
		c.readIn = &read.Input{
			Pool: c.pool, Image: c.img, GoldenBase: c.goldenBase, InstanceType: c.shape.InstanceType,
			DeclaredClass: c.spec.StorageClass, Bootstrap: c.spec.Bootstrap,
			Config: c.r.Config, Composed: c.obs, Reads: c.reads,
		}
	}
	return c.readIn
}

// Requirements asks for what this call's decisions read (read.Requirements).
// An invalid spec is fatal here already: a golden named after invalid
// values is no golden.
func (c *call) Requirements() (required.Selectors, error) {
	if c.teardown != "" {
		// Removal decides from what the pool composed alone.
		return nil, nil
	}
	if c.err != nil {
		return nil, c.err
	}
	return read.Requirements(c.readInput()), nil
}

// ChainedRequirements implements compose.Chained: what the table's chained
// rows name once got resolved (read.Chained): the templates an existing
// MachineDeployment of the pool's name runs on, the golden PVC's bound
// PersistentVolume, the golden snapshot's content.
func (c *call) ChainedRequirements(got required.Resolved) required.Selectors {
	if c.err != nil || c.teardown != "" {
		return nil
	}
	return read.Chained(c.readInput(), got)
}

// Raw implements compose.Call: the table's rows read from the wire
// (read.RawNames).
func (c *call) Raw() map[string]bool {
	return read.RawNames()
}

// Compose reads what the pool composed and last reported, decides, writes.
func (c *call) Compose(got required.Resolved, raw required.Raw) compose.Output {
	if c.teardown != "" {
		return emit.ComposeTeardown(c.r.Composite, c.teardown, c.obs, c.prev)
	}
	if c.err != nil {
		return compose.Output{Fatal: c.err}
	}
	pl, err := c.plan(got, raw)
	if err != nil {
		return compose.Output{Fatal: err}
	}
	out, err := emit.Emit(pl, c.prev, c.r.Config)
	if err != nil {
		return compose.Output{Fatal: err}
	}
	// The guard goes with whatever deployment the pool composes or keeps.
	if err := emit.GuardDeletion(pl, out.Resources, c.r.Composite, c.r.Config.Usages); err != nil {
		return compose.Output{Fatal: err}
	}
	return out
}

// plan reads the current state once and decides (decide.Decide).
func (c *call) plan(got required.Resolved, raw required.Raw) (decide.Plan, error) {
	in := c.input()
	cur := read.Read(c.readInput(), got, raw)
	in.Required, in.Join, in.Existing = cur.Required, cur.Join, cur.Existing
	return decide.Decide(in)
}

// input is what Decide decides from, as far as Prepare knows it: Compose
// adds what it read.
func (c *call) input() decide.Input {
	return decide.Input{
		Config: c.r.Config, Composite: c.r.Composite, Now: c.r.Now,
		Pool: c.pool, Spec: c.spec, Image: c.img, Shape: c.shape, Ask: c.ask,
		Known: c.known, Desired: c.desired, Choice: c.choice,
		Composed: c.obs, Previous: c.prev, Reads: c.reads,
	}
}
