package nodepool

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/storageclass"
)

// randomObserved builds an observed state: some old templates, maybe a
// MachineDeployment pointing at one of them, maybe the current templates.
func randomObserved(t *testing.T, rng *rand.Rand, spec map[string]any, w worldFixture) (map[resource.Name]resource.ObservedComposed, []string) {
	t.Helper()
	obs := map[resource.Name]resource.ObservedComposed{}
	var old []string
	if rng.IntN(3) > 0 {
		// The current render, as if it had been applied before.
		for n, o := range composeOnce(t, spec, w, mdReady(int64(rng.IntN(3)))) {
			if rng.IntN(4) > 0 {
				obs[n] = o
			}
		}
	}
	for i := range rng.IntN(4) {
		name := fmt.Sprintf("demo-md0-old%07d", i)
		old = append(old, name)
		for _, prefix := range []string{prefixMachineTemplate, prefixBootstrapTemplate} {
			u := composed.New()
			u.SetAPIVersion(InfraAPIVersion)
			u.SetKind(KindKubevirtMachineTmpl)
			if prefix == prefixBootstrapTemplate {
				u.SetAPIVersion(BootstrapAPIVersion)
				u.SetKind(KindTalosConfigTemplate)
			}
			u.SetName(name)
			u.SetNamespace(fxNamespace)
			_ = u.SetValue("spec", map[string]any{"template": map[string]any{"spec": map[string]any{"old": int64(i)}}})
			obs[resource.Name(prefix+name)] = resource.ObservedComposed{Resource: u}
		}
	}
	if md, ok := obs[resourceMachineDeployment]; ok && len(old) > 0 && rng.IntN(2) == 0 {
		ref := old[rng.IntN(len(old))]
		_ = md.Resource.SetValue("spec.template.spec.infrastructureRef.name", ref)
		_ = md.Resource.SetValue("spec.template.spec.bootstrap.configRef.name", ref)
	}
	return obs, old
}

func randomWorld(rng *rand.Rand, old []string) worldFixture {
	goldens := []worldFixture{missing, importing, failed, restartLoop, succeeded, {goldenPVC: goldenPVC("replicated", "6Gi")}}
	w := goldens[rng.IntN(len(goldens))]
	w.classes = nil
	w.ungranted = rng.IntN(3) == 0
	anns := []string{storageclass.AnnVirtDefault, storageclass.AnnDefault, storageclass.AnnBetaDefault, "none"}
	for i := range rng.IntN(3) {
		w.classes = append(w.classes, storageClassObj([]string{"replicated", "local", "fast"}[i], fmt.Sprintf("2025-0%d-01T00:00:00Z", 1+rng.IntN(9)), map[string]any{anns[rng.IntN(len(anns))]: "true"}))
	}
	if rng.IntN(2) == 0 {
		w.dvs = append(w.dvs, workerDV("demo-md0-a-disk-system", []string{"Succeeded", "CloneInProgress", "CloneWithoutSource"}[rng.IntN(3)], rng.IntN(2) == 0))
		w.pvcs = append(w.pvcs, workerPVC("demo-md0-a-disk-system", []string{"replicated", "local"}[rng.IntN(2)], nil))
	}
	for i, name := range old {
		if rng.IntN(2) == 0 {
			w.sets = append(w.sets, machineSet(fmt.Sprintf("demo-md0-ms%d", i), name, name))
		}
	}
	return w
}

// TestPropertyNothingObservedIsDroppedByAccident: for randomized observed
// states, every observed composed resource this mode owns is in the desired
// state unless the rules drop it on purpose (a previous template nothing
// references any more, with the gate open), and the template names do not
// depend on the observed composed resources.
func TestPropertyNothingObservedIsDroppedByAccident(t *testing.T) {
	specs := []map[string]any{
		{},
		{"osImage": builtin()},
		{"osImage": builtin(), "diskSize": "30Gi"},
		{"osImage": builtin(), "storageClass": "local"},
		{"osImage": map[string]any{"factory": map[string]any{"version": "v1.13.2"}}},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		spec := specs[rng.IntN(len(specs))]
		w0 := randomWorld(rng, nil)
		obs, old := randomObserved(t, rng, spec, w0)
		w := randomWorld(rng, old)

		r := request(t, nodePoolXR(spec), w, obs)
		pl, err := decide(r, readComposed(r.Observed))
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		out := Mode{}.Compose(r)
		if out.Fatal != nil {
			t.Fatalf("case %d: %v", i, out.Fatal)
		}

		// The template names are a function of spec and required resources
		// only: composing with no observed state gives the same names.
		bareReq := request(t, nodePoolXR(spec), w, nil)
		bare, err := decide(bareReq, readComposed(bareReq.Observed))
		if err != nil {
			t.Fatal(err)
		}
		if bare.MachineTemplate.Name != pl.MachineTemplate.Name || bare.BootstrapTemplate.Name != pl.BootstrapTemplate.Name {
			t.Errorf("case %d: template names depend on observed state: %s/%s without, %s/%s with", i,
				bare.MachineTemplate.Name, bare.BootstrapTemplate.Name, pl.MachineTemplate.Name, pl.BootstrapTemplate.Name)
		}

		referenced := map[string]bool{}
		for _, ms := range pl.World.MachineSets {
			referenced[prefixMachineTemplate+ms.Spec.Template.Spec.InfrastructureRef.Name] = true
			referenced[prefixBootstrapTemplate+ms.Spec.Template.Spec.Bootstrap.ConfigRef.Name] = true
		}
		m, b := pl.Observed.inEffect()
		referenced[prefixMachineTemplate+m], referenced[prefixBootstrapTemplate+b] = true, true

		for n := range obs {
			if _, ok := out.Resources[n]; ok {
				continue
			}
			// A Usage goes with its template: Crossplane's usage controller
			// then waits for the template to be gone before it lets go.
			usageOfDropped := strings.HasPrefix(string(n), prefixUsage) && out.Resources[machineTemplateResource(usageTemplate(obs[n].Resource))] == nil
			onPurpose := usageOfDropped || (pl.Hold == nil || pl.Hold.DeploymentOnly) && n != resourceMachineDeployment && !referenced[string(n)] &&
				(strings.HasPrefix(string(n), prefixMachineTemplate) || strings.HasPrefix(string(n), prefixBootstrapTemplate))
			if !onPurpose {
				t.Errorf("case %d: observed %s was dropped (hold=%v, referenced=%v)", i, n, pl.Hold, referenced[string(n)])
			}
		}
		if pl.Hold != nil {
			for n, d := range out.Resources {
				o, observed := obs[n]
				switch {
				case strings.HasPrefix(string(n), prefixUsage):
					// Protection of a template that is kept may be added
					// while held: it composes no worker.
					if out.Resources[machineTemplateResource(usageTemplate(d.Resource))] == nil {
						t.Errorf("case %d: %s protects a template that is not composed", i, n)
					}
				case n == resourceMachineDeployment && !observed:
					t.Errorf("case %d: a new MachineDeployment composed while the gate holds (%s)", i, pl.Hold.Reason)
				case !observed && !pl.Hold.DeploymentOnly:
					t.Errorf("case %d: %s composed while the gate holds (%s)", i, n, pl.Hold.Reason)
				case observed && (n == resourceMachineDeployment || !pl.Hold.DeploymentOnly) && d.Resource.GetName() != o.Resource.GetName():
					t.Errorf("case %d: %s changed while held", i, n)
				}
			}
		}
	}
}
