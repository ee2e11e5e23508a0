package nodepool

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/compose/composetest"
	"github.com/cozystack/function-worker-image/internal/nodepool/emit"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/storageclass"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// retentionCase is one generated reconcile of the pool, with what the
// retention rule (README: "Old templates stay composed while a
// MachineSet still references them") says about it, worked out while the
// inputs were generated rather than by reading them back the way the function
// does.
type retentionCase struct {
	spec     map[string]any
	world    worldFixture
	observed map[resource.Name]resource.ObservedComposed
	// referenced are the composition resource names of the templates that a
	// generated MachineSet or the observed MachineDeployment points at.
	referenced map[resource.Name]bool
}

// randomRetentionCase builds an observed state: maybe the render of spec in
// another world (as if applied before, some of it not observed yet), some
// older templates, maybe a MachineDeployment pointing at any of them, and
// MachineSets each pointing at any machine and any bootstrap template, the
// two picked independently.
func randomRetentionCase(t *testing.T, rng *rand.Rand, spec map[string]any) retentionCase {
	t.Helper()
	c := retentionCase{spec: spec, observed: map[resource.Name]resource.ObservedComposed{}, referenced: map[resource.Name]bool{}}
	var machines, bootstraps []string // template names a reference may pick
	if rng.IntN(3) > 0 {
		for n, o := range composeOnce(t, spec, randomWorld(rng), mdReady(int64(rng.IntN(3)))) {
			switch {
			case strings.HasPrefix(string(n), read.PrefixMachineTemplate):
				machines = append(machines, o.Resource.GetName())
			case strings.HasPrefix(string(n), read.PrefixBootstrapTemplate):
				bootstraps = append(bootstraps, o.Resource.GetName())
			}
			if rng.IntN(4) > 0 {
				c.observed[n] = o
			}
		}
	}
	for i := range rng.IntN(4) {
		name := fmt.Sprintf("demo-md0-old%07d", i)
		machines, bootstraps = append(machines, name), append(bootstraps, name)
		for _, prefix := range []string{read.PrefixMachineTemplate, read.PrefixBootstrapTemplate} {
			u := composed.New()
			u.SetAPIVersion(pool.InfraAPIVersion)
			u.SetKind(pool.KindKubevirtMachineTmpl)
			if prefix == read.PrefixBootstrapTemplate {
				u.SetAPIVersion(talosconfig.APIVersion)
				u.SetKind(talosconfig.KindTalosConfigTemplate)
			}
			u.SetName(name)
			u.SetNamespace(fxNamespace)
			// A spec no render produces: re-rendering instead of keeping
			// it would show.
			_ = u.SetValue("spec", map[string]any{"template": map[string]any{"spec": map[string]any{"old": int64(i)}}})
			c.observed[resource.Name(prefix+name)] = resource.ObservedComposed{Resource: u}
		}
	}
	pick := func(names []string) string { return names[rng.IntN(len(names))] }
	if md, ok := c.observed[read.ResourceMachineDeployment]; ok {
		if len(machines) > 0 && rng.IntN(2) == 0 {
			_ = md.Resource.SetValue("spec.template.spec.infrastructureRef.name", pick(machines))
			_ = md.Resource.SetValue("spec.template.spec.bootstrap.configRef.name", pick(bootstraps))
		}
		// Whatever it points at, as generated, is referenced.
		m, _ := md.Resource.GetString("spec.template.spec.infrastructureRef.name")
		b, _ := md.Resource.GetString("spec.template.spec.bootstrap.configRef.name")
		c.referenced[read.MachineTemplateResource(m)], c.referenced[read.BootstrapTemplateResource(b)] = true, true
	}
	c.world = randomWorld(rng)
	if len(machines) > 0 {
		for i := range rng.IntN(3) {
			m, b := pick(machines), pick(bootstraps)
			c.world.sets = append(c.world.sets, machineSet(fmt.Sprintf("demo-md0-ms%d", i), m, b))
			c.referenced[read.MachineTemplateResource(m)], c.referenced[read.BootstrapTemplateResource(b)] = true, true
		}
	}
	return c
}

// randomWorld is a random golden, set of StorageClasses, clone grant and
// worker disk; no MachineSets.
func randomWorld(rng *rand.Rand) worldFixture {
	goldens := []worldFixture{missing, importing, failed, restartLoop, succeeded, {goldenPVC: goldenPVC("replicated")}}
	w := goldens[rng.IntN(len(goldens))]
	w.classes = nil
	w.ungranted = rng.IntN(3) == 0
	anns := []string{storageclass.AnnVirtDefault, storageclass.AnnDefault, storageclass.AnnBetaDefault, "none"}
	for i := range rng.IntN(3) {
		w.classes = append(w.classes, storageClassObj([]string{"replicated", "local", "fast"}[i], fmt.Sprintf("2025-0%d-01T00:00:00Z", 1+rng.IntN(9)), map[string]any{anns[rng.IntN(len(anns))]: "true"}))
	}
	if rng.IntN(2) == 0 {
		w.dvs = append(w.dvs, workerDV("demo-md0-a-disk-system", []string{"Succeeded", "CloneInProgress", "CloneWithoutSource"}[rng.IntN(3)], rng.IntN(2) == 0))
	}
	return w
}

func isTemplate(n resource.Name) bool {
	return strings.HasPrefix(string(n), read.PrefixMachineTemplate) || strings.HasPrefix(string(n), read.PrefixBootstrapTemplate)
}

// TestPropertyRetention: for randomized observed states,
//   - every observed template a MachineSet or the observed MachineDeployment
//     references is in the desired state with its observed spec;
//   - every other observed template, bar the current ones, is dropped,
//     unless the gate holds the whole change back, when everything observed
//     stays as it is;
//   - the MachineDeployment is never dropped, and a Usage only with its
//     template;
//   - the template names do not depend on the observed composed resources.
//
// What is referenced comes from the generator, not from the function's
// reading of MachineSets: a misread reference would otherwise be misread by
// the oracle too.
func TestPropertyRetention(t *testing.T) {
	specs := []map[string]any{
		{},
		{"osImage": builtin()},
		{"osImage": builtin(), "diskSize": "30Gi"},
		{"osImage": builtin(), "storageClass": "local"},
		{"osImage": map[string]any{"factory": map[string]any{"version": "v1.13.2"}}},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	// The two outcomes the rule decides between for a previous template
	// with the gate open (or holding only the deployment).
	var keptOld, droppedOld int
	for i := range 300 {
		c := randomRetentionCase(t, rng, specs[rng.IntN(len(specs))])
		obs := c.observed

		r := request(t, nodePoolXR(c.spec), c.world, obs)
		pl, err := prepare(r.Request).plan(r.Required, r.Raw)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		out := composetest.Run(Mode{}, r).Output
		if out.Fatal != nil {
			t.Fatalf("case %d: %v", i, out.Fatal)
		}

		// The template names are a function of the spec, the required
		// resources and the class of the clone template the deployment runs
		// (the pool stays on it): composing with only the deployment and
		// that template observed gives the same names.
		bareObs := map[resource.Name]resource.ObservedComposed{}
		if md, ok := obs[read.ResourceMachineDeployment]; ok {
			bareObs[read.ResourceMachineDeployment] = md
			running, _ := md.Resource.GetString("spec.template.spec.infrastructureRef.name")
			if kmt, ok := obs[read.MachineTemplateResource(running)]; ok {
				bareObs[read.MachineTemplateResource(running)] = kmt
			}
		}
		bareReq := request(t, nodePoolXR(c.spec), c.world, bareObs)
		bare, err := prepare(bareReq.Request).plan(bareReq.Required, bareReq.Raw)
		if err != nil {
			t.Fatal(err)
		}
		if bare.MachineTemplate.Name != pl.MachineTemplate.Name || bare.BootstrapTemplate.Name != pl.BootstrapTemplate.Name {
			t.Errorf("case %d: template names depend on observed state: %s/%s without, %s/%s with", i,
				bare.MachineTemplate.Name, bare.BootstrapTemplate.Name, pl.MachineTemplate.Name, pl.BootstrapTemplate.Name)
		}
		current := map[resource.Name]bool{
			read.MachineTemplateResource(bare.MachineTemplate.Name):     true,
			read.BootstrapTemplateResource(bare.BootstrapTemplate.Name): true,
		}
		// Whether the gate holds, and how much, is the gate's decision
		// (decisions_test.go); this test judges what is kept given it.
		heldWhole := pl.Hold != nil && !pl.Hold.DeploymentOnly

		for n, o := range obs {
			d, kept := out.Resources[n]
			switch {
			case strings.HasPrefix(string(n), read.PrefixUsage):
				// A Usage goes with its template: Crossplane's usage
				// controller then waits for the template to be gone.
				if !kept && out.Resources[read.MachineTemplateResource(emit.UsageTemplate(o.Resource))] != nil {
					t.Errorf("case %d: %s was dropped while its template is kept", i, n)
				}
			case n == read.ResourceMachineDeployment, n == read.ResourceMachineHealthCheck:
				if !kept {
					t.Errorf("case %d: the observed %s was dropped", i, n)
				}
			case n == read.ResourceDeletionGuard:
				// The guard goes with the deployment it names; a whole hold
				// keeps everything as observed.
				if _, md := out.Resources[read.ResourceMachineDeployment]; kept != md && !heldWhole {
					t.Errorf("case %d: the deletion guard kept=%v while the deployment kept=%v", i, kept, md)
				}
			case !isTemplate(n):
				t.Fatalf("case %d: the generator observed %s, which this test does not judge", i, n)
			case c.referenced[n] || heldWhole:
				if !kept {
					t.Errorf("case %d: observed %s was dropped (referenced=%v, held=%v)", i, n, c.referenced[n], pl.Hold)
					continue
				}
				if diff := cmp.Diff(o.Resource.Object["spec"], d.Resource.Object["spec"]); diff != "" || d.Resource.GetName() != o.Resource.GetName() {
					t.Errorf("case %d: %s is kept but not as observed (name %s -> %s)\n-observed, +desired:\n%s", i, n, o.Resource.GetName(), d.Resource.GetName(), diff)
				}
				if c.referenced[n] && !current[n] && !heldWhole {
					keptOld++
				}
			case current[n]:
				if !kept {
					t.Errorf("case %d: the current template %s was dropped", i, n)
				}
			default:
				if kept {
					t.Errorf("case %d: %s is kept although nothing references it and the gate does not hold it (hold=%v)", i, n, pl.Hold)
				}
				droppedOld++
			}
		}
		if pl.Hold != nil {
			for n, d := range out.Resources {
				o, observed := obs[n]
				switch {
				case strings.HasPrefix(string(n), read.PrefixUsage):
					// Protection of a template that is kept may be added
					// while held: it composes no worker.
					if out.Resources[read.MachineTemplateResource(emit.UsageTemplate(d.Resource))] == nil {
						t.Errorf("case %d: %s protects a template that is not composed", i, n)
					}
				case n == read.ResourceDeletionGuard:
					// The guard of a kept deployment composes no worker.
					if !observed && out.Resources[read.ResourceMachineDeployment] == nil {
						t.Errorf("case %d: a deletion guard composed without its deployment", i)
					}
				case n == read.ResourceMachineDeployment && !observed:
					t.Errorf("case %d: a new MachineDeployment composed while the gate holds (%s)", i, pl.Hold.Reason)
				case !observed && !pl.Hold.DeploymentOnly:
					t.Errorf("case %d: %s composed while the gate holds (%s)", i, n, pl.Hold.Reason)
				case observed && (n == read.ResourceMachineDeployment || !pl.Hold.DeploymentOnly) && d.Resource.GetName() != o.Resource.GetName():
					t.Errorf("case %d: %s changed while held", i, n)
				}
			}
		}
	}
	// A generator that never produced one of the outcomes would leave half
	// of the rule untested.
	t.Logf("previous templates kept for a reference: %d, dropped: %d", keptOld, droppedOld)
	if keptOld == 0 || droppedOld == 0 {
		t.Errorf("the generated cases kept %d and dropped %d previous templates; both must happen", keptOld, droppedOld)
	}
}
