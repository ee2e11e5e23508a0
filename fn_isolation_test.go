package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/fixture"
	"github.com/cozystack/function-worker-image/internal/labels"
)

// The tenant-isolation property (SECURITY.md, "Tenant isolation"): whatever
// a tenant writes in its XNodePool or XTenantCluster, and whatever another
// tenant keeps in its own namespace, the function composes only into the
// composite's namespace, asks Crossplane only for objects of that
// namespace, of the golden namespace or of the cluster-scoped kinds the
// design names, grants no RBAC but the catalog's clone grant, and never
// writes a Join secret anywhere but the TalosConfigTemplate it is for, nor
// a URL's password anywhere at all (response or log).

// Sizes of the generated corpus: several thousand cases, deterministic.
const (
	isolationCases      = 2000
	isolationShortCases = 600
)

// The attacker is the tenant of every generated composite (its namespace is
// the example's, tenant-demo); the victim is tenant A, whose cluster alpha
// lives in tenant-a.
const (
	victimNamespace = "tenant-a"
	victimCluster   = "alpha"
	// urlPassword is the password of every URL with userinfo the corpus
	// writes, in specs and in observed objects.
	urlPassword = "hunter2pw0rd"
)

// joinSecret is a Join secret's values, each a marker that must not leak.
type joinSecret struct {
	token, clusterID, clusterSecret, bootstrapToken, ca string
}

// joinSecretsOf are the values of one tenant's Join secrets: tenant "a" is
// the victim, "b" the attacker. The bootstrap token has the shape the
// function accepts, so that it is used (and must land only where it
// belongs).
func joinSecretsOf(tenant string) joinSecret {
	return joinSecret{
		token:          "sekret-" + tenant + "-machine-token-7f3a",
		clusterID:      "sekret-" + tenant + "-cluster-id-55d1",
		clusterSecret:  "sekret-" + tenant + "-cluster-secret-91c2",
		bootstrapToken: tenant + "sekrt." + strings.Repeat(tenant+"0", 8),
		ca:             "-----BEGIN CERTIFICATE-----\n" + base64.StdEncoding.EncodeToString([]byte("sekret-"+tenant+"-certificate-authority")) + "\n-----END CERTIFICATE-----\n",
	}
}

// markers are the strings by which a value is recognised in a response or
// a log: the value itself, as a Secret's data holds it, and the CA as the
// worker config carries it (base64 of the PEM).
func (s joinSecret) markers() []string {
	out := []string{base64.StdEncoding.EncodeToString([]byte(s.ca)), strings.Split(s.ca, "\n")[1]}
	// A value, and the value as the Secret's data holds it (base64).
	for _, v := range []string{s.token, s.clusterID, s.clusterSecret, s.bootstrapToken} {
		out = append(out, v, base64.StdEncoding.EncodeToString([]byte(v)))
	}
	return out
}

// hostileStrings are what an attacking tenant writes into a string field:
// another tenant's namespace, cluster, golden, template and Join secret
// names; paths; URLs with userinfo; and names that collide with the
// victim's after lowercasing or truncation.
var hostileStrings = []string{
	victimNamespace, "kube-system", "cozy-public", "default",
	victimCluster, "alpha-md0", "Alpha", "ALPHA-MD0",
	"talos-worker-" + strings.Repeat("a", 64) + "-v1.11.5",
	"alpha-md0-0123456789",
	"alpha-talos-secrets", "alpha-talos-ca", "alpha-ca",
	victimNamespace + "/alpha-talos-secrets",
	"../x", "../../" + victimNamespace + "/alpha", "/etc/..", "%2e%2e/x", "tenant-a/alpha",
	"https://user:" + urlPassword + "@factory.talos.dev/image",
	"https://user:" + urlPassword + "@registry.example.com",
	"http://" + urlPassword + "@mirror.example.com/v2",
	"oci://u:" + urlPassword + "@ghcr.io/siderolabs/installer",
	// An image reference carries userinfo without a scheme.
	"robot:" + urlPassword + "@registry.example.com/talos/installer",
	// Collide with the victim's names once truncated to 63 characters.
	victimCluster + strings.Repeat("-x", 40),
	"alpha-md0" + strings.Repeat("0", 60),
}

// hostileURLs are written into URL fields, where only a URL is tried.
var hostileURLs = []string{
	"https://user:" + urlPassword + "@factory.talos.dev",
	"https://" + urlPassword + "@factory.talos.dev/",
	"http://user:" + urlPassword + "@10.0.0.1:8080/../" + victimNamespace,
	"https://factory.talos.dev/%2e%2e/" + victimNamespace,
}

// poolFields are the string fields of a pool shape an attacker sets, by
// path below the shape.
var poolFields = [][]string{
	{"storageClass"}, {"instanceType"}, {"diskSize"}, {"architecture"},
	{"talos", "schematicID"}, {"talos", "version"}, {"talos", "installerRepository"},
	{"osImage", "builtin", "schematicID"}, {"osImage", "builtin", "version"},
	{"osImage", "factory", "schematicID"}, {"osImage", "factory", "version"},
	{"labels", "cozystack.io/tenant"},
}

// poolURLFields are the URL fields of a pool shape.
var poolURLFields = [][]string{
	{"talos", "imageFactoryURL"}, {"osImage", "factory", "imageFactoryURL"},
}

// mutateIsolation writes hostile values into the composite's spec: string
// fields of the shape, the pool's identity, its goldenNamespace, registry
// mirrors, and the Join bootstrap mode, which makes a pool read Join
// secrets.
func mutateIsolation(rng *rand.Rand, xr map[string]any, goldenNamespaces []string) {
	spec, _ := xr["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		xr["spec"] = spec
	}
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	shapes := []map[string]any{spec}
	switch xr["kind"] {
	case "XTenantCluster":
		pools, _ := spec["nodePools"].(map[string]any)
		if pools == nil {
			pools = map[string]any{}
			spec["nodePools"] = pools
		}
		shapes = shapes[:0]
		for _, k := range slices.Sorted(mapsKeys(pools)) {
			if p, ok := pools[k].(map[string]any); ok {
				shapes = append(shapes, p)
			}
		}
		if rng.IntN(3) == 0 {
			pools[pick([]string{victimCluster, "md0", "Alpha", "alpha-md0", "../x", strings.Repeat("a", 50)})] = map[string]any{"replicas": float64(1)}
		}
	case "XWorkerImageCatalog":
		// The catalog is the platform's: only its URLs and classes vary.
		for _, img := range asList(spec["images"]) {
			if m, ok := img.(map[string]any); ok && rng.IntN(2) == 0 {
				m["imageFactoryURL"] = pick(hostileURLs)
			}
		}
		if rng.IntN(2) == 0 {
			spec["imageFactoryURL"] = pick(hostileURLs)
		}
		return
	}
	// Half the cases write only values the function accepts (another
	// tenant's cluster name, the Join mode, a platform golden namespace),
	// so that they reach the reads and the composed objects; the other
	// half any hostile value, most of which are refused.
	valid := rng.IntN(2) == 0
	for n := 1 + rng.IntN(3); n > 0; n-- {
		target := spec
		if len(shapes) > 0 {
			target = shapes[rng.IntN(len(shapes))]
		}
		step := rng.IntN(9)
		if valid {
			step = []int{4, 4, 5, 7}[rng.IntN(4)]
		}
		switch step {
		case 0, 1:
			setPath(target, poolFields[rng.IntN(len(poolFields))], pick(hostileStrings))
		case 2:
			setPath(target, poolURLFields[rng.IntN(len(poolURLFields))], pick(hostileURLs))
		case 3:
			setPath(target, []string{"talos", "registryMirrors", pick([]string{"docker.io", "../" + victimNamespace, "ghcr.io"}), "endpoints"}, []any{pick(hostileURLs)})
		case 4:
			setPath(target, []string{"bootstrap", "mode"}, "Join")
		case 5:
			if xr["kind"] == "XNodePool" {
				spec["clusterName"] = victimCluster
				if !valid {
					spec["clusterName"] = pick([]string{"Alpha", "alpha-talos", victimCluster + strings.Repeat("-x", 40), "../" + victimCluster})
				}
			}
		case 6:
			if xr["kind"] == "XNodePool" {
				spec["poolName"] = pick([]string{"md0", "alpha-md0", "MD0", "../md0", strings.Repeat("m", 70)})
			}
		case 7:
			// A golden namespace: the platform's (which the design
			// lets a pool choose among), or another tenant's, which is
			// refused (poolspec.GoldenNamespace).
			spec["goldenNamespace"] = pick(goldenNamespaces)
		case 8:
			// Any string leaf of the spec.
			var paths [][]string
			collectStringPaths(spec, nil, &paths)
			if len(paths) > 0 {
				setPath(spec, paths[rng.IntN(len(paths))], pick(hostileStrings))
			}
		}
	}
}

func mapsKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

// setPath sets m[path...] = v, making the maps on the way.
func setPath(m map[string]any, path []string, v any) {
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}

// collectStringPaths lists the paths of the string leaves of m, sorted.
func collectStringPaths(m map[string]any, prefix []string, out *[][]string) {
	for _, k := range slices.Sorted(mapsKeys(m)) {
		p := append(slices.Clone(prefix), k)
		switch v := m[k].(type) {
		case string:
			*out = append(*out, p)
		case map[string]any:
			collectStringPaths(v, p, out)
		}
	}
}

// obj is an object of the corpus's world.
func obj(apiVersion, kind, namespace, name string, lbls map[string]any, rest map[string]any) map[string]any {
	md := map[string]any{"name": name}
	if namespace != "" {
		md["namespace"] = namespace
	}
	if lbls != nil {
		md["labels"] = lbls
	}
	o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": md}
	for k, v := range rest {
		o[k] = v
	}
	return o
}

// secretObjects are a tenant's Join Secrets of cluster in namespace.
func secretObjects(namespace, cluster string, s joinSecret) []map[string]any {
	b64 := func(v string) string { return base64.StdEncoding.EncodeToString([]byte(v)) }
	return []map[string]any{
		obj("v1", "Secret", namespace, cluster+"-talos-secrets", nil, map[string]any{"data": map[string]any{
			"token": b64(s.token), "clusterId": b64(s.clusterID), "clusterSecret": b64(s.clusterSecret), "bootstrapToken": b64(s.bootstrapToken)}}),
		obj("v1", "Secret", namespace, cluster+"-talos-ca", nil, map[string]any{"data": map[string]any{"tls.crt": b64(s.ca)}}),
		obj("v1", "Secret", namespace, cluster+"-ca", nil, map[string]any{"data": map[string]any{"ca.crt": b64(s.ca)}}),
		obj("v1", "Service", namespace, cluster, nil, map[string]any{"spec": map[string]any{"clusterIP": "10.96.0.10"}}),
		obj("controlplane.cluster.x-k8s.io/v1alpha1", "KamajiControlPlane", namespace, cluster, nil, map[string]any{"spec": map[string]any{"version": "v1.35.0"}}),
	}
}

// isolationWorld is what the cluster holds besides the example's objects:
// the attacker's own Join secrets (its values replace the example's), and
// the victim's objects, some named and labelled exactly as the attacker's
// pool would ask for them, and its Join secrets under the victim's and the
// attacker's cluster names. A DataVolume and a golden in the world carry a
// URL with a password and quote it in a condition, as CDI's importer does.
func isolationWorld(t *testing.T, xr *structpb.Struct, goldenNamespace string, base []*structpb.Struct) []*structpb.Struct {
	ns := field(xr, "metadata", "namespace")
	cluster := field(xr, "spec", "clusterName")
	pool := field(xr, "spec", "poolName")
	if pool == "" {
		pool = strings.TrimPrefix(field(xr, "metadata", "name"), cluster+"-")
	}
	deployment := cluster + "-" + pool
	attackerHash := labels.PoolHash(ns, cluster, pool)
	golden := "talos-worker-" + strings.Repeat("a", 64) + "-v1.11.5"
	goldenLabel := labels.GoldenHash(goldenNamespace, golden)

	var out []map[string]any
	for _, o := range base {
		m := o.AsMap()
		// The example's Join secrets of the attacker's namespace are
		// replaced by markers below.
		if field(o, "kind") == "Secret" && field(o, "metadata", "namespace") == ns {
			continue
		}
		out = append(out, m)
	}
	for _, c := range []string{cluster, victimCluster, "demo"} {
		if c == "" {
			continue
		}
		out = append(out, secretObjects(ns, c, joinSecretsOf("b"))...)
	}
	for _, c := range []string{victimCluster, cluster, "demo"} {
		if c == "" {
			continue
		}
		out = append(out, secretObjects(victimNamespace, c, joinSecretsOf("a"))...)
	}
	withURL := func(u string) map[string]any {
		return map[string]any{"source": map[string]any{"http": map[string]any{"url": u}}}
	}
	leakyStatus := map[string]any{"phase": "ImportInProgress", "conditions": []any{map[string]any{"type": "Running", "status": "False", "reason": "Error",
		"message": `Unable to connect to http data source: unable to parse endpoint "https://u:` + urlPassword + `@factory.example/image"`}}}
	forged := map[string]any{clusterapi.LabelDeploymentName: deployment, clusterapi.LabelClusterName: cluster, labels.Pool: attackerHash, labels.Golden: goldenLabel}
	for _, d := range []string{"alpha-md0", deployment} {
		out = append(out,
			obj("cluster.x-k8s.io/v1beta1", "MachineDeployment", victimNamespace, d, forged, map[string]any{"spec": map[string]any{"clusterName": victimCluster, "template": map[string]any{"spec": map[string]any{
				"infrastructureRef": map[string]any{"name": "alpha-md0-0123456789"}, "bootstrap": map[string]any{"configRef": map[string]any{"name": "alpha-md0-0123456789"}}}}}}),
			obj("cluster.x-k8s.io/v1beta1", "MachineSet", victimNamespace, d+"-abcde", forged, map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"infrastructureRef": map[string]any{"name": "alpha-md0-0123456789"}, "bootstrap": map[string]any{"configRef": map[string]any{"name": "alpha-md0-0123456789"}}}}}}),
		)
	}
	out = append(out,
		obj("infrastructure.cluster.x-k8s.io/v1alpha1", "KubevirtMachineTemplate", victimNamespace, "alpha-md0-0123456789", forged, map[string]any{"spec": map[string]any{}}),
		obj("bootstrap.cluster.x-k8s.io/v1alpha3", "TalosConfigTemplate", victimNamespace, "alpha-md0-0123456789", forged, map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"generateType": "none", "data": "machine:\n  token: " + joinSecretsOf("a").token + "\n"}}}}),
		obj("cdi.kubevirt.io/v1beta1", "DataVolume", victimNamespace, golden, forged, map[string]any{"spec": withURL("https://u:" + urlPassword + "@factory.example/image"), "status": leakyStatus}),
		obj("v1", "PersistentVolumeClaim", victimNamespace, golden, forged, map[string]any{"spec": map[string]any{"storageClassName": "replicated"}}),
		obj("cdi.kubevirt.io/v1beta1", "DataVolume", ns, deployment+"-leaky", forged, map[string]any{"spec": withURL("https://u:" + urlPassword + "@factory.example/image"), "status": leakyStatus}),
		obj("rbac.authorization.k8s.io/v1", "RoleBinding", victimNamespace, "workerimage-clone-default", map[string]any{labels.CloneRBAC: "true"},
			map[string]any{"roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "workerimage-clone-default"},
				"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "default", "namespace": ns}}}),
		obj("protection.crossplane.io/v1beta1", "Usage", victimNamespace, "alpha-md0-0123456789-datavolume", map[string]any{labels.Golden: goldenLabel, labels.CloneGrantRequest: goldenLabel}, nil),
	)
	world := make([]*structpb.Struct, 0, len(out))
	for _, m := range out {
		world = append(world, mustStruct(t, m))
	}
	return world
}

// resolveBlind is how crossplane render resolves a selector: it ignores the
// namespace, so the function's own filters are what keep another
// namespace's objects out. Every match is returned, by name too.
func resolveBlind(sel *fnv1.ResourceSelector, objects []*unstructured.Unstructured) *fnv1.Resources {
	var matched []*unstructured.Unstructured
	for _, o := range objects {
		if o.GetAPIVersion() != sel.GetApiVersion() || o.GetKind() != sel.GetKind() {
			continue
		}
		switch m := sel.GetMatch().(type) {
		case *fnv1.ResourceSelector_MatchName:
			if o.GetName() != m.MatchName {
				continue
			}
		case *fnv1.ResourceSelector_MatchLabels:
			ok := true
			for k, v := range m.MatchLabels.GetLabels() {
				if o.GetLabels()[k] != v {
					ok = false
				}
			}
			if !ok {
				continue
			}
		}
		matched = append(matched, o)
	}
	// Sorted by name then namespace, as Crossplane lists: tenant-a's
	// objects come before the attacker's tenant-demo of the same name.
	sort.SliceStable(matched, func(i, j int) bool {
		if matched[i].GetName() != matched[j].GetName() {
			return matched[i].GetName() < matched[j].GetName()
		}
		return matched[i].GetNamespace() < matched[j].GetNamespace()
	})
	out := &fnv1.Resources{}
	for _, o := range matched {
		s, err := structpb.NewStruct(o.Object)
		if err != nil {
			continue
		}
		out.Items = append(out.Items, &fnv1.Resource{Resource: s})
	}
	return out
}

// isolationLoop calls the function as Crossplane does (fixture.Loop), with
// a namespace-blind resolver when blind, and returns every call.
func isolationLoop(t *testing.T, f *Function, req *fnv1.RunFunctionRequest, world []*structpb.Struct, blind bool) []fixture.Call {
	t.Helper()
	objects := fixture.FromStructs(world)
	if !blind {
		calls, err := fixture.Loop(context.Background(), f.RunFunction, req, objects)
		if err != nil && !strings.Contains(err.Error(), "stabilize") {
			t.Fatalf("RunFunction returned an error (problems must be results): %v", err)
		}
		return calls
	}
	var calls []fixture.Call
	next := proto.CloneOf(req)
	var previous *fnv1.Requirements
	for range fixture.MaxCalls {
		rsp, err := f.RunFunction(context.Background(), proto.CloneOf(next))
		if err != nil {
			t.Fatalf("RunFunction returned an error (problems must be results): %v", err)
		}
		calls = append(calls, fixture.Call{Request: next, Response: rsp})
		if fatalMessage(rsp) != "" || proto.Equal(rsp.GetRequirements(), previous) {
			break
		}
		previous = rsp.GetRequirements()
		next = proto.CloneOf(next)
		next.RequiredResources = map[string]*fnv1.Resources{}
		for name, sel := range previous.GetResources() {
			next.RequiredResources[name] = resolveBlind(sel, objects)
		}
		next.Context = rsp.GetContext()
	}
	return calls
}

// Cluster-scoped kinds a node pool may ask for, and why the design reads
// each (internal/nodepool/read/table.go). Any name: none of them belongs to
// a tenant.
var poolClusterScopedKinds = map[string]string{
	"StorageClass":                      "today's default class and each class's provisioner",
	"StorageProfile":                    "CDI's clone strategy per class",
	"CDI":                               "CDI's cloneStrategyOverride",
	"CDIConfig":                         "CDI's filesystem overhead",
	"VolumeSnapshotClass":               "the snapshot clone strategy's class for the driver",
	"VolumeSnapshotContent":             "the golden snapshot's content (driver, volume mode)",
	"PersistentVolume":                  "the golden PVC's volume, when its class is gone",
	"ClusterRole":                       "the catalogs' clone ClusterRoles, by label, to check the grant",
	"VirtualMachineClusterInstancetype": "the pool's instance type, for kubelet reservations",
}

// Namespaced kinds a node pool may list in every namespace, and why: both
// are platform objects whose selector no tenant field enters (an empty
// label selector), published outside any tenant's namespace.
var poolAllNamespacesKinds = map[string]string{
	"CSIStorageCapacity": "the free capacity CSI drivers publish per class, in the driver's namespace",
	"KubeVirt":           "the KubeVirt CR in KubeVirt's install namespace (MultiArchitecture gate)",
}

// Kinds a node pool may ask for in a golden namespace: the golden's own
// objects and the catalogs' clone RoleBindings.
var poolGoldenNamespaceKinds = map[string]string{
	"DataVolume":            "the golden, by name",
	"PersistentVolumeClaim": "the golden's claim by name, and CDI's clone claims of this golden by its label",
	"VolumeSnapshot":        "the golden's snapshot, by name",
	"RoleBinding":           "the catalogs' clone RoleBindings, by their label",
}

// Kinds a catalog (the platform's, cluster-scoped) lists in every
// namespace, by the golden's label: what pins its goldens.
var catalogAllNamespacesKinds = map[string]string{
	"KubevirtMachineTemplate": "the templates that clone a golden, by the golden's label",
	"Usage":                   "the pools' clone-grant requests, by the golden's label",
	"StorageClass":            "classes, for the snapshot goldens",
	"StorageProfile":          "CDI's profile per class, for the snapshot goldens",
}

// isolationCase is what one generated case is judged against.
type isolationCase struct {
	where string
	mode  string
	xrNS  string
	// xrKind and xrName name the composite: a pool's deletion guard is a
	// Usage of it.
	xrKind, xrName string
	cfg            config.Config
	goldens        map[string]bool // the golden namespaces the case may use
}

// isolationViolations lists how the response to req breaks the property.
// A catalog's clone grant names its goldens: those it composes, and one it
// holds back to recreate (observed, not desired).
func isolationViolations(c isolationCase, req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	// Requirements.
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range rsp.GetRequirements().GetResources() {
			if !yield(k) {
				return
			}
		}
	}) {
		sel := rsp.GetRequirements().GetResources()[name]
		kind, ns := sel.GetKind(), sel.GetNamespace()
		switch {
		case c.mode == "Catalog":
			if sel.Namespace == nil && catalogAllNamespacesKinds[kind] == "" {
				bad("requirement %s: %s in every namespace is not a kind the catalog lists", name, kind)
			}
			if sel.Namespace != nil && !c.goldens[ns] {
				bad("requirement %s: %s in namespace %q, not the golden namespace", name, kind, ns)
			}
		case sel.Namespace != nil && ns == c.xrNS:
		case sel.Namespace != nil && c.goldens[ns]:
			if poolGoldenNamespaceKinds[kind] == "" {
				bad("requirement %s: %s in the golden namespace %q is not a kind the design reads there", name, kind, ns)
			}
		case sel.Namespace != nil && ns == c.cfg.Join.DNSServiceNamespace && kind == "Service" && sel.GetMatchName() == c.cfg.Join.DNSServiceName:
			// The management cluster's DNS Service the Input names.
		case sel.Namespace == nil && poolClusterScopedKinds[kind] != "":
		case sel.Namespace == nil && poolAllNamespacesKinds[kind] != "":
			if len(sel.GetMatchLabels().GetLabels()) > 0 || sel.GetMatchName() != "" {
				bad("requirement %s: %s in every namespace must select by nothing a tenant writes, got %v", name, kind, sel)
			}
		default:
			bad("requirement %s: %s %q in namespace %q (set: %t) is outside the composite's namespace %q, the golden namespace and the cluster-scoped kinds the design names", name, kind, sel.GetMatchName(), ns, sel.Namespace != nil, c.xrNS)
		}
	}

	// Composed resources.
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range rsp.GetDesired().GetResources() {
			if !yield(k) {
				return
			}
		}
	}) {
		o := rsp.GetDesired().GetResources()[k].GetResource()
		kind, ns := field(o, "kind"), field(o, "metadata", "namespace")
		group := apiGroupOf(field(o, "apiVersion"))
		switch c.mode {
		case "Catalog":
			switch {
			case kind == "ClusterRole" && ns == "":
			case c.goldens[ns]:
			default:
				bad("%s: %s composed in namespace %q, not the golden namespace", k, kind, ns)
			}
		default:
			// Crossplane puts a namespaced XR's composed object without
			// a namespace into the XR's, and refuses a cluster-scoped one
			// (v2.4.2 composite/composition_functions.go); any other
			// namespace it overrides with a warning, which is a defect here.
			if ns != c.xrNS && ns != "" {
				bad("%s: %s composed in namespace %q, not the composite's %q", k, kind, ns, c.xrNS)
			}
			if group == "rbac.authorization.k8s.io" {
				bad("%s: a %s composes %s: only the catalog composes RBAC", k, c.mode, kind)
			}
		}
		if kind == "Usage" {
			// The design's Usages: a template's of its golden's DataVolume,
			// PVC and VolumeSnapshot (nodepool/emit/usage.go), a pool's
			// deletion guard of itself (emit/teardown.go), and the
			// catalog's of its clone RBAC (catalog/protect.go).
			of := o.GetFields()["spec"].GetStructValue().GetFields()["of"].GetStructValue()
			ofNS := field(of, "resourceRef", "namespace")
			self := field(of, "kind") == c.xrKind && field(of, "resourceRef", "name") == c.xrName && ofNS == ""
			if !self && !slices.Contains([]string{"DataVolume", "PersistentVolumeClaim", "VolumeSnapshot", "ClusterRole", "RoleBinding"}, field(of, "kind")) {
				bad("%s: a Usage of %s %s is not one the design names", k, field(of, "kind"), field(of, "resourceRef", "name"))
			}
			if ofNS != "" && !c.goldens[ofNS] {
				bad("%s: a Usage of %s %s/%s: only a golden namespace's objects are protected", k, field(of, "kind"), ofNS, field(of, "resourceRef", "name"))
			}
		}
		// Every namespace an object names (a clone source, a reference)
		// is the composite's or a golden one; a catalog's RoleBinding
		// names the namespaces it grants.
		walkStrings(o, "", func(path, key, v string) {
			if key != "namespace" || v == c.xrNS || c.goldens[v] || strings.HasPrefix(path, ".metadata.") {
				return
			}
			if c.mode == "Catalog" && kind == "RoleBinding" && strings.HasPrefix(path, ".subjects") {
				return
			}
			bad("%s: %s%s names namespace %q", k, kind, path, v)
		})
		switch kind {
		case "Role", "RoleBinding", "ClusterRoleBinding":
			if c.mode != "Catalog" || kind != "RoleBinding" {
				bad("%s: %s composed", k, kind)
				continue
			}
			ref := o.GetFields()["roleRef"].GetStructValue()
			if field(ref, "kind") != "ClusterRole" || !strings.HasPrefix(field(ref, "name"), "workerimage-clone-") {
				bad("%s: the RoleBinding binds %s %s, not the catalog's clone ClusterRole", k, field(ref, "kind"), field(ref, "name"))
			}
		case "ClusterRole":
			for _, r := range o.GetFields()["rules"].GetListValue().GetValues() {
				rf := r.GetStructValue()
				got := fmt.Sprintf("%v %v %v", strs(rf, "apiGroups"), strs(rf, "resources"), strs(rf, "verbs"))
				if got != "[cdi.kubevirt.io] [datavolumes/source] [create]" {
					bad("%s: ClusterRole rule %s grants more than create on datavolumes/source", k, got)
				}
				names := strs(rf, "resourceNames")
				if len(names) == 0 {
					bad("%s: ClusterRole rule without resourceNames grants the clone of every PVC", k)
				}
				for _, n := range names {
					_, composed := rsp.GetDesired().GetResources()["golden-"+n]
					_, observed := req.GetObserved().GetResources()["golden-"+n]
					if !composed && !observed {
						bad("%s: ClusterRole grants the clone of %q, which is not one of the catalog's goldens", k, n)
					}
				}
			}
		}
	}
	return out
}

// strs reads a list of strings of a struct.
func strs(s *structpb.Struct, key string) []string {
	var out []string
	for _, v := range s.GetFields()[key].GetListValue().GetValues() {
		out = append(out, v.GetStringValue())
	}
	return out
}

// leaks lists the secret values and URL passwords rsp carries where they
// must not be: the victim's Join secrets anywhere; the attacker's own
// anywhere but its TalosConfigTemplates; a URL password anywhere.
func leaks(rsp *fnv1.RunFunctionResponse) []string {
	outside := proto.CloneOf(rsp)
	for k, r := range outside.GetDesired().GetResources() {
		if field(r.GetResource(), "kind") == "TalosConfigTemplate" {
			delete(outside.GetDesired().GetResources(), k)
		}
	}
	everywhere, _ := protojson.Marshal(rsp)
	rest, _ := protojson.Marshal(outside)
	var out []string
	for _, m := range joinSecretsOf("a").markers() {
		if bytes.Contains(everywhere, []byte(m)) {
			out = append(out, "tenant A's Join secret value "+m)
		}
	}
	for _, m := range joinSecretsOf("b").markers() {
		if bytes.Contains(rest, []byte(m)) {
			out = append(out, "the pool's own Join secret value "+m+" outside its TalosConfigTemplate")
		}
	}
	if i := bytes.Index(everywhere, []byte(urlPassword)); i >= 0 {
		out = append(out, fmt.Sprintf("a URL's password (…%s…)", everywhere[max(0, i-300):min(len(everywhere), i+60)]))
	}
	return out
}

// logBuffer collects a Function's log lines, at every verbosity.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) logger() logging.Logger {
	return logging.NewLogrLogger(funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.b.WriteString(prefix + " " + args + "\n")
	}, funcr.Options{Verbosity: 10}))
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestTenantIsolationProperty generates composites from every example
// scenario of the node-pool, tenant-cluster and catalog modes with hostile
// values written into their specs (mutateIsolation), in a world that holds
// the victim tenant's objects and both tenants' Join secrets
// (isolationWorld), resolves requirements both as Crossplane does and
// namespace-blind as crossplane render does, and judges every call's whole
// response and the log (isolationViolations, leaks). Deterministic: a fixed
// seed.
func TestTenantIsolationProperty(t *testing.T) {
	n := isolationCases
	if testing.Short() {
		n = isolationShortCases
	}
	var bases []exampleScenario
	for _, sc := range loadExampleScenarios(t) {
		mode, _, _ := strings.Cut(sc.Name, "/")
		if mode == "nodepool" || mode == "tenantcluster" || mode == "catalog" {
			bases = append(bases, sc)
		}
	}
	if len(bases) == 0 {
		t.Fatal("no example scenarios to generate from")
	}
	rng := rand.New(rand.NewPCG(36, 3)) // fixed seed: failures reproduce
	logs := &logBuffer{}
	f := NewFunction(logs.logger(), time.Minute, WithClock(fixture.Clock))
	counts := map[string]int{}
	for i := range n {
		base := bases[rng.IntN(len(bases))]
		req := base.firstRequest()
		in, err := config.DecodeInput(req.GetInput())
		if err != nil {
			t.Fatalf("%s: %v", base.Name, err)
		}
		cfg, err := config.FromInput(in, time.Minute)
		if err != nil {
			continue // an invalid Input composes nothing; catalogue tests judge it
		}
		xr := base.XR.AsMap()
		mutateIsolation(rng, xr, append(cfg.GoldenNamespaces(), victimNamespace, "kube-system"))
		xrs := mustStruct(t, xr)
		req.Observed.Composite.Resource = xrs
		if req.Desired == nil {
			req.Desired = &fnv1.State{}
		}
		mode := modeOf(req)
		c := isolationCase{
			where: fmt.Sprintf("case %d (from %s)", i, base.Name), mode: mode,
			xrNS: field(xrs, "metadata", "namespace"), cfg: cfg,
			xrKind: field(xrs, "kind"), xrName: field(xrs, "metadata", "name"),
			goldens: map[string]bool{},
		}
		for _, g := range cfg.GoldenNamespaces() {
			c.goldens[g] = true
		}
		if c.mode != "Catalog" && c.xrNS == "" {
			// A legacy cluster-scoped pool lives in its claim's namespace.
			c.xrNS = field(xrs, "metadata", "labels", "crossplane.io/claim-namespace")
		}
		world := isolationWorld(t, xrs, cfg.GoldenNamespace, base.Pool)
		blind := i%2 == 1
		before := len(logs.String())
		calls := isolationLoop(t, f, req, world, blind)
		for j, call := range calls {
			if v := isolationViolations(c, call.Request, call.Response); len(v) > 0 {
				t.Errorf("%s, call %d (blind resolver %t): %s\nspec: %v", c.where, j, blind, strings.Join(v, "\n  "), xr["spec"])
			}
			if l := leaks(call.Response); len(l) > 0 {
				t.Errorf("%s, call %d (blind resolver %t): the response carries %s", c.where, j, blind, strings.Join(l, ", "))
			}
		}
		if t.Failed() {
			t.FailNow()
		}
		logged := logs.String()[before:]
		for _, m := range append(append(joinSecretsOf("a").markers(), joinSecretsOf("b").markers()...), urlPassword) {
			if strings.Contains(logged, m) {
				t.Fatalf("%s: the log carries %q:\n%s", c.where, m, logged)
			}
		}
		last := calls[len(calls)-1].Response
		switch {
		case fatalMessage(last) != "":
			counts[mode+" fatal"]++
		default:
			counts[mode+" composed"]++
			for _, r := range last.GetDesired().GetResources() {
				if field(r.GetResource(), "kind") == "TalosConfigTemplate" && strings.Contains(protojson.Format(r), joinSecretsOf("b").token) {
					counts["join configs with the pool's own secrets"]++
				}
			}
		}
	}
	// The corpus must reach the paths it is about: composed pools and
	// tenant clusters, refused ones, and Join pools that read secrets.
	for _, k := range []string{"NodePool composed", "NodePool fatal", "TenantCluster composed", "TenantCluster fatal", "Catalog composed", "join configs with the pool's own secrets"} {
		if counts[k] == 0 {
			t.Errorf("no generated case reached %q (%v): the generator must exercise it", k, counts)
		}
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%s: %d", k, counts[k])
	}
}
