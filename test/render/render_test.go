// Package render renders every shipped example scenario with the real
// crossplane CLI against the function running locally, and compares the
// output with the checked-in expectation. It is the closest thing to a real
// Crossplane short of the end-to-end suite: the CLI runs the same
// requirements loop and composition logic as the controller.
package render

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the expected render output of every scenario")

const (
	expectedFile      = "expected.yaml"
	expectedErrorFile = "expected-error.txt"
)

type scenario struct {
	name string // <mode>/<scenario>, for t.Run
	dir  string
	mode string // directory holding composition.yaml and functions.yaml
}

func TestRenderScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("render harness builds binaries; skipped with -short")
	}
	root := repoRoot(t)
	scenarios := findScenarios(t, root)
	if len(scenarios) == 0 {
		t.Fatal("no scenarios found under example/*/scenarios")
	}

	xp := renderer{cli: crossplaneCLI(t, root), core: crossplaneCore(t, root)}
	target := startFunction(t, root)

	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			first := render(t, xp, target, s)
			second := render(t, xp, target, s)
			if diff := cmp.Diff(first.output, second.output); diff != "" || first.failed != second.failed {
				t.Fatalf("rendering %s twice gave different output, so it is not deterministic\n-first, +second:\n%s", s.name, diff)
			}
			want := filepath.Join(s.dir, expectedFile)
			other := filepath.Join(s.dir, expectedErrorFile)
			if first.failed {
				want, other = other, want
			}
			if *update {
				if err := os.WriteFile(want, []byte(first.output), 0o644); err != nil {
					t.Fatal(err)
				}
				_ = os.Remove(other)
				return
			}
			b, err := os.ReadFile(want)
			if err != nil {
				t.Fatalf("render %s: %s (output was:\n%s\n); run go test ./test/render -update to record it", map[bool]string{true: "failed", false: "succeeded"}[first.failed], err, first.output)
			}
			if diff := cmp.Diff(string(b), first.output); diff != "" {
				t.Errorf("render output of %s differs from %s\n-want, +got:\n%s", s.name, filepath.Base(want), diff)
			}
		})
	}
}

type result struct {
	output string
	failed bool
}

// renderer is the crossplane CLI and the core binary its render runs the
// pipeline through.
type renderer struct{ cli, core string }

func render(t *testing.T, xp renderer, target string, s scenario) result {
	t.Helper()
	// A scenario may ship its own Composition, for a function Input of its own.
	composition := filepath.Join(s.mode, "composition.yaml")
	if p := filepath.Join(s.dir, "composition.yaml"); exists(p) {
		composition = p
	}
	args := []string{"render",
		filepath.Join(s.dir, "xr.yaml"),
		composition,
		filepath.Join(s.mode, "functions.yaml"),
		"--include-function-results",
		"--crossplane-binary=" + xp.core,
		"--function-annotations=render.crossplane.io/runtime-development-target=" + target,
		// Bounds for a hang, not budgets: make test runs this at nice 19
		// beside the e2e suite, which may hold the CPU for minutes.
		"--timeout=10m",
	}
	// A mode directory may ship its XRD (xrd.yaml), so that render applies the
	// schema defaults the API server would.
	if p := filepath.Join(s.mode, "xrd.yaml"); exists(p) {
		args = append(args, "--xrd="+p)
	}
	for _, f := range []struct{ file, flag string }{{"observed.yaml", "--observed-resources="}, {"required.yaml", "--required-resources="}} {
		if p := filepath.Join(s.dir, f.file); exists(p) {
			args = append(args, f.flag+p)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 11*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, xp.cli, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		return result{output: engineEventsSorted(stdout.String())}
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || ctx.Err() != nil {
		t.Fatalf("cannot run %s %s: %v\n%s", xp.cli, strings.Join(args, " "), err, stderr.String())
	}
	// A fatal result: the CLI prints the message on stderr and nothing else.
	return result{output: stderr.String(), failed: true}
}

// engineEventsSorted is a rendered stream with the Results that Crossplane's
// own reconciler records (reason ComposeResources: "Composed resource %q is
// not yet ready", internal/controller/apiextensions/composite/reconciler.go
// v2.4.2) sorted among themselves, each kept at one of their places. Core
// records one per composed resource in the order of res.Composed, which
// composition_functions.go builds by ranging over a map, so their order
// changes from run to run; what the function returns keeps its order.
func engineEventsSorted(out string) string {
	body, nl := strings.CutSuffix(out, "\n")
	docs := strings.Split(body, "\n---\n")
	var at []int
	var events []string
	for i, d := range docs {
		if strings.Contains(d, "\nkind: Result\n") && strings.Contains(d, "\nreason: ComposeResources\n") {
			at = append(at, i)
			events = append(events, d)
		}
	}
	slices.Sort(events)
	for j, i := range at {
		docs[i] = events[j]
	}
	if nl {
		return strings.Join(docs, "\n---\n") + "\n"
	}
	return strings.Join(docs, "\n---\n")
}

func findScenarios(t *testing.T, root string) []scenario {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(root, "example", "*", "scenarios", "*"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(dirs)
	out := make([]scenario, 0, len(dirs))
	for _, d := range dirs {
		if !exists(filepath.Join(d, "xr.yaml")) {
			continue
		}
		mode := filepath.Dir(filepath.Dir(d))
		out = append(out, scenario{name: filepath.Base(mode) + "/" + filepath.Base(d), dir: d, mode: mode})
	}
	return out
}

// crossplaneCLI returns the pinned crossplane CLI, built once per version and
// cached (CROSSPLANE_CLI overrides it).
func crossplaneCLI(t *testing.T, root string) string {
	t.Helper()
	return cachedTool(t, root, "CROSSPLANE_CLI", "crossplane-cli.sh")
}

// crossplaneCore returns the Crossplane core binary the CLI renders through
// (--crossplane-binary; CROSSPLANE_CORE overrides it).
func crossplaneCore(t *testing.T, root string) string {
	t.Helper()
	return cachedTool(t, root, "CROSSPLANE_CORE", "crossplane-core.sh")
}

// cachedTool is the path env names, else what hack/<script> prints.
func cachedTool(t *testing.T, root, env, script string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	out, err := exec.Command(filepath.Join(root, "hack", script)).Output()
	if err != nil {
		t.Fatalf("cannot get hack/%s's tool: %v", script, err)
	}
	return strings.TrimSpace(string(out))
}

// startFunction builds the function and serves it with --insecure on a free
// loopback port for the duration of the test. It is built with the
// renderclock tag (clock_render.go): every call runs at crossplane render's
// fixed instant, so a scenario decides a stalled import or clone from the
// time its observed status records, and the output does not change with the
// wall clock.
func startFunction(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "function-worker-image")
	build := exec.Command("go", "build", "-tags", "renderclock", "-o", bin, ".")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("cannot build the function: %v\n%s", err, out)
	}
	addr := freeAddr(t)
	var logs bytes.Buffer
	cmd := exec.Command(bin, "--insecure", "--address="+addr, "--metrics-address=")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("function logs:\n%s", logs.String())
		}
	})
	deadline := time.Now().Add(10 * time.Minute)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("function did not listen on %s within 10m: %v\n%s", addr, err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; d != filepath.Dir(d); d = filepath.Dir(d) {
		if exists(filepath.Join(d, "go.mod")) && exists(filepath.Join(d, "fn.go")) {
			return d
		}
	}
	t.Fatalf("cannot find the repository root above %s", wd)
	return ""
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
