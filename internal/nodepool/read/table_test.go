package read

import (
	"maps"
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/poolspec"
	"github.com/cozystack/function-worker-image/internal/required"
)

// richInput asks for every row: a clone pool of another architecture than
// the Input's that declares its class, has an instance type, joins a
// cluster, composes no MachineDeployment yet and reads everything.
func richInput() Input {
	return Input{
		Pool: pool.Pool{Namespace: "tenant-a", Cluster: "demo", Name: "md0"},
		Image: pool.Image{
			Source: poolspec.SourceClone, SchematicID: poolspec.Setting{Value: "abc"}, Version: poolspec.Setting{Value: "v1.13.6"},
			Arch: poolspec.Setting{Value: "arm64"}, GoldenNamespace: "cozy-public", GoldenName: "talos-worker-abc-v1.13.6",
		},
		GoldenBase:    "talos-worker-abc-v1.13.6",
		InstanceType:  "u1.medium",
		DeclaredClass: "replicated",
		Bootstrap:     &v1alpha1.Bootstrap{Mode: v1alpha1.BootstrapJoin, FactsRevision: 2},
		Config: config.Config{
			Arch: "amd64", ClusterAPIVersion: v1beta1.ClusterAPIV1Beta1, SnapshotGoldens: true, ReadSnapshotClasses: true,
			Join: config.Join{
				TalosSecretsSuffix: "-talos-secrets", TalosCASuffix: "-talos-ca", KubernetesCASuffix: "-ca", APIServerServiceSuffix: "",
				DNSServiceNamespace: "kube-system", DNSServiceName: "kube-dns",
				ControlPlaneAPIVersion: "controlplane.cluster.x-k8s.io/v1alpha1", ControlPlaneKind: "KamajiControlPlane",
			},
		},
		Reads: Reads{Clone: true, Grant: true, Workers: true, DiskClass: true, Budget: true, KubeVirt: true},
	}
}

// variants are inputs that ask for some rows and not others.
func variants() map[string]Input {
	composedMD := Composed{Observed: compose.Observed{Resources: map[resource.Name]*composed.Unstructured{ResourceMachineDeployment: composed.New()}}}
	out := map[string]Input{}
	with := func(name string, change func(*Input)) {
		in := richInput()
		change(&in)
		out[name] = in
	}
	with("Everything", func(*Input) {})
	with("Nothing", func(in *Input) {
		in.Image.Source, in.Image.Arch.Value = poolspec.SourceHTTP, "amd64"
		in.InstanceType, in.DeclaredClass, in.Bootstrap = "", "", nil
		in.Config.SnapshotGoldens, in.Config.ReadSnapshotClasses = false, false
		in.Composed, in.Reads = composedMD, Reads{}
	})
	with("HTTPPoolWithEveryFlag", func(in *Input) { in.Image.Source = poolspec.SourceHTTP })
	with("OwnArchitecture", func(in *Input) { in.Image.Arch.Value = "amd64" })
	with("NoDeclaredClass", func(in *Input) { in.DeclaredClass = "" })
	with("SizedByResources", func(in *Input) { in.InstanceType = "" })
	with("Generate", func(in *Input) { in.Bootstrap = nil })
	with("GenerateDeclared", func(in *Input) { in.Bootstrap = &v1alpha1.Bootstrap{Mode: v1alpha1.BootstrapGenerate} })
	with("ComposesItsDeployment", func(in *Input) { in.Composed = composedMD })
	with("NoSnapshotGoldens", func(in *Input) { in.Config.SnapshotGoldens = false })
	with("NoSnapshotClasses", func(in *Input) { in.Config.ReadSnapshotClasses = false })
	for name, rd := range map[string]Reads{
		"NoFlags": {}, "CloneOnly": {Clone: true}, "BudgetOnly": {Budget: true}, "GrantOnly": {Grant: true},
		"WorkersOnly": {Workers: true}, "DiskClassOnly": {DiskClass: true}, "KubeVirtOnly": {KubeVirt: true},
	} {
		with(name, func(in *Input) { in.Reads = rd })
	}
	return out
}

// extra is what a row's object carries besides what its selector names, so
// that its reader keeps it and it tells: the golden's claim names its PV
// and no class, the snapshot its content, the deployment its templates.
var extra = map[string]map[string]any{
	ReqGoldenPVC:          {"spec": map[string]any{"volumeName": "pv-golden"}},
	ReqGoldenSnapshot:     {"status": map[string]any{"boundVolumeSnapshotContentName": "content-golden"}},
	ReqCDI:                {"spec": map[string]any{"cloneStrategyOverride": "copy"}},
	ReqCDIConfig:          {"status": map[string]any{"filesystemOverhead": map[string]any{"global": "0.1"}}},
	ReqExistingDeployment: {"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"infrastructureRef": map[string]any{"name": "kmt-existing"}, "bootstrap": map[string]any{"configRef": map[string]any{"name": "tct-existing"}}}}}},
}

// objectOf is an object sel selects, with extra.
func objectOf(t *testing.T, name string, sel *fnv1.ResourceSelector) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range extra[name] {
		u.Object[k] = v
	}
	u.SetAPIVersion(sel.GetApiVersion())
	u.SetKind(sel.GetKind())
	u.SetNamespace(sel.GetNamespace())
	u.SetName(sel.GetMatchName())
	if sel.GetMatchLabels() != nil {
		u.SetName("x-" + name)
		l := maps.Clone(sel.GetMatchLabels().GetLabels())
		if name == ReqCloneClaims {
			// A clone of another pool's disk carries its pool's label.
			l[labels.Pool] = "another-pool"
		}
		u.SetLabels(l)
	}
	return u
}

// fetchedAll is an object for every row the rich input asks for, chained
// rows included, as Crossplane would return them.
func fetchedAll(t *testing.T) (required.Resolved, required.Raw) {
	t.Helper()
	in := richInput()
	got, raw := required.Resolved{}, required.Raw{}
	add := func(sel required.Selectors) {
		for name, s := range sel {
			u := objectOf(t, name, s)
			if !RawNames()[name] {
				got[name] = []*unstructured.Unstructured{u}
				continue
			}
			st, err := structpb.NewStruct(u.Object)
			if err != nil {
				t.Fatal(err)
			}
			raw[name] = []*structpb.Struct{st}
		}
	}
	add(Requirements(&in))
	add(Chained(&in, got))
	return got, raw
}

// TestTableAskedIsRead: for each input, a row is read exactly when the
// call asks for it, at once or chained: its objects change the current
// state when asked, and nothing when not, whatever Crossplane sent.
func TestTableAskedIsRead(t *testing.T) {
	got, raw := fetchedAll(t)
	rich := richInput()
	everything := Requirements(&rich)
	for _, r := range table {
		if r.After == nil && everything[r.Name] == nil {
			t.Errorf("row %s: the rich input must ask for every row", r.Name)
		}
		if r.After != nil && Chained(&rich, got)[r.Name] == nil {
			t.Errorf("chained row %s: the rich input must ask for every row", r.Name)
		}
	}
	for vname, in := range variants() {
		sel := Requirements(&in)
		// What Crossplane answers: what was asked, and then what the
		// chained rows ask of that (fn.go).
		answered := required.Resolved{}
		for name := range sel {
			if objs, ok := got[name]; ok {
				answered[name] = objs
			}
		}
		maps.Copy(sel, Chained(&in, answered))
		base := Read(&in, got, raw)
		for _, r := range table {
			if r.Peeked {
				continue
			}
			without, withoutRaw := maps.Clone(got), maps.Clone(raw)
			delete(without, r.Name)
			delete(withoutRaw, r.Name)
			read := !reflect.DeepEqual(base, Read(&in, without, withoutRaw))
			_, asked := sel[r.Name]
			switch {
			case asked && !read:
				t.Errorf("%s: row %s is asked for but its objects are dropped", vname, r.Name)
			case !asked && read:
				t.Errorf("%s: row %s is read though not asked for", vname, r.Name)
			}
		}
		// Peeked rows are read by the golden choice alone.
		for _, r := range table {
			if !r.Peeked {
				continue
			}
			with := maps.Clone(got)
			with[r.Name] = []*unstructured.Unstructured{objectOf(t, r.Name, r.Selector(&in))}
			if !reflect.DeepEqual(base, Read(&in, with, raw)) {
				t.Errorf("%s: peeked row %s is read by Read", vname, r.Name)
			}
		}
	}
}

// TestTablePeekedRowsAreTheChoices: the golden choice peeks at exactly the
// rows the table marks Peeked, when the call asks for them.
func TestTablePeekedRowsAreTheChoices(t *testing.T) {
	for vname, in := range variants() {
		var peeked []string
		// Prepare chooses the golden of a clone pool only.
		if in.Image.Source != poolspec.SourceClone {
			in.DeclaredClass = ""
		}
		ChooseGoldenOf(in.Image, in.Config, in.DeclaredClass, "", func(name string) []*unstructured.Unstructured {
			peeked = append(peeked, name)
			return nil
		})
		var want []string
		sel := Requirements(&in)
		for _, r := range table {
			if _, asked := sel[r.Name]; asked && r.Peeked {
				want = append(want, r.Name)
			}
		}
		slices.Sort(peeked)
		slices.Sort(want)
		if !slices.Equal(peeked, want) {
			t.Errorf("%s: the choice peeks at %v, the table asks for %v", vname, peeked, want)
		}
	}
}

// TestTableRows lists every row's name once, and checks each row is
// well formed: a reader unless peeked, a selector unless chained, chained
// on rows before it.
func TestTableRows(t *testing.T) {
	want := []string{
		ReqMachineSets, ReqInstancetype, ReqWorkerDVs, ReqWorkerPVCs,
		ReqGoldenDataVolume, ReqGoldenPVC, ReqStorageClasses, ReqStorageCapacities, ReqCloneClaims,
		ReqStorageProfiles, ReqSnapshotClasses, ReqCDI, ReqCDIConfig,
		ReqGoldenSnapshot, ReqGoldenSnapshotContent, ReqGoldenPV,
		ReqCloneBindings, ReqCloneRoles, ReqKubeVirt,
		reqArchGolden, reqArchGoldenBase, reqClassGolden,
		ReqJoinTalosSecrets, ReqJoinTalosCA, ReqJoinKubernetesCA, ReqJoinAPIServer, ReqJoinDNS, ReqControlPlane,
		ReqExistingDeployment, ReqExistingMachine, ReqExistingBootstrap,
	}
	var got []string
	seen := map[string]int{}
	for i, r := range table {
		got = append(got, r.Name)
		if _, dup := seen[r.Name]; dup {
			t.Errorf("row %s is in the table twice", r.Name)
		}
		seen[r.Name] = i
		if r.When == nil {
			t.Errorf("row %s says nothing of when it is asked", r.Name)
		}
		if (r.Read == nil) != r.Peeked {
			t.Errorf("row %s: a reader unless peeked (Read set: %t, Peeked: %t)", r.Name, r.Read != nil, r.Peeked)
		}
		if (r.Selector == nil) != (r.After != nil) {
			t.Errorf("row %s: a selector unless chained", r.Name)
		}
		if r.After == nil {
			continue
		}
		if r.Raw || r.Peeked {
			t.Errorf("chained row %s is neither raw nor peeked", r.Name)
		}
		for _, on := range r.After.On {
			if j, ok := seen[on]; !ok || j >= i {
				t.Errorf("row %s is chained on %s, which must come before it", r.Name, on)
			}
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the table's rows are\n%v\nwant\n%v", got, want)
	}
	if raw := slices.Sorted(maps.Keys(RawNames())); !slices.Equal(raw, []string{ReqCloneClaims, ReqWorkerDVs, ReqWorkerPVCs}) {
		t.Errorf("raw rows are %v", raw)
	}
}
