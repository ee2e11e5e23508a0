package main

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/cozystack/function-worker-image/internal/fixture"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/render"
)

// releasesDir holds what every example scenario composed at earlier
// releases (hack/record-release.sh).
const releasesDir = "testdata/releases"

// TestUpgradeKeepsEveryTemplate replays, for every recorded release, the
// desired state each example scenario composed there as the observed state
// of this code, with the inputs the release composed it from (the XR, its
// observed and required objects and the function Input, as
// hack/record-release.sh recorded them), and requires that no template is
// renamed: the MachineDeployment points at the templates it pointed at, and
// every template that runs is composed still. Cluster API rolls a
// MachineDeployment when a template reference changes name
// (MachineTemplateUpToDate, internal/controllers/machinedeployment/mdutil/
// util.go, v1.11.4), so a renamed template is a rolled pool.
//
// The release's XR is read as it is: the XR in an upgraded cluster is the
// same object, and a field the current XRD no longer has is pruned by the
// API server and ignored by internal/decode alike (UnknownKeysIgnored), so
// the current code reads it as it would read the stored object. Nothing is
// skipped: a scenario this code refuses is counted and named (a fatal
// applies nothing, so it rolls nothing, but an upgrade that refuses a pool
// it composed before is worth reading).
func TestUpgradeKeepsEveryTemplate(t *testing.T) {
	recorded, err := filepath.Glob(filepath.Join(releasesDir, "*", "*", "*", fileComposed))
	if err != nil {
		t.Fatal(err)
	}
	if len(recorded) == 0 {
		t.Fatalf("no recorded release under %s; run hack/record-release.sh", releasesDir)
	}
	f := newTestFunction()
	type tally struct{ replayed, templates, held, kept, refused int }
	tallies := map[string]*tally{}
	for _, path := range recorded {
		dir := filepath.Dir(path)
		scenario := filepath.Base(dir)
		mode := filepath.Base(filepath.Dir(dir))
		release := filepath.Base(filepath.Dir(filepath.Dir(dir)))
		if tallies[release] == nil {
			tallies[release] = &tally{}
		}
		n := tallies[release]
		t.Run(release+"/"+mode+"/"+scenario, func(t *testing.T) {
			s, err := fixture.LoadScenario(dir)
			if err != nil {
				t.Fatal(err)
			}
			if s.Objects, err = withLaterReads(s.Objects, filepath.Join("example", mode, "scenarios", scenario)); err != nil {
				t.Fatal(err)
			}
			objects, err := fixture.ReadObjects(path)
			if err != nil {
				t.Fatal(err)
			}
			was := templatesOf(objects)
			s.Observed = asObserved(s.Observed, objects)
			req, err := s.Request()
			if err != nil {
				t.Fatal(err)
			}
			calls, err := fixture.Loop(t.Context(), f.RunFunction, req, s.Objects)
			if err != nil && !errors.Is(err, fixture.ErrNotSettled) {
				t.Fatalf("RunFunction: %v", err)
			}
			rsp := calls[len(calls)-1].Response
			if msg := fatalMessage(rsp); msg != "" {
				n.refused++
				t.Logf("%s/%s/%s: this release refuses what %s composed (a fatal applies nothing, so nothing rolls): %s", release, mode, scenario, release, msg)
				return
			}
			n.replayed++
			if g, ok, _ := unstructured.NestedStringMap(rsp.GetDesired().GetComposite().GetResource().AsMap(), "status", "gate"); ok && g["state"] != "Open" {
				n.held++
				t.Logf("%s/%s/%s: the pool holds (%s), keeping what runs: %s", release, mode, scenario, g["reason"], g["message"])
			}
			if len(was.names) > 0 {
				n.templates++
			}
			for _, c := range rsp.GetConditions() {
				if c.GetType() == "RenderingCurrent" && c.GetStatus() == fnv1.Status_STATUS_CONDITION_FALSE {
					n.kept++
				}
			}
			var desired []*unstructured.Unstructured
			for _, r := range rsp.GetDesired().GetResources() {
				desired = append(desired, &unstructured.Unstructured{Object: r.GetResource().AsMap()})
			}
			is := templatesOf(desired)
			if diff := cmp.Diff(was.deployedOn, is.deployedOn); diff != "" {
				t.Errorf("upgrading from %s moves the MachineDeployment onto other templates, which rolls the pool (-%s, +now):\n%s", release, release, diff)
			}
			// What runs must stay: the templates the deployment and the
			// scenario's MachineSets point at. A template of the release
			// that nothing runs on any more is retired, as it was there.
			for _, n := range append(was.running, runningOn(s.Objects)...) {
				if !is.has(n) {
					t.Errorf("upgrading from %s drops template %s, which a MachineDeployment or MachineSet runs on", release, n)
				}
			}
		})
	}
	for _, release := range slices.Sorted(maps.Keys(tallies)) {
		n := tallies[release]
		t.Logf("%s: %d scenarios replayed (%d with templates, %d of them holding; %d pools keep an earlier rendering, RenderingCurrent=False), %d refused, 0 skipped", release, n.replayed, n.templates, n.held, n.kept, n.refused)
	}
}

// withLaterReads is the cluster a release's scenario ran in, as the
// scenario describes it now: the scenario's required objects have gained
// what this code reads and the release did not (an instance type, a
// StorageProfile, the clone grant, a claim's volume mode and capacity),
// which a real cluster has whether or not the release read it. An object
// the scenario no longer holds stays as the release saw it, and so do the
// MachineSets and Machines: they run on the templates the release made.
func withLaterReads(release []*unstructured.Unstructured, dir string) ([]*unstructured.Unstructured, error) {
	now, err := fixture.ReadObjects(filepath.Join(dir, fixture.FileRequired))
	if errors.Is(err, os.ErrNotExist) {
		return release, nil
	}
	if err != nil {
		return nil, err
	}
	key := func(u *unstructured.Unstructured) string {
		return u.GroupVersionKind().GroupKind().String() + " " + u.GetNamespace() + "/" + u.GetName()
	}
	later := map[string]*unstructured.Unstructured{}
	for _, u := range now {
		later[key(u)] = u
	}
	var out []*unstructured.Unstructured
	for _, u := range release {
		k := key(u)
		if l, ok := later[k]; ok && u.GetKind() != "MachineSet" && u.GetKind() != "Machine" {
			u = l
		}
		delete(later, k)
		out = append(out, u)
	}
	for _, u := range now {
		if later[key(u)] != nil {
			out = append(out, u)
		}
	}
	return out, nil
}

// fileComposed is what a scenario composed at a recorded release, beside
// the inputs it composed it from.
const fileComposed = "composed.yaml"

// sameInputs reports whether a scenario's inputs now are those a release
// recorded: each of xr.yaml, observed.yaml and required.yaml absent from
// both or alike, and the composition the scenario reads alike.
func sameInputs(t *testing.T, recorded, dir, mode string) bool {
	t.Helper()
	read := func(path string) ([]byte, bool) {
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil, false
		}
		if err != nil {
			t.Fatal(err)
		}
		return bytes.TrimRight(b, "\n"), true
	}
	for _, f := range []string{fixture.FileComposite, fixture.FileObserved, fixture.FileRequired} {
		was, wasOK := read(filepath.Join(recorded, f))
		is, isOK := read(filepath.Join(dir, f))
		if wasOK != isOK || !bytes.Equal(was, is) {
			return false
		}
	}
	was, _ := read(filepath.Join(recorded, fixture.FileComposition))
	is, ok := read(filepath.Join(dir, fixture.FileComposition))
	if !ok {
		is, _ = read(filepath.Join("example", mode, fixture.FileComposition))
	}
	return bytes.Equal(was, is)
}

// asObserved is the recorded desired state as Crossplane observes it once
// applied: each resource with the status the scenario gives the one of its
// name (a ready MachineDeployment stays ready), and the scenario's other
// observed resources as they are.
func asObserved(scenario map[string]*unstructured.Unstructured, recorded []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	out := map[string]*unstructured.Unstructured{}
	for n, u := range scenario {
		out[n] = u
	}
	for _, u := range recorded {
		n := u.GetAnnotations()[fixture.AnnotationCompositionResourceName]
		o := u.DeepCopy()
		if was, ok := scenario[n]; ok {
			if st, ok := was.Object["status"]; ok {
				o.Object["status"] = st
			}
		}
		out[n] = o
	}
	return out
}

// templates are the template names a state holds, the ones its
// MachineDeployment points at, and that deployment.
type templates struct {
	names, running []string
	deployedOn     []string
}

func (ts templates) has(name string) bool {
	for _, n := range ts.names {
		if n == name {
			return true
		}
	}
	return false
}

func templatesOf(objects []*unstructured.Unstructured) templates {
	var ts templates
	for _, u := range objects {
		switch u.GetKind() {
		case "KubevirtMachineTemplate", "TalosConfigTemplate":
			ts.names = append(ts.names, u.GetKind()+"/"+u.GetName())
		case "MachineDeployment":
			infra, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "infrastructureRef", "name")
			boot, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "bootstrap", "configRef", "name")
			ts.deployedOn = append(ts.deployedOn, u.GetName()+" on KubevirtMachineTemplate/"+infra+", TalosConfigTemplate/"+boot)
			ts.running = append(ts.running, "KubevirtMachineTemplate/"+infra, "TalosConfigTemplate/"+boot)
		}
	}
	sort.Strings(ts.names)
	sort.Strings(ts.deployedOn)
	return ts
}

// runningOn is the templates the MachineSets among objects point at.
func runningOn(objects []*unstructured.Unstructured) []string {
	var out []string
	for _, u := range objects {
		if u.GetKind() != "MachineSet" {
			continue
		}
		infra, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "infrastructureRef", "name")
		boot, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "bootstrap", "configRef", "name")
		out = append(out, "KubevirtMachineTemplate/"+infra, "TalosConfigTemplate/"+boot)
	}
	return out
}

// TestRenderingRevisionCoversTheRendering: while render.RenderingRevision
// is the one the latest recorded release rendered by, every example
// scenario whose inputs are those it recorded renders only templates that
// release rendered. A change of the rendering must bump RenderingRevision, or
// RenderingCurrent would call the pools that run the old rendering current.
func TestRenderingRevisionCoversTheRendering(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(releasesDir, "*", "rendering-revision"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no recorded release with a rendering-revision under %s: %v", releasesDir, err)
	}
	sort.Strings(dirs)
	latest := filepath.Dir(dirs[len(dirs)-1])
	b, err := os.ReadFile(filepath.Join(latest, "rendering-revision"))
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s/rendering-revision: %v", latest, err)
	}
	if render.RenderingRevision != recorded {
		t.Skipf("RenderingRevision is %d, %s rendered by %d: the rendering may differ", render.RenderingRevision, latest, recorded)
	}
	files, err := filepath.Glob(filepath.Join(latest, "*", "*", fileComposed))
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, f := range files {
		rec := filepath.Dir(f)
		mode := filepath.Base(filepath.Dir(rec))
		dir := filepath.Join("example", mode, "scenarios", filepath.Base(rec))
		if _, err := os.Stat(dir); err != nil || !sameInputs(t, rec, dir, mode) {
			continue
		}
		was, err := fixture.ReadObjects(f)
		if err != nil {
			t.Fatal(err)
		}
		now, err := fixture.ReadObjects(filepath.Join(dir, "expected.yaml"))
		if errors.Is(err, os.ErrNotExist) {
			continue // refused now; the render test says so
		}
		if err != nil {
			t.Fatal(err)
		}
		// Every template this code renders at the revision must be one the
		// release rendered: a change of rendering is a new name. A template
		// the release rendered that this code does not is a running one
		// kept in its place (a keep decision), not a rendering.
		var renamed []string
		for _, u := range now {
			if u.GetAnnotations()[pool.AnnRendering] == strconv.Itoa(recorded) && !templatesOf(was).has(u.GetKind()+"/"+u.GetName()) {
				renamed = append(renamed, u.GetKind()+"/"+u.GetName())
			}
		}
		if len(renamed) > 0 {
			t.Errorf("%s renders templates %s did not for the same inputs, under the same RenderingRevision %d: bump render.RenderingRevision (and record the release with hack/record-release.sh when it lands); new: %v, %s rendered %v",
				dir, filepath.Base(latest), recorded, renamed, filepath.Base(latest), templatesOf(was).names)
		}
		compared++
	}
	if compared == 0 {
		t.Fatalf("no scenario of %s is unchanged, so the rendering is not checked: record the release again", latest)
	}
}
