package catalog

import (
	"sort"
	"strings"
	"time"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"

	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	fresource "github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/goldensnapshot"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/required"
	"github.com/cozystack/function-worker-image/internal/stall"
)

// planned is one golden and everything decided about it.
type planned struct {
	Golden
	// Key is the composition-resource-name: the observed one, else the one
	// its name implies. Crossplane deletes what a dropped key names, so a
	// golden never moves to another key.
	Key fresource.Name
	// Live is the observed DataVolume, nil before it exists.
	Live *cdiv1.DataVolume
	// Raw is an observed golden the function could not read, and Unreadable
	// why; it is kept as observed (compose.Observed.Keep).
	Raw        *composed.Unstructured
	Unreadable error
	PinnedBy   []string
	// InUse is true when the golden carries Crossplane's in-use label (any
	// Usage protects it).
	InUse    bool
	Retiring bool
	// Recreate is true for a golden that never succeeded, that nothing
	// holds, and whose import the catalog would now make otherwise: it is
	// left out until it is gone, then composed anew (settle.go).
	Recreate bool
	// Changes name what the re-created golden's import changes (settle.go).
	Changes []string
	// Moved is when the golden, still importing, was first seen at its
	// phase, progress and restarts; Stalled is true once that is StallAfter
	// (polling.stallAfter.imports) ago (stall.go). Nil and false for a
	// golden CDI is not working on.
	Moved      *stall.Record
	Stalled    bool
	StallAfter time.Duration
	// Snapshot is the golden's observed VolumeSnapshot, SnapshotInUse
	// whether a Usage protects it, and SnapshotPref whether its class keeps
	// goldens as snapshots (snapshot.go).
	Snapshot      *snapshotv1.VolumeSnapshot
	SnapshotInUse bool
	SnapshotPref  goldensnapshot.Preference
}

// inUse reports whether an object carries Crossplane's in-use label. Its
// delete would be refused, which stops Crossplane applying anything of the
// catalog: left-out resources are deleted before any is applied (v2.2.0
// internal/controller/apiextensions/composite/composition_functions.go,
// FunctionComposer.Compose, GarbageCollectComposedResources).
func inUse(l map[string]string) bool { return l[labels.CrossplaneInUse] == "true" }

// snapshotInUse reports whether the golden's observed VolumeSnapshot, even
// one the function cannot read, carries Crossplane's in-use label.
func snapshotInUse(obs observedState, name string) bool {
	u, ok := obs.Resources[snapshotKey(name)]
	return ok && inUse(u.GetLabels())
}

// planGoldens composes every catalog entry and every golden that left the
// catalog while a template pins it or any Usage protects it; a readable one
// held by nothing is left out, which deletes it.
func planGoldens(goldens []Golden, obs observedState, req required.Resolved) []planned {
	inCatalog := map[string]bool{}
	raw := obs.unreadableGoldens()
	out := make([]planned, 0, len(goldens))
	for _, g := range goldens {
		inCatalog[g.Name] = true
		p := planned{Golden: g, Key: goldenKey(g.Name), Live: obs.Live[g.Name], PinnedBy: pinsFrom(req[pinsKeyPrefix+g.Name])}
		if p.Live != nil {
			p.InUse = inUse(p.Live.Labels)
		}
		if u, ok := raw[g.Name]; ok {
			p.Raw, p.Unreadable, p.InUse = u, obs.Problem(goldenKey(g.Name)), inUse(u.GetLabels())
		}
		out = append(out, p)
	}
	// Its pins were asked for under its key (Requirements). A golden whose
	// snapshot is in use is held as much as one in use itself.
	for name, dv := range obs.Live {
		if inCatalog[name] {
			continue
		}
		if pins, used := pinsFrom(req[pinsKeyPrefix+name]), inUse(dv.Labels) || snapshotInUse(obs, name); len(pins) > 0 || used {
			out = append(out, planned{Golden: goldenFromLive(name, dv), Key: goldenKey(name), Live: dv, PinnedBy: pins, InUse: used, Retiring: true})
		}
	}
	for name, u := range raw {
		if inCatalog[name] {
			continue
		}
		g := Golden{Index: -1, Name: objectName(u.GetName(), name), Namespace: u.GetNamespace()}
		out = append(out, planned{Golden: g, Key: goldenKey(name), Raw: u, Unreadable: obs.Problem(goldenKey(name)), PinnedBy: pinsFrom(req[pinsKeyPrefix+name]), InUse: inUse(u.GetLabels()), Retiring: true})
	}
	for i := range out {
		name := strings.TrimPrefix(string(out[i].Key), goldenKeyPrefix)
		out[i].Snapshot, out[i].SnapshotInUse = obs.Snapshots[name], snapshotInUse(obs, name)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Key < out[j].Key
	})
	return out
}

// preferSnapshots decides for each golden whether its class keeps goldens
// as snapshots: after settle, since that follows the class a golden lives
// on, which settle read from it.
func preferSnapshots(plan []planned, snaps snapshotWorld) {
	for i := range plan {
		plan[i].SnapshotPref = snaps.preference(plan[i].Golden)
	}
}
