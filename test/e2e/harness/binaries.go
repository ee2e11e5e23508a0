package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Binaries are the executables of one run.
type Binaries struct {
	Etcd              string
	APIServer         string
	ControllerManager string
	Crossplane        string
	// CAPIManager is the Cluster API core manager, CABPTManager the Talos
	// bootstrap provider's and CAPKManager the KubeVirt infrastructure
	// provider's.
	CAPIManager, CABPTManager, CAPKManager string
	// SnapshotController is external-snapshotter's common controller.
	SnapshotController string
	// Function is the function-worker-image binary built from the repository
	// root for this run.
	Function string
}

// BuildBinaries runs test/e2e/hack/build-binaries.sh, which builds the pinned
// control-plane binaries once per version into the user cache dir and prints
// their paths, then builds the function from the repository root into binDir.
// Build output goes to logDir/build.log.
func BuildBinaries(ctx context.Context, repoRoot, binDir, logDir string) (Binaries, error) {
	log, err := os.Create(filepath.Join(logDir, "build.log"))
	if err != nil {
		return Binaries{}, err
	}
	defer func() { _ = log.Close() }()
	paths, err := runBuildScript(ctx, repoRoot, log)
	if err != nil {
		return Binaries{}, err
	}
	b := Binaries{
		Etcd:               paths["etcd"],
		APIServer:          paths["kube-apiserver"],
		ControllerManager:  paths["kube-controller-manager"],
		Crossplane:         paths["crossplane-core"],
		CAPIManager:        paths["capi-manager"],
		CABPTManager:       paths["cabpt-manager"],
		CAPKManager:        paths["capk-manager"],
		SnapshotController: paths["snapshot-controller"],
		Function:           filepath.Join(binDir, "function-worker-image"),
	}
	for name, p := range map[string]string{"etcd": b.Etcd, "kube-apiserver": b.APIServer, "kube-controller-manager": b.ControllerManager, "crossplane-core": b.Crossplane, "capi-manager": b.CAPIManager, "cabpt-manager": b.CABPTManager, "capk-manager": b.CAPKManager, "snapshot-controller": b.SnapshotController} {
		if p == "" {
			return Binaries{}, fmt.Errorf("test/e2e/hack/build-binaries.sh printed no path for %s; got %v", name, paths)
		}
	}

	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", b.Function, ".")
	build.Dir = repoRoot
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout = log
	build.Stderr = log
	if err := build.Run(); err != nil {
		return Binaries{}, fmt.Errorf("cannot build the function from %s (see %s): %w", repoRoot, log.Name(), err)
	}
	return b, nil
}

// ModuleDir returns the directory of module@version in the Go module cache,
// downloading it through the module proxy if needed.
func ModuleDir(ctx context.Context, module, version string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", module+"@"+version)
	// Outside any module, so that no go.mod or go.sum of the repository is
	// consulted or touched.
	cmd.Dir = os.TempDir()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", module, version, err)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s printed no module directory: %s", module, version, out)
	}
	return m.Dir, nil
}

// runBuildScript runs test/e2e/hack/build-binaries.sh, its progress to log,
// and returns the NAME=PATH lines it printed as a map.
func runBuildScript(ctx context.Context, repoRoot string, log *os.File) (map[string]string, error) {
	script := filepath.Join(repoRoot, "test", "e2e", "hack", "build-binaries.sh")
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, script)
	cmd.Stdout = &out
	cmd.Stderr = log
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s failed (see %s): %w", script, log.Name(), err)
	}
	paths := map[string]string{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if name, path, ok := strings.Cut(sc.Text(), "="); ok {
			paths[name] = path
		}
	}
	return paths, nil
}
