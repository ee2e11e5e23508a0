package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The CSI snapshot controller (kubernetes-csi/external-snapshotter, the
// common controller, cmd/snapshot-controller) runs for real, out of cluster
// against the suite's kube-apiserver: it needs no kernel, only the API. It
// binds a VolumeSnapshot to the VolumeSnapshotContent it creates for it,
// copies the content's status into the snapshot's, keeps the snapshot,
// content and source-PVC finalizers, and deletes the content of a deleted
// snapshot (pkg/common-controller/snapshot_controller.go). What it leaves to
// a driver's csi-snapshotter sidecar (cutting the snapshot, the content's
// status, deleting it on the storage) is played by the stand-ins for the
// suite's snapshot driver, SnapshotCSIDriverName (snapshotter.go).
const (
	// SnapshotterModule and SnapshotterVersion must match
	// test/e2e/tools/snapshotter/go.mod, which builds the controller.
	SnapshotterModule  = "github.com/kubernetes-csi/external-snapshotter/v8"
	SnapshotterVersion = "v8.4.0"
	// SnapshotClientModule is external-snapshotter's API module, which
	// ships the snapshot CRDs (config/crd) of the same release.
	SnapshotClientModule = "github.com/kubernetes-csi/external-snapshotter/client/v8"
)

// Kinds of the snapshot API (snapshot.storage.k8s.io/v1).
var (
	VolumeSnapshot        = gvk("snapshot.storage.k8s.io", "v1", "VolumeSnapshot")
	VolumeSnapshotContent = gvk("snapshot.storage.k8s.io", "v1", "VolumeSnapshotContent")
	VolumeSnapshotClass   = gvk("snapshot.storage.k8s.io", "v1", "VolumeSnapshotClass")
)

// SnapshotCRDs reads the VolumeSnapshot, VolumeSnapshotContent and
// VolumeSnapshotClass CRDs of external-snapshotter's client module at
// SnapshotterVersion (client/config/crd in its repository, with its API
// approval), the CRDs the running snapshot controller is released with.
//
// A node pool's clone pre-flight reads VolumeSnapshotClasses, and
// Crossplane fails a reconcile whose required kind is not served
// (internal/xfn/required_resources.go), so the kinds must exist even with
// no object of them, as they do wherever CDI runs with snapshots;
// cdi-controller watches the snapshot kinds when they are served.
//
// The suite used to install the copies CDI v1.65.0 ships for its own tests
// (tests/manifests/snapshot/, external-snapshotter v5/v6 era). Both serve
// v1 (and stop serving v1beta1), but v8 moved the checks of the removed
// validation webhook into the CRDs (CEL rules: the sources, the class name
// and spec.sourceVolumeMode are immutable, exactly one source) and added
// the group-snapshot status fields the controller writes
// (VolumeSnapshot status.volumeGroupSnapshotName, VolumeSnapshotContent
// status.volumeGroupSnapshotHandle), which the older schema silently
// prunes. The group-snapshot CRDs are not installed: the controller uses
// them only with its CSIVolumeGroupSnapshot feature gate, off by default
// (pkg/features/features.go), and so does not list them.
func SnapshotCRDs(ctx context.Context) ([]*unstructured.Unstructured, error) {
	dir, err := ModuleDir(ctx, SnapshotClientModule, SnapshotterVersion)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, plural := range []string{"volumesnapshotclasses", "volumesnapshotcontents", "volumesnapshots"} {
		files = append(files, filepath.Join(dir, "config", "crd", "snapshot.storage.k8s.io_"+plural+".yaml"))
	}
	objs, err := ReadYAMLFiles(files...)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			return nil, fmt.Errorf("%s@%s/config/crd holds a %s among the snapshot CRDs; re-check it", SnapshotClientModule, SnapshotterVersion, o.GetKind())
		}
		if !servesV1(o) {
			return nil, fmt.Errorf("CRD %s of %s@%s does not serve v1; re-check the snapshot controller's API", o.GetName(), SnapshotClientModule, SnapshotterVersion)
		}
	}
	if len(objs) != 3 {
		return nil, fmt.Errorf("%s@%s/config/crd holds %d snapshot.storage.k8s.io objects, want the 3 snapshot CRDs; re-check it", SnapshotClientModule, SnapshotterVersion, len(objs))
	}
	return objs, nil
}

func servesV1(crd *unstructured.Unstructured) bool {
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if m["name"] == "v1" && m["served"] == true && m["storage"] == true {
			return true
		}
	}
	return false
}

// StartSnapshotController starts the snapshot controller with the suite's
// admin kubeconfig. Flags (cmd/snapshot-controller/main.go at v8.4.0):
// --kubeconfig for running out of cluster; --leader-election=false (its
// default, said explicitly); no --http-endpoint, so it serves nothing at all
// (metrics and the leader-election health check are served only when that
// flag names an address, and upstream's example, ":8080", would bind every
// interface); feature gates stay upstream's defaults (no group snapshots);
// --prevent-volume-mode-conversion stays true, so every dynamically
// provisioned content records its volume's mode in spec.sourceVolumeMode.
// The snapshot CRDs must be installed: the controller lists the three kinds
// on start and exits after --retry-crd-interval-max (30 s) without them.
func (cp *ControlPlane) StartSnapshotController(ctx context.Context) error {
	if cp.Bin.SnapshotController == "" {
		return fmt.Errorf("no snapshot-controller binary: test/e2e/hack/build-binaries.sh printed no snapshot-controller path")
	}
	p, err := StartProcess(cp.LogDir, "snapshot-controller", cp.Bin.SnapshotController, []string{
		"--kubeconfig=" + cp.Kubeconfig,
		"--leader-election=false",
		// The suite's scale is a few snapshots; upstream's default QPS
		// of 5 would only slow the scenarios down.
		"--kube-api-qps=50",
		"--kube-api-burst=100",
		"--v=4",
	}, nil)
	if err != nil {
		return err
	}
	cp.adopt(p)
	// Nothing to probe: it serves nothing. It logs "Starting snapshot
	// controller" (pkg/common-controller/snapshot_controller_base.go Run)
	// once it has found the CRDs and started its informers; the scenarios
	// prove what it does.
	return poll(ctx, p, 60*time.Second, "its log line \"Starting snapshot controller\"", func(context.Context) error {
		b, err := os.ReadFile(p.LogPath)
		if err != nil {
			return err
		}
		if !strings.Contains(string(b), "Starting snapshot controller") {
			return fmt.Errorf("not logged yet")
		}
		return nil
	})
}
