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

// Sizes of the randomized catalog histories. One step in
// catalogQuietSteps has no pool at all, so that with Usages on the goldens
// lose their in-use label while the RoleBinding still binds namespaces.
const (
	catalogHistories     = 200
	catalogStepsPerRun   = 12
	catalogTenantSpaces  = 20
	catalogCandidateKeys = 5
	catalogQuietSteps    = 5
)

// TestCatalogNeverLosesWhatItComposed replays randomized histories of a
// catalog, half with Crossplane Usages on (the default) and half with them
// off: entries come and go, goldens import, fail, succeed or vanish, and
// pools in tenant namespaces start and stop pinning them: their templates
// carry the golden's label and, with Usages on, their Usages of the golden
// (some from before the golden label) protect it, some ask for the clone
// grant, and Crossplane's usage controller labels the golden in use. After
// every step, what the function composed becomes what Crossplane observes
// next, status included. Invariants: no observed golden is missing from the
// desired state unless it left the catalog and nothing pins it (the one
// documented retirement); the clone RBAC is always composed; and an entry's
// golden keeps its name for as long as its (schematicID, version) does. The
// RoleBinding binds VM service accounts only: with Usages off, exactly those
// of the namespaces whose templates pin a golden; with Usages on, those it
// bound already while any golden of the catalog carries the in-use label,
// plus those asking for a grant.
func TestCatalogNeverLosesWhatItComposed(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1)) // fixed seed: failures reproduce
	f := newTestFunction()
	type candidate struct{ sid, version string }
	var cands []candidate
	for i := range catalogCandidateKeys {
		cands = append(cands, candidate{fmt.Sprintf("%064x", i+1), fmt.Sprintf("v1.1%d.%d", i%3, i)})
	}
	phases := []string{"", "Pending", "ImportInProgress", "Succeeded", "Failed"}
	// Usages-on steps where a bound namespace that asks for no grant stayed
	// bound (a golden in use) or was unbound (none in use).
	keptBound, unbound := 0, 0
	for run := range catalogHistories {
		usages := run%2 == 0
		input := map[string]any{"apiVersion": "workerimage.fn.crossplane.io/v1beta1", "kind": "Input"}
		if !usages {
			input["usages"] = map[string]any{"enabled": false}
		}
		observed := map[string]*fnv1.Resource{}
		var status any
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
			composite := map[string]any{"apiVersion": "workerimage.cozystack.io/v1alpha1", "kind": "XWorkerImageCatalog", "metadata": map[string]any{"name": "default"},
				"spec": map[string]any{"storageClass": "replicated", "images": entries}}
			if status != nil {
				composite["status"] = status
			}
			xr := mustStruct(t, composite)
			// Pools pinning goldens: any candidate golden, from any tenant
			// namespace.
			var pool []*structpb.Struct
			pinners := map[string]map[string]bool{} // golden -> namespaces
			askers := map[string]map[string]bool{}  // golden -> namespaces asking for the grant
			quiet := rng.IntN(catalogQuietSteps) == 0
			for _, c := range cands {
				name := "talos-worker-" + c.sid + "-" + c.version
				for ns := range catalogTenantSpaces {
					if quiet || rng.IntN(4) != 0 {
						continue
					}
					nsName := fmt.Sprintf("tenant-%02d", ns)
					addTo(pinners, name, nsName)
					pool = append(pool, templateOf(t, nsName, "tmpl-"+c.version, goldenHashOf(name)))
					if !usages {
						continue
					}
					l := map[string]any{"app.kubernetes.io/managed-by": "function-worker-image", "workerimage.cozystack.io/golden": goldenHashOf(name)}
					switch rng.IntN(4) {
					case 0: // composed before the golden label
						delete(l, "workerimage.cozystack.io/golden")
					case 1:
						l["workerimage.cozystack.io/clone-grant-request"] = goldenHashOf(name)
						addTo(askers, name, nsName)
					}
					pool = append(pool, poolUsageOf(t, nsName, "tmpl-"+c.version, "cozy-public/"+name, l))
				}
			}
			if usages {
				// Pools of a golden of another namespace, which pin nothing
				// of this catalog.
				for ns := range catalogTenantSpaces {
					if rng.IntN(4) == 0 {
						nsName, other := fmt.Sprintf("tenant-%02d", ns), "talos-worker-"+cands[0].sid+"-"+cands[0].version
						pool = append(pool, templateOf(t, nsName, "other", labels.GoldenHash("golden-images", other)),
							poolUsageOf(t, nsName, "other", "golden-images/"+other, map[string]any{"app.kubernetes.io/managed-by": "function-worker-image", "workerimage.cozystack.io/golden": labels.GoldenHash("golden-images", other)}))
					}
				}
				// Crossplane's usage controller labels a golden while a
				// Usage names it.
				for k, o := range observed {
					name, ok := strings.CutPrefix(k, "golden-")
					if !ok {
						continue
					}
					md := o.GetResource().GetFields()["metadata"].GetStructValue()
					if md.GetFields()["labels"].GetStructValue() == nil {
						md.Fields["labels"] = structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{}})
					}
					lbl := md.GetFields()["labels"].GetStructValue()
					delete(lbl.Fields, "crossplane.io/in-use")
					if len(pinners[name]) > 0 {
						lbl.Fields["crossplane.io/in-use"] = structpb.NewStringValue("true")
					}
				}
			}
			req := &fnv1.RunFunctionRequest{Input: mustStruct(t, input),
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}, Resources: observed}}
			final, rsp := settleRequest(t, f, req, pool)
			where := fmt.Sprintf("history %d step %d (usages %t)", run, step, usages)
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
			goldens := map[string]bool{} // the catalog's goldens: composed ones
			for k := range desired {
				if name, ok := strings.CutPrefix(k, "golden-"); ok {
					goldens[name] = true
				}
			}
			wantNS := map[string]bool{}
			if !usages {
				for name := range goldens {
					for ns := range pinners[name] {
						wantNS[ns] = true
					}
				}
			} else {
				// An observed golden in use is always composed again.
				anyInUse := false
				for k, o := range final.GetObserved().GetResources() {
					if strings.HasPrefix(k, "golden-") && field(o.GetResource(), "metadata", "labels", "crossplane.io/in-use") == "true" {
						anyInUse = true
					}
				}
				asking := map[string]bool{}
				for name := range goldens {
					for ns := range askers[name] {
						asking[ns] = true
					}
				}
				for _, ns := range boundNamespacesOf(final.GetObserved().GetResources()["clone-rolebinding"].GetResource()) {
					switch {
					case asking[ns]:
					case anyInUse:
						keptBound++
					default:
						unbound++
					}
					if anyInUse {
						wantNS[ns] = true
					}
				}
				for ns := range asking {
					wantNS[ns] = true
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
				t.Fatalf("%s: the clone RoleBinding must grant exactly the VM service account of each namespace that pins a golden (-want, +got):\n%s", where, diff)
			}
			status = rsp.GetDesired().GetComposite().GetResource().AsMap()["status"]

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
	if keptBound == 0 || unbound == 0 {
		t.Fatalf("bound namespaces asking for no grant: %d kept while a golden was in use, %d unbound while none was; the histories must exercise both", keptBound, unbound)
	}
}

// addTo adds v to the set m[k].
func addTo(m map[string]map[string]bool, k, v string) {
	if m[k] == nil {
		m[k] = map[string]bool{}
	}
	m[k][v] = true
}

// templateOf is a pool's clone template in namespace ns, labelled with the
// hash of the golden it clones.
func templateOf(t *testing.T, ns, name, hash string) *structpb.Struct {
	return mustStruct(t, map[string]any{"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "KubevirtMachineTemplate",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": map[string]any{"workerimage.cozystack.io/golden": hash, "app.kubernetes.io/managed-by": "function-worker-image"}}})
}

// poolUsageOf is a pool's Usage of a golden DataVolume (ref is
// "<namespace>/<name>") in namespace ns, with labels l.
func poolUsageOf(t *testing.T, ns, template, ref string, l map[string]any) *structpb.Struct {
	goldenNS, golden, _ := strings.Cut(ref, "/")
	return mustStruct(t, map[string]any{"apiVersion": "protection.crossplane.io/v1beta1", "kind": "Usage",
		"metadata": map[string]any{"name": template + "-datavolume", "namespace": ns, "labels": l, "annotations": map[string]any{"workerimage.cozystack.io/golden": ref}},
		"spec": map[string]any{"of": map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "resourceRef": map[string]any{"name": golden, "namespace": goldenNS}},
			"by": map[string]any{"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "KubevirtMachineTemplate", "resourceRef": map[string]any{"name": template}}, "replayDeletion": true}})
}

// boundNamespacesOf are the namespaces of the service accounts a RoleBinding
// binds, sorted.
func boundNamespacesOf(rb *structpb.Struct) []string {
	set := map[string]bool{}
	for _, s := range rb.GetFields()["subjects"].GetListValue().GetValues() {
		if field(s.GetStructValue(), "kind") == "ServiceAccount" && field(s.GetStructValue(), "namespace") != "" {
			set[field(s.GetStructValue(), "namespace")] = true
		}
	}
	return sortedKeys(set)
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
