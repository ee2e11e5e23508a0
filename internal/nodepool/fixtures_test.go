package nodepool

import (
	"sort"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/resource/composite"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/clonerbac"
	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/compose/composetest"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/defaults"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/poolspec"
	"github.com/cozystack/function-worker-image/internal/required"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
	"github.com/cozystack/function-worker-image/internal/talosimage"
)

// Fixture identity: pool md0 of cluster demo in namespace tenant-a.
const (
	fxNamespace = "tenant-a"
	fxCluster   = "demo"
	fxPool      = "md0"
)

var (
	fxGolden     = talosimage.GoldenName(defaults.TalosSchematicID, defaults.TalosVersion)
	fxPoolHash   = labels.PoolHash(fxNamespace, fxCluster, fxPool)
	fxGoldenHash = labels.GoldenHash(defaults.GoldenNamespace, fxGolden)
)

func testConfig(t testing.TB) config.Config {
	t.Helper()
	c, err := config.FromInput(&v1beta1.Input{}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// obj is a tiny builder for unstructured fixtures.
func obj(apiVersion, kind, namespace, name string, fields map[string]any) *unstructured.Unstructured {
	m := map[string]any{"apiVersion": apiVersion, "kind": kind}
	meta := map[string]any{"name": name}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	m["metadata"] = meta
	for k, v := range fields {
		if k == "labels" || k == "annotations" || k == "creationTimestamp" {
			meta[k] = v
			continue
		}
		m[k] = v
	}
	return &unstructured.Unstructured{Object: m}
}

func nodePoolXR(spec map[string]any) *composite.Unstructured {
	xr := composite.New()
	xr.SetAPIVersion("workerimage.cozystack.io/v1alpha1")
	xr.SetKind("XNodePool")
	xr.SetName(fxCluster + "-" + fxPool)
	xr.SetNamespace(fxNamespace)
	s := map[string]any{"clusterName": fxCluster}
	for k, v := range spec {
		s[k] = v
	}
	xr.Object["spec"] = s
	return xr
}

func builtin() map[string]any { return map[string]any{"builtin": map[string]any{}} }

func goldenDV(phase string, extra map[string]any) *unstructured.Unstructured {
	status := map[string]any{"phase": phase}
	for k, v := range extra {
		status[k] = v
	}
	return obj("cdi.kubevirt.io/v1beta1", "DataVolume", defaults.GoldenNamespace, fxGolden, map[string]any{
		"spec": map[string]any{
			"source":  map[string]any{"http": map[string]any{"url": "https://factory.talos.dev/x"}},
			"storage": map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": "6Gi"}}, "storageClassName": "replicated"},
		},
		"status": status,
	})
}

// fxGoldenVolume is the PV the fixture golden's PVC is bound to.
const fxGoldenVolume = "pvc-5f0d6c1e-golden"

// goldenPVC is the 6Gi golden's claim as CDI leaves it: a Block claim of
// class, bound, with its status.capacity (what CDI's clone planner compares
// the worker disk with). class "" is a claim that names none.
func goldenPVC(class string) *unstructured.Unstructured {
	const size = "6Gi"
	spec := map[string]any{"volumeMode": "Block", "volumeName": fxGoldenVolume, "accessModes": []any{"ReadWriteMany"},
		"resources": map[string]any{"requests": map[string]any{"storage": size}}}
	if class != "" {
		spec["storageClassName"] = class
	}
	return obj("v1", "PersistentVolumeClaim", defaults.GoldenNamespace, fxGolden, map[string]any{
		"spec":   spec,
		"status": map[string]any{"phase": "Bound", "capacity": map[string]any{"storage": size}, "accessModes": []any{"ReadWriteMany"}},
	})
}

// pendingGoldenPVC is the 6Gi goldenPVC before it binds (or as
// Crossplane's PVC informer still has it): no volume, no status.capacity.
func pendingGoldenPVC(class string) *unstructured.Unstructured {
	u := goldenPVC(class)
	unstructured.RemoveNestedField(u.Object, "spec", "volumeName")
	u.Object["status"] = map[string]any{"phase": "Pending"}
	return u
}

// goldenPV is the PV the golden PVC is bound to: a CSI volume of driver,
// claimed by the golden PVC.
func goldenPV(driver string) *unstructured.Unstructured {
	return obj("v1", "PersistentVolume", "", fxGoldenVolume, map[string]any{
		"spec": map[string]any{
			"csi":      map[string]any{"driver": driver, "volumeHandle": "golden"},
			"claimRef": map[string]any{"kind": "PersistentVolumeClaim", "namespace": defaults.GoldenNamespace, "name": fxGolden},
		},
		"status": map[string]any{"phase": "Bound"},
	})
}

// storageProfile is CDI's StorageProfile of class as its controller fills
// it: the clone strategy and a Block ReadWriteMany claim property set.
func storageProfile(class, strategy string) *unstructured.Unstructured {
	return obj("cdi.kubevirt.io/v1beta1", "StorageProfile", "", class, map[string]any{
		"status": map[string]any{
			"storageClass":      class,
			"provisioner":       "csi.example.com",
			"cloneStrategy":     strategy,
			"claimPropertySets": []any{map[string]any{"accessModes": []any{"ReadWriteMany"}, "volumeMode": "Block"}},
		},
	})
}

func storageClassObj(name, created string, ann map[string]any) *unstructured.Unstructured {
	f := map[string]any{"provisioner": "csi.example.com", "creationTimestamp": created}
	if ann != nil {
		f["annotations"] = ann
	}
	return obj("storage.k8s.io/v1", "StorageClass", "", name, f)
}

func workerDV(name, phase string, golden bool) *unstructured.Unstructured {
	l := map[string]any{labels.Pool: fxPoolHash}
	if golden {
		l[labels.Golden] = fxGoldenHash
	}
	status := map[string]any{"phase": phase}
	if phase == "CloneWithoutSource" {
		// Not a phase: CDI sets it as the reason of Bound and Ready and
		// leaves the phase as it was (pvc-clone-controller.go).
		status = map[string]any{"phase": "CloneScheduled", "conditions": []any{
			map[string]any{"type": "Bound", "status": "False", "reason": "CloneWithoutSource", "message": "The source pvc " + fxGolden + " doesn't exist"},
			map[string]any{"type": "Ready", "status": "False", "reason": "CloneWithoutSource", "message": "The source pvc " + fxGolden + " doesn't exist"},
		}}
	}
	return obj("cdi.kubevirt.io/v1beta1", "DataVolume", fxNamespace, name, map[string]any{
		"labels": l,
		"spec":   map[string]any{"source": map[string]any{"pvc": map[string]any{"namespace": defaults.GoldenNamespace, "name": fxGolden}}},
		"status": status,
	})
}

func workerPVC(name, class string) *unstructured.Unstructured {
	return obj("v1", "PersistentVolumeClaim", fxNamespace, name, map[string]any{
		"labels": map[string]any{labels.Pool: fxPoolHash, labels.Golden: fxGoldenHash},
		"spec":   map[string]any{"storageClassName": class},
	})
}

func machineSet(name, kmt, tct string) *unstructured.Unstructured {
	return obj(clusterapi.V1Beta1APIVersion, clusterapi.KindMachineSet, fxNamespace, name, map[string]any{
		"labels": map[string]any{clusterapi.LabelDeploymentName: fxCluster + "-" + fxPool},
		"spec": map[string]any{
			"clusterName": fxCluster,
			"template": map[string]any{"spec": map[string]any{
				"clusterName":       fxCluster,
				"bootstrap":         map[string]any{"configRef": map[string]any{"kind": talosconfig.KindTalosConfigTemplate, "name": tct}},
				"infrastructureRef": map[string]any{"kind": pool.KindKubevirtMachineTmpl, "name": kmt},
			}},
		},
	})
}

// readyMachineSet is machineSet with ready of its Machines ready.
func readyMachineSet(name, kmt, tct string, ready int64) *unstructured.Unstructured {
	ms := machineSet(name, kmt, tct)
	ms.Object["status"] = map[string]any{"replicas": ready, "readyReplicas": ready, "availableReplicas": ready}
	return ms
}

// world builds a Resolved with every selector answered; golden entries only
// count on the clone path but answering them always is harmless.
type worldFixture struct {
	goldenDV, goldenPVC *unstructured.Unstructured
	// goldenPV answers the golden PV requirement, asked for only when the
	// golden PVC's class does not say its driver.
	goldenPV        *unstructured.Unstructured
	classes         []*unstructured.Unstructured
	dvs, pvcs, sets []*unstructured.Unstructured
	// profiles are CDI StorageProfiles, snapshotClasses VolumeSnapshotClasses.
	profiles, snapshotClasses []*unstructured.Unstructured
	// ungranted leaves out the catalog's clone RBAC; by default the
	// fixture namespace's VM service account may clone the fixture golden.
	ungranted bool
	// instancetypes answer the instance type requirement; nil answers it
	// with u1.medium as KubeVirt's common instance types define it.
	instancetypes []*unstructured.Unstructured
	// existing are objects another tool made under the pool's names (a
	// MachineDeployment and its templates), answering adoption's
	// requirements by kind.
	existing []*unstructured.Unstructured
	// kubevirt answers the KubeVirt CR requirement (multiarch.go).
	kubevirt []*unstructured.Unstructured
}

// instancetype is a VirtualMachineClusterInstancetype of cpu vCPUs and
// memory guest memory.
func instancetype(name string, cpu int64, memory string) *unstructured.Unstructured {
	return obj(read.InstancetypeAPIVersion, pool.InstancetypeKind, "", name, map[string]any{
		"spec": map[string]any{"cpu": map[string]any{"guest": cpu}, "memory": map[string]any{"guest": memory}},
	})
}

// cloneGrant is the catalog's clone RBAC granting the fixture namespace.
func cloneGrant() (binding, role *unstructured.Unstructured) {
	toU := func(o any) *unstructured.Unstructured {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			panic(err)
		}
		return &unstructured.Unstructured{Object: m}
	}
	rb := clonerbac.Binding("default", defaults.GoldenNamespace, clonerbac.VMServiceAccounts(defaults.VMServiceAccount, []string{fxNamespace}))
	return toU(rb), toU(clonerbac.Role("default", []string{fxGolden}))
}

func (w worldFixture) resolved() required.Resolved {
	one := func(u *unstructured.Unstructured) []*unstructured.Unstructured {
		if u == nil {
			return []*unstructured.Unstructured{}
		}
		return []*unstructured.Unstructured{u}
	}
	orEmpty := func(us []*unstructured.Unstructured) []*unstructured.Unstructured {
		if us == nil {
			return []*unstructured.Unstructured{}
		}
		return us
	}
	bindings, roles := []*unstructured.Unstructured{}, []*unstructured.Unstructured{}
	if !w.ungranted {
		rb, cr := cloneGrant()
		bindings, roles = append(bindings, rb), append(roles, cr)
	}
	its := w.instancetypes
	if its == nil {
		its = []*unstructured.Unstructured{instancetype(defaults.InstanceType, 1, "4Gi")}
	}
	byKind := func(kind string) []*unstructured.Unstructured {
		out := []*unstructured.Unstructured{}
		for _, u := range w.existing {
			if u.GetKind() == kind {
				out = append(out, u)
			}
		}
		return out
	}
	return required.Resolved{
		read.ReqExistingDeployment: byKind("MachineDeployment"),
		read.ReqExistingMachine:    byKind(pool.KindKubevirtMachineTmpl),
		read.ReqExistingBootstrap:  byKind("TalosConfigTemplate"),
		read.ReqInstancetype:       its,
		read.ReqStorageProfiles:    orEmpty(w.profiles),
		read.ReqSnapshotClasses:    orEmpty(w.snapshotClasses),
		read.ReqCDI:                {},
		read.ReqCDIConfig:          {},
		read.ReqCloneBindings:      bindings,
		read.ReqCloneRoles:         roles,
		read.ReqGoldenDataVolume:   one(w.goldenDV),
		read.ReqGoldenPVC:          one(w.goldenPVC),
		read.ReqGoldenPV:           one(w.goldenPV),
		read.ReqStorageClasses:     orEmpty(w.classes),
		read.ReqMachineSets:        orEmpty(w.sets),
		read.ReqKubeVirt:           orEmpty(w.kubevirt),
	}
}

// observedFrom turns desired resources into observed ones, as Crossplane
// would report them after applying them.
func observedFrom(des map[resource.Name]*resource.DesiredComposed, mutate func(resource.Name, *composed.Unstructured)) map[resource.Name]resource.ObservedComposed {
	out := map[resource.Name]resource.ObservedComposed{}
	for n, d := range des {
		u := d.Resource.DeepCopy()
		u.SetUID(types.UID("uid-" + string(n)))
		u.SetResourceVersion("42")
		if mutate != nil {
			mutate(n, u)
		}
		out[n] = resource.ObservedComposed{Resource: u}
	}
	return out
}

func request(t testing.TB, xr *composite.Unstructured, w worldFixture, observed map[resource.Name]resource.ObservedComposed) composetest.Request {
	return composetest.Request{Request: compose.Request{Config: testConfig(t), Composite: xr, Observed: observed}, Required: w.resolved(), Raw: w.raw(t)}
}

// decided is the plan of a call of r: its Prepare, then decide.
func decided(t testing.TB, r composetest.Request) decide.Plan {
	t.Helper()
	c := prepare(r.Request)
	if c.err != nil {
		t.Fatal(c.err)
	}
	pl, err := c.plan(r.Required, r.Raw)
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// raw is the worker DataVolumes and PVCs as the request carries them:
// protobuf Structs, read from the wire.
func (w worldFixture) raw(t testing.TB) required.Raw {
	return required.Raw{read.ReqWorkerDVs: wire(t, w.dvs...), read.ReqWorkerPVCs: wire(t, w.pvcs...)}
}

// wire is us as the request carries them: protobuf Structs.
func wire(t testing.TB, us ...*unstructured.Unstructured) []*structpb.Struct {
	t.Helper()
	out := make([]*structpb.Struct, 0, len(us))
	for _, u := range us {
		s, err := structpb.NewStruct(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

type unstructuredT = unstructured.Unstructured

func sortStrings(s []string) { sort.Strings(s) }

// resolveOSImage resolves spec's osImage as readPool does.
func resolveOSImage(spec v1alpha1.NodePoolSpec, cfg config.Config) pool.Image {
	return poolspec.ResolveImage(poolspec.NodePoolLayers(field.NewPath("spec"), spec, cfg))
}

// resolveShapeOf resolves spec's shape as readPool does; spec must be valid.
func resolveShapeOf(t testing.TB, spec v1alpha1.NodePoolSpec, cfg config.Config) pool.Shape {
	t.Helper()
	p, errs := poolspec.Resolve(poolspec.NodePoolLayers(field.NewPath("spec"), spec, cfg))
	if len(errs) > 0 {
		t.Fatalf("resolve: %v", errs)
	}
	return pool.ResolveShape(spec, p.Size, cfg)
}
