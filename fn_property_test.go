package main

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/cozystack/function-worker-image/internal/labels"
)

// Sizes of the randomized catalog histories.
const (
	catalogHistories     = 200
	catalogStepsPerRun   = 12
	catalogTenantSpaces  = 4
	catalogCandidateKeys = 5
)

// TestCatalogNeverLosesWhatItComposed replays randomized histories of a
// catalog: entries come and go, goldens import, fail, succeed or vanish, and
// templates in tenant namespaces start and stop pinning them. After every
// step, what the function composed becomes what Crossplane observes next.
// Invariants: no observed golden is missing from the desired state unless it
// left the catalog and nothing pins it (the one documented retirement); the
// clone RBAC is always composed; the RoleBinding grants exactly the
// namespaces whose templates pin a golden, never one that pins nothing; and
// an entry's golden keeps its name for as long as its (schematicID, version)
// does.
func TestCatalogNeverLosesWhatItComposed(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1)) // fixed seed: failures reproduce
	f := newTestFunction()
	type candidate struct{ sid, version string }
	var cands []candidate
	for i := range catalogCandidateKeys {
		cands = append(cands, candidate{fmt.Sprintf("%064x", i+1), fmt.Sprintf("v1.1%d.%d", i%3, i)})
	}
	phases := []string{"", "Pending", "ImportInProgress", "Succeeded", "Failed"}
	for run := range catalogHistories {
		observed := map[string]*fnv1.Resource{}
		for step := range catalogStepsPerRun {
			// The catalog this step.
			var entries []any
			inCatalog := map[string]bool{}
			for _, c := range cands {
				if rng.IntN(2) == 0 {
					entries = append(entries, map[string]any{"schematicID": c.sid, "version": c.version})
					inCatalog["talos-worker-"+c.sid+"-"+c.version] = true
				}
			}
			xr, err := structpb.NewStruct(map[string]any{"apiVersion": "workerimage.cozystack.io/v1alpha1", "kind": "XWorkerImageCatalog", "metadata": map[string]any{"name": "default"},
				"spec": map[string]any{"storageClass": "replicated", "images": entries}})
			if err != nil {
				t.Fatal(err)
			}
			// Templates pinning goldens: any candidate golden, from any tenant namespace.
			var pool []*structpb.Struct
			pinners := map[string]map[string]bool{} // golden -> namespaces
			for _, c := range cands {
				name := "talos-worker-" + c.sid + "-" + c.version
				for ns := range catalogTenantSpaces {
					if rng.IntN(4) != 0 {
						continue
					}
					nsName := fmt.Sprintf("tenant-%d", ns)
					if pinners[name] == nil {
						pinners[name] = map[string]bool{}
					}
					pinners[name][nsName] = true
					pool = append(pool, mustStruct(t, map[string]any{"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "KubevirtMachineTemplate",
						"metadata": map[string]any{"name": "tmpl-" + c.version, "namespace": nsName, "labels": map[string]any{"workerimage.cozystack.io/golden": goldenHashOf(name)}}}))
				}
			}
			req := &fnv1.RunFunctionRequest{Input: mustStruct(t, map[string]any{"apiVersion": "workerimage.fn.crossplane.io/v1beta1", "kind": "Input"}),
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}, Resources: observed}}
			final, rsp := settleRequest(t, f, req, pool)
			where := fmt.Sprintf("history %d step %d", run, step)
			if m := fatalMessage(rsp); m != "" {
				t.Fatalf("%s: a valid catalog gave a fatal result: %s", where, m)
			}
			if lost := droppedOutput(final, rsp); len(lost) > 0 {
				t.Fatalf("%s: dropped %q", where, lost)
			}
			desired := rsp.GetDesired().GetResources()
			for name := range inCatalog {
				if _, ok := desired["golden-"+name]; !ok {
					t.Fatalf("%s: catalog entry's golden %s is not composed under its own name", where, name)
				}
			}
			wantNS := map[string]bool{}
			for k := range desired {
				if name, ok := strings.CutPrefix(k, "golden-"); ok {
					for ns := range pinners[name] {
						wantNS[ns] = true
					}
				}
			}
			gotNS := []string{}
			for _, s := range desired["clone-rolebinding"].GetResource().GetFields()["subjects"].GetListValue().GetValues() {
				if field(s.GetStructValue(), "kind") != "ServiceAccount" || field(s.GetStructValue(), "name") != "default" {
					t.Fatalf("%s: the clone RoleBinding must bind only the VM service account \"default\", got subject %v", where, s)
				}
				gotNS = append(gotNS, field(s.GetStructValue(), "namespace"))
			}
			if diff := cmp.Diff(sortedKeys(wantNS), gotNS); diff != "" {
				t.Fatalf("%s: the clone RoleBinding must grant exactly the VM service account of each pinning namespace (-want, +got):\n%s", where, diff)
			}

			// What was composed is observed next, with a random import state;
			// now and then a golden vanishes (deleted by hand).
			next := map[string]*fnv1.Resource{}
			keys := make([]string, 0, len(desired))
			for k := range desired {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if strings.HasPrefix(k, "golden-") && rng.IntN(10) == 0 {
					continue
				}
				obj := desired[k].GetResource().AsMap()
				if strings.HasPrefix(k, "golden-") {
					obj["status"] = map[string]any{"phase": phases[rng.IntN(len(phases))], "restartCount": float64(rng.IntN(5))}
				}
				next[k] = &fnv1.Resource{Resource: mustStruct(t, obj)}
			}
			observed = next
		}
	}
}

// goldenHashOf is the golden label value of a golden in cozy-public.
func goldenHashOf(name string) string {
	return labels.GoldenHash("cozy-public", name)
}

// Sizes of the randomized node-pool histories.
const (
	poolHistories   = 100
	poolStepsPerRun = 12
)

// TestNodePoolNeverLosesOrRenamesWhatItComposed replays randomized histories
// of one clone-path pool whose spec never changes, while the world moves: the
// golden appears, imports, fails, succeeds and disappears; the default
// StorageClass moves between classes; MachineSets pointing at any template
// seen so far come and go. After every step what the function composed
// becomes what Crossplane observes next. Invariants: no observed template or
// MachineDeployment is missing from the desired state unless the template is
// referenced by neither a MachineSet nor the MachineDeployment (the
// documented retirement); and once the MachineDeployment points at a
// template, it keeps pointing at that same name: the spec did not change, so
// no worker may roll.
func TestNodePoolNeverLosesOrRenamesWhatItComposed(t *testing.T) {
	scenarios := map[string]exampleScenario{}
	for _, sc := range loadExampleScenarios(t) {
		scenarios[sc.Name] = sc
	}
	base, ok := scenarios["nodepool/builtin-golden-succeeded"]
	if !ok {
		t.Skip("example nodepool/builtin-golden-succeeded does not exist")
	}
	rng := rand.New(rand.NewPCG(6, 2)) // fixed seed: failures reproduce
	f := newTestFunction()
	phases := []string{"", "ImportInProgress", "Succeeded", "Failed", "gone"}
	classes := []string{"replicated", "local"}
	for run := range poolHistories {
		observed := map[string]*fnv1.Resource{}
		templates := map[string]bool{} // every KubevirtMachineTemplate name composed so far
		current := ""
		for step := range poolStepsPerRun {
			phase := phases[rng.IntN(len(phases))]
			def := classes[rng.IntN(len(classes))]
			var pool []*structpb.Struct
			for _, o := range base.Pool {
				m := o.AsMap()
				switch field(o, "kind") {
				case "DataVolume", "PersistentVolumeClaim":
					if phase == "gone" && strings.HasPrefix(field(o, "metadata", "name"), "talos-worker-") {
						continue
					}
					if field(o, "kind") == "DataVolume" && phase != "" {
						m["status"] = map[string]any{"phase": phase}
					} else if field(o, "kind") == "DataVolume" {
						delete(m, "status")
					}
				case "StorageClass":
					md := m["metadata"].(map[string]any)
					md["annotations"] = map[string]any{}
					if field(o, "metadata", "name") == def {
						md["annotations"] = map[string]any{"storageclass.kubernetes.io/is-default-class": "true"}
					}
				}
				pool = append(pool, mustStruct(t, m))
			}
			names := sortedKeys(templates)
			for i, name := range names {
				if rng.IntN(2) == 0 {
					continue
				}
				pool = append(pool, mustStruct(t, map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineSet",
					"metadata": map[string]any{"name": fmt.Sprintf("ms-%d", i), "namespace": field(base.XR, "metadata", "namespace"),
						"labels": map[string]any{"cluster.x-k8s.io/deployment-name": field(base.XR, "metadata", "name")}},
					"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"infrastructureRef": map[string]any{"name": name}}}}}))
			}
			req := base.firstRequest()
			req.Observed.Resources = observed
			final, rsp := settleRequest(t, f, req, pool)
			where := fmt.Sprintf("history %d step %d (golden %q, default class %s)", run, step, phase, def)
			if lost := droppedOutput(final, rsp); len(lost) > 0 {
				t.Fatalf("%s: dropped %q", where, lost)
			}
			desired := rsp.GetDesired().GetResources()
			if md, ok := desired["machinedeployment"]; ok {
				ref := field(md.GetResource().GetFields()["spec"].GetStructValue().GetFields()["template"].GetStructValue().GetFields()["spec"].GetStructValue(), "infrastructureRef", "name")
				if current == "" {
					current = ref
				}
				if ref != current {
					t.Fatalf("%s: the MachineDeployment moved from template %s to %s although the pool's spec did not change", where, current, ref)
				}
			}
			next := map[string]*fnv1.Resource{}
			for k, d := range desired {
				if strings.HasPrefix(k, "kubevirtmachinetemplate-") {
					templates[field(d.GetResource(), "metadata", "name")] = true
				}
				next[k] = &fnv1.Resource{Resource: d.GetResource()}
			}
			observed = next
		}
	}
}
