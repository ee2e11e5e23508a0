package decide

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/nodepool/render"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
	"github.com/cozystack/function-worker-image/internal/talosimage"
)

// A release before asks were recorded (the first, 664b136, onwards) left
// running templates with no request on them, rendered by a rendering this
// code no longer has. Such a template was made for the spec the pool had
// then, and every release re-rendered a pool as soon as its spec changed,
// so it is what that release made for the pool's spec unless the spec
// changed since. It is kept as the pool's current ask, as a chart-made
// pool's equivalent templates are adopted (adopt.go), when what this
// release renders for the pool differs from it only as a later rendering
// differs from an earlier one for the same spec: by what a later rendering
// adds (a VM detail, the kubelet reservations), never by a value the
// template already holds, except where a later release renders one value
// another way (asEarlierRenderings: the installer's repository, the form of
// the registry mirrors).
// A spec change the owner made shows as a value it holds that differs (a
// disk size, a disk source, an image, a label): the pool then rolls onto
// this release's rendering, as every release did before.
//
// What cannot be told apart: a change whose rendering only adds to a
// template (a field this release renders that the earlier one had no
// value for) made between the last reconcile of the earlier release and
// the first of this one. The kept template records the pool's ask from
// then on, so every later change rolls as usual.

// UnrecordedDiffs lists what differs between a running template that
// records no ask and what this release renders in its place for the pool's
// ask, other than what a later rendering adds; empty when the running one
// is kept. kind is the template's kind.
func UnrecordedDiffs(kind string, running, rendered map[string]any) []string {
	normalize := normalizeMachineTemplate
	if kind == talosconfig.KindTalosConfigTemplate {
		normalize = func(spec map[string]any) map[string]any {
			return asEarlierRenderings(normalizeBootstrapTemplate(spec))
		}
	}
	var out []string
	heldValues("spec", normalize(specOf(running)), normalize(specOf(rendered)), &out)
	return out
}

// heldValues appends "path: ..." for every leaf a holds that b does not
// hold alike; a leaf only b holds is what a later rendering adds. A list is
// compared item by item when both have as many items, else whole.
func heldValues(path string, a, b any, out *[]string) {
	if l, ok := a.([]any); a == nil || ok && len(l) == 0 {
		return
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		for _, k := range slices.Sorted(maps.Keys(am)) {
			heldValues(path+"."+k, am[k], bm[k], out)
		}
		return
	}
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok && len(as) == len(bs) {
		for i := range as {
			heldValues(fmt.Sprintf("%s[%d]", path, i), as[i], bs[i], out)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*out = append(*out, fmt.Sprintf("%s: is %s, this pool renders %s", path, brief(a), brief(b)))
	}
}

// asEarlierRenderings reads a normalized TalosConfigTemplate as every
// release renders it for one spec: the installer by the Talos build it
// installs (<schematic>:<version>) when it is an Image Factory installer,
// whose flavour a later release derives from the disk's platform and whose
// host from the factory the disk comes from (talosimage.
// DefaultInstallerRepository); and the registry mirrors in one form,
// machine.registries.mirrors, which Talos 1.12 reads as RegistryMirrorConfig
// documents instead (talosconfig.StrategicPatches).
func asEarlierRenderings(spec map[string]any) map[string]any {
	cfg := nestedMap(spec, "template", "spec", "config")
	machine := nestedMap(cfg, "machineConfig", "machine")
	if install, ok := machine["install"].(map[string]any); ok {
		if image, ok := install["image"].(string); ok {
			if slash := strings.LastIndex(image, "/"); slash >= 0 {
				if _, factory := talosimage.InstallerPlatform(image[:slash]); factory {
					install["image"] = image[slash+1:]
				}
			}
		}
	}
	docs, _ := cfg["documents"].([]any)
	var rest []any
	for _, d := range docs {
		m, _ := d.(map[string]any)
		host, _ := m["name"].(string)
		if m["kind"] != "RegistryMirrorConfig" || machine == nil || host == "" {
			rest = append(rest, d)
			continue
		}
		mirror := map[string]any{}
		var endpoints []any
		eps, _ := m["endpoints"].([]any)
		for _, ep := range eps {
			e, _ := ep.(map[string]any)
			endpoints = append(endpoints, e["url"])
		}
		if len(endpoints) > 0 {
			mirror["endpoints"] = endpoints
		}
		if skip, _ := m["skipFallback"].(bool); skip {
			mirror["skipFallback"] = true
		}
		registries, _ := machine["registries"].(map[string]any)
		if registries == nil {
			registries = map[string]any{}
			machine["registries"] = registries
		}
		mirrors, _ := registries["mirrors"].(map[string]any)
		if mirrors == nil {
			mirrors = map[string]any{}
			registries["mirrors"] = mirrors
		}
		mirrors[host] = mirror
	}
	if cfg != nil {
		cfg["documents"] = rest
	}
	return spec
}

// nestedMap is the map at path, nil when there is none.
func nestedMap(m map[string]any, path ...string) map[string]any {
	for _, k := range path {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	return m
}

// keptUnrecorded is the running template u, which records no ask, kept for
// the pool's ask when it differs from rendered only as UnrecordedDiffs
// allows; it records the ask and FirstRendering (a release before asks),
// so RenderingCurrent names it and the next reconcile keeps it by its ask.
// nil when it is not kept.
func keptUnrecorded(kind string, u, rendered *composed.Unstructured, ask string) *composed.Unstructured {
	if u == nil || u.GetName() == rendered.GetName() || len(UnrecordedDiffs(kind, u.Object, rendered.Object)) > 0 {
		return nil
	}
	return render.StampedAt(compose.AsObserved(u), ask, render.FirstRendering)
}
