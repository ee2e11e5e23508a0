package decide

import (
	"strconv"

	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/nodepool/render"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// Stale is a kept template an earlier rendering made, for RenderingCurrent;
// false for one this release renders alike.
func Stale(kind string, u *composed.Unstructured) (KeptTemplate, bool) {
	rev, err := strconv.Atoi(u.GetAnnotations()[pool.AnnRendering])
	if err == nil && rev == render.Rendering {
		return KeptTemplate{}, false
	}
	return KeptTemplate{Kind: kind, Running: u.GetName(), Revision: rev}, true
}

// A template that records what the pool asks for now is kept, whatever
// this release would render in its place: a release that renders
// differently rolls no pool (render/ask.go).

// machineTemplateOf is the disk template for the class: the running one
// when it records what the pool asks for now (read.Composed.KeptFor),
// else the one this release renders, reusing what Prepare rendered when the
// class is the one it knew and the disk clones the golden's PVC, as Prepare
// renders it (it has read neither whether the class prefers snapshots nor
// the golden's class, which decides the copy path).
func machineTemplateOf(in Input, s pool.Shape, storageClass string, src render.DiskSource) (render.MachineTemplate, error) {
	if d := in.Desired; d != nil && d.Class == storageClass && src.ClonesPVC() {
		return d.Template, d.Err
	}
	ask, err := render.AskOf(in.Ask, in.Config.Requested, storageClass, nil)
	if err != nil {
		return render.MachineTemplate{}, err
	}
	return MachineTemplateOn(in, s, storageClass, ask, src)
}

// MachineTemplateOn keeps or renders the disk template on storageClass for
// the pool's ask of it, already hashed. A kept template is kept whatever
// its disk's source: which source a new template takes is no part of the
// pool's ask (snapshot.go, copy.go).
func MachineTemplateOn(in Input, s pool.Shape, storageClass, ask string, src render.DiskSource) (render.MachineTemplate, error) {
	running, _ := in.Composed.InEffect()
	if u := in.Composed.KeptFor(read.MachineTemplateResource(running), ask); u != nil {
		return render.MachineTemplateFrom(u)
	}
	t, err := render.Machine(in.Pool, in.Image, s, storageClass, render.Rendering, src)
	if err != nil {
		return render.MachineTemplate{}, err
	}
	if u := in.Composed.Unrecorded(read.MachineTemplateResource(running)); u != nil && u.GetName() != t.Name {
		kept, err := earlierMachineTemplate(in, s, storageClass, u, ask)
		if err != nil {
			return render.MachineTemplate{}, err
		}
		if kept != nil {
			return *kept, nil
		}
		if u := keptUnrecorded(pool.KindKubevirtMachineTmpl, u, t.Desired, ask); u != nil {
			return render.MachineTemplateFrom(u)
		}
	}
	t.Desired = render.Stamped(t.Desired, ask)
	return t, nil
}

// earlierMachineTemplate keeps a running template that a release before
// asks were recorded made, when an earlier rendering of the pool's current
// spec is that template (the name hashes the whole spec): the pool asked for
// nothing new, so it keeps it, recorded with the rendering that made it, and
// RenderingCurrent names it. nil when no earlier rendering this code has
// makes it; keptUnrecorded then reads it as an earlier rendering it no
// longer has (unrecorded.go). No earlier rendering restored a disk from a
// snapshot or asked for a copy.
func earlierMachineTemplate(in Input, s pool.Shape, storageClass string, running *composed.Unstructured, ask string) (*render.MachineTemplate, error) {
	for rendering := render.Rendering - 1; rendering >= render.FirstRendering; rendering-- {
		t, err := render.Machine(in.Pool, in.Image, s, storageClass, rendering, render.DiskSource{})
		if err != nil {
			return nil, err
		}
		if t.Name == running.GetName() {
			kept, err := render.MachineTemplateFrom(render.StampedAt(compose.AsObserved(running), ask, rendering))
			return &kept, err
		}
	}
	return nil, nil
}

// node is what the pool's workers are built from beyond the disk template:
// their Talos config (kept or rendered), the capacity the autoscaler is
// told one worker has, and the hold of a pool whose size is unknown.
type node struct {
	Bootstrap render.BootstrapTemplate
	// BootstrapKept: the running TalosConfigTemplate records the ask.
	BootstrapKept bool
	Capacity      clusterapi.Capacity
	SizeHold      *Hold
}

// nodeOf sizes the node (kubelet reservations and the autoscaler's
// capacity from its instance type or resources) and keeps the running Talos
// config when it records the pool's ask, or renders it. A running config
// that records no ask is kept only beside the running disk template
// (machineRunning): when that one rolls, the pool asked for something new,
// and its workers are replaced anyway, so they take this release's config.
func nodeOf(in Input, s pool.Shape, storageClass string, machineRunning bool) (node, error) {
	p, spec := in.Pool, in.Spec
	size, known := NodeSize(s, in.Required.Instancetype)
	reserved, sizeHold, err := ResolveReservations(p, spec, s, size, known)
	if err != nil {
		return node{}, err
	}
	nc := talosconfig.ResolveNode(spec.PoolShape, s.Labels, reserved)
	ask, err := render.AskOf(in.Ask, in.Config.Requested, storageClass, &render.BootstrapFacts{Size: size, MachineVersion: s.MachineVersion})
	if err != nil {
		return node{}, err
	}
	var bt render.BootstrapTemplate
	_, running := in.Composed.InEffect()
	u := in.Composed.KeptFor(read.BootstrapTemplateResource(running), ask)
	if u != nil {
		bt, err = render.BootstrapTemplateFrom(u)
	} else if bt, err = render.Bootstrap(p, in.Image, s, nc, in.Join); err == nil {
		if machineRunning {
			u = keptUnrecorded(talosconfig.KindTalosConfigTemplate, in.Composed.Unrecorded(read.BootstrapTemplateResource(running)), bt.Desired, ask)
		}
		if u != nil {
			bt, err = render.BootstrapTemplateFrom(u)
		} else {
			bt.Desired = render.Stamped(bt.Desired, ask)
		}
	}
	if err != nil {
		return node{}, err
	}
	// The autoscaler builds a node from scratch with every label the Node
	// will carry, whoever puts it there.
	onNode := nc
	onNode.Labels = render.WithLabels(nc.Labels, s.Labels.Machine)
	return node{Bootstrap: bt, BootstrapKept: u != nil, Capacity: clusterapi.WorkerCapacity(size, known, reserved, onNode, spec.GPUs), SizeHold: sizeHold}, nil
}

// noteKept lists the kept templates an earlier rendering made, and checks a
// kept Join config's facts: they are not in the ask (their revision is),
// so a kept config says which of them it predates, as PinFacts does.
func noteKept(pl *Plan, bootstrapKept bool) {
	// A template this release rendered records this revision, so only a
	// kept one can be stale.
	if k, ok := Stale(pool.KindKubevirtMachineTmpl, pl.MachineTemplate.Desired); ok {
		pl.Kept = append(pl.Kept, k)
	}
	_, bootstrap := pl.Composed.InEffect()
	if !bootstrapKept {
		return
	}
	if k, ok := Stale(talosconfig.KindTalosConfigTemplate, pl.BootstrapTemplate.Desired); ok {
		pl.Kept = append(pl.Kept, k)
	}
	if pl.Join != nil {
		PinOn(pl.Join, bootstrap, pl.BootstrapTemplate.Desired)
		if len(pl.Join.Changed) == 0 {
			pl.Join.Pinned = ""
		}
	}
}
