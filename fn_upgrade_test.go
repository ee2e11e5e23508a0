package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/internal/fixture"
	"github.com/cozystack/function-worker-image/internal/nodepool/render"
)

// releasesDir holds what every example scenario composed at earlier
// releases (hack/record-release.sh).
const releasesDir = "testdata/releases"

// TestUpgradeKeepsEveryTemplate replays, for every recorded release, the
// desired state each example scenario composed there as the observed state
// of this code, and requires that no template is renamed: the
// MachineDeployment points at the templates it pointed at, and every
// template composed there is composed still. Cluster API rolls a
// MachineDeployment when a template reference changes name
// (MachineTemplateUpToDate, internal/controllers/machinedeployment/mdutil/
// util.go, v1.11.4), so a renamed template is a rolled pool. A scenario
// whose inputs changed since the release is not replayed: it asks for
// something else.
func TestUpgradeKeepsEveryTemplate(t *testing.T) {
	releases, err := filepath.Glob(filepath.Join(releasesDir, "*", "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(releases) == 0 {
		t.Fatalf("no recorded release under %s; run hack/record-release.sh", releasesDir)
	}
	f := newTestFunction()
	replayed := map[string]int{}
	for _, recorded := range releases {
		mode := filepath.Base(filepath.Dir(recorded))
		release := filepath.Base(filepath.Dir(filepath.Dir(recorded)))
		scenario := strings.TrimSuffix(filepath.Base(recorded), ".yaml")
		dir := filepath.Join("example", mode, "scenarios", scenario)
		name := release + "/" + mode + "/" + scenario
		t.Run(name, func(t *testing.T) {
			sum, objects := readRecorded(t, recorded)
			if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
				t.Skipf("scenario %s is gone since %s", dir, release)
			}
			if got := inputsSum(t, dir, mode); got != sum {
				t.Skipf("the inputs of %s changed since %s", dir, release)
			}
			s, err := fixture.LoadScenario(dir)
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
				t.Skipf("the scenario is refused (%s); it composes nothing to keep", msg)
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
			replayed[release]++
		})
	}
	for release, n := range replayed {
		t.Logf("%s: %d scenarios replayed", release, n)
	}
}

// readRecorded reads a recorded scenario: the inputs hash on its first line
// and the composed resources.
func readRecorded(t *testing.T, path string) (string, []*unstructured.Unstructured) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	sum, ok := strings.CutPrefix(string(first), "# inputs-sha256: ")
	if !ok {
		t.Fatalf("%s: no inputs-sha256 line; record it with hack/record-release.sh", path)
	}
	objects, err := fixture.DecodeObjects(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return sum, objects
}

// inputsSum hashes a scenario's inputs as hack/record-release.sh does: each
// file's content with its trailing newlines cut to one.
func inputsSum(t *testing.T, dir, mode string) string {
	t.Helper()
	var all []byte
	add := func(path string) bool {
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			return false
		}
		if err != nil {
			t.Fatal(err)
		}
		all = append(append(all, bytes.TrimRight(b, "\n")...), '\n')
		return true
	}
	for _, f := range []string{fixture.FileComposite, fixture.FileObserved, fixture.FileRequired} {
		add(filepath.Join(dir, f))
	}
	if !add(filepath.Join(dir, fixture.FileComposition)) {
		add(filepath.Join("example", mode, fixture.FileComposition))
	}
	sum := sha256.Sum256(all)
	return hex.EncodeToString(sum[:])
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
// scenario whose inputs are unchanged renders the templates that release
// did. A change of the rendering must bump RenderingRevision, or
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
	files, err := filepath.Glob(filepath.Join(latest, "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, f := range files {
		mode := filepath.Base(filepath.Dir(f))
		dir := filepath.Join("example", mode, "scenarios", strings.TrimSuffix(filepath.Base(f), ".yaml"))
		sum, was := readRecorded(t, f)
		if _, err := os.Stat(dir); err != nil || inputsSum(t, dir, mode) != sum {
			continue
		}
		now, err := fixture.ReadObjects(filepath.Join(dir, "expected.yaml"))
		if errors.Is(err, os.ErrNotExist) {
			continue // refused now; the render test says so
		}
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(templatesOf(was).names, templatesOf(now).names); diff != "" {
			t.Errorf("%s renders other templates than %s did for the same inputs, under the same RenderingRevision %d: bump render.RenderingRevision (and record the release with hack/record-release.sh when it lands) (-%s, +now):\n%s",
				dir, filepath.Base(latest), recorded, filepath.Base(latest), diff)
		}
		compared++
	}
	if compared == 0 {
		t.Fatalf("no scenario of %s is unchanged, so the rendering is not checked: record the release again", latest)
	}
}
