package nodepool

import (
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/resource/composite"

	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/compose/composetest"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/emit"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
)

func withAnnotation(xr *composite.Unstructured, k, v string) *composite.Unstructured {
	a := xr.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[k] = v
	xr.SetAnnotations(a)
	return xr
}

func TestTeardownOf(t *testing.T) {
	cases := map[string]struct {
		reason string
		ann    map[string]string
		want   string // a fragment of the reason, "" for none
	}{
		"NotAsked": {
			reason: "A pool nobody asked to go is composed as usual.",
		},
		"RefusedDeleteRecordedByCrossplane": {
			reason: "Crossplane's usage webhook records a refused DELETE on the XNodePool (handler.go, v2.2.0): the pool was asked to go.",
			ann:    map[string]string{labels.AnnDeletionAttempt: "Foreground"},
			want:   "usage.crossplane.io/deletion-attempt-with-policy=Foreground",
		},
		"ParentAsksThroughTheAnnotation": {
			reason: "An XTenantCluster that dropped the pool from spec.nodePools sets the teardown annotation.",
			ann:    map[string]string{labels.AnnTeardown: "true"},
			want:   "workerimage.cozystack.io/teardown=true",
		},
		"OnlyTrueAsks": {
			reason: "Any other value of the teardown annotation asks for nothing: removal is not decided by a typo.",
			ann:    map[string]string{labels.AnnTeardown: "false"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := nodePoolXR(nil)
			for k, v := range tc.ann {
				withAnnotation(xr, k, v)
			}
			got := string(emit.TeardownOf(xr))
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("%s\nteardownOf() = %q, want it to contain %q", tc.reason, got, tc.want)
			}
		})
	}
}

// keys are the composition resource names of an Output, sorted.
func keys(out compose.Output) []string {
	var ks []string
	for n := range out.Resources {
		ks = append(ks, string(n))
	}
	sort.Strings(ks)
	return ks
}

func TestPoolRemoval(t *testing.T) {
	builtinSpec := map[string]any{"osImage": builtin()}
	// What a settled builtin pool composed: templates, Usages of its golden,
	// the deployment, the health check and the deletion guard.
	settled := composeOnce(t, builtinSpec, succeeded, mdReady(1))
	kmt, tct := names(t, builtinSpec, succeeded)
	without := func(obs map[resource.Name]resource.ObservedComposed, drop ...resource.Name) map[resource.Name]resource.ObservedComposed {
		out := map[resource.Name]resource.ObservedComposed{}
		for n, o := range obs {
			out[n] = o
		}
		for _, n := range drop {
			delete(out, n)
		}
		return out
	}
	templatesAndUsages := []string{
		string(read.ResourceDeletionGuard),
		"kubevirtmachinetemplate-" + kmt,
		"talosconfigtemplate-" + tct,
		"usage-" + kmt + "-datavolume",
		"usage-" + kmt + "-pvc",
	}
	asked := func(spec map[string]any) *composite.Unstructured {
		return withAnnotation(nodePoolXR(spec), labels.AnnDeletionAttempt, "Background")
	}
	cases := map[string]struct {
		reason   string
		xr       *composite.Unstructured
		observed map[resource.Name]resource.ObservedComposed
		want     []string
		reasonIs string
		event    bool
	}{
		"DrainsTheDeploymentFirst": {
			reason:   "A pool asked to go leaves out its MachineDeployment and MachineHealthCheck, which Crossplane then deletes whatever owners Cluster API added; templates, Usages and the guard stay while Machines may need them.",
			xr:       asked(builtinSpec),
			observed: settled,
			want:     templatesAndUsages,
			reasonIs: emit.ReasonDrainingWorkers,
			event:    true,
		},
		"DrainsWhileCAPIStillDeletes": {
			reason:   "A deployment still observed (Cluster API waits for its MachineSets) is still left out, and nothing else goes; no new event while the reason is unchanged.",
			xr:       withStatus(asked(builtinSpec), map[string]any{"conditions": []any{map[string]any{"type": emit.ConditionDeletion, "status": "True", "reason": emit.ReasonDrainingWorkers}}}),
			observed: without(settled, read.ResourceMachineHealthCheck),
			want:     templatesAndUsages,
			reasonIs: emit.ReasonDrainingWorkers,
		},
		"ReleasesEverythingOnceTheDeploymentIsGone": {
			reason:   "With the MachineDeployment gone, no Machine runs on the templates: everything is left out, the guard with it, so Crossplane deletes it all and replays the XNodePool's refused delete.",
			xr:       asked(builtinSpec),
			observed: without(settled, read.ResourceMachineDeployment, read.ResourceMachineHealthCheck),
			reasonIs: emit.ReasonReleased,
			event:    true,
		},
		"ParentTeardownReleasesAndReports": {
			reason:   "A pool its XTenantCluster dropped reports Released, which tells the cluster it may delete the XNodePool.",
			xr:       withAnnotation(nodePoolXR(builtinSpec), labels.AnnTeardown, "true"),
			observed: without(settled, read.ResourceMachineDeployment, read.ResourceMachineHealthCheck),
			reasonIs: emit.ReasonReleased,
			event:    true,
		},
		"InvalidSpecDoesNotKeepWorkersRunning": {
			reason:   "A pool whose spec no longer validates is still removed: its deletion decides from what it composed alone, never a fatal.",
			xr:       asked(map[string]any{"osImage": builtin(), "replicas": "many"}),
			observed: settled,
			want:     templatesAndUsages,
			reasonIs: emit.ReasonDrainingWorkers,
			event:    true,
		},
		"NothingComposedIsReleasedAtOnce": {
			reason:   "A pool that composed nothing (held from its first call) has nothing to drain.",
			xr:       asked(builtinSpec),
			reasonIs: emit.ReasonReleased,
			event:    true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// Nothing is fetched: removal asks for nothing.
			res := composetest.Run(Mode{}, composetest.Request{Request: request(t, tc.xr, succeeded, tc.observed).Request})
			if sel, err := res.Requirements, res.Err; err != nil || len(sel) != 0 {
				t.Errorf("%s\nRequirements() = %v, %v; want nothing: removal reads no cluster state", tc.reason, sel, err)
			}
			out := res.Output
			if out.Fatal != nil {
				t.Fatalf("%s\nfatal: %v", tc.reason, out.Fatal)
			}
			if diff := cmp.Diff(tc.want, keys(out)); diff != "" {
				t.Errorf("%s\n-want, +got resources:\n%s", tc.reason, diff)
			}
			for n, d := range out.Resources {
				if diff := cmp.Diff(compose.AsObserved(tc.observed[n].Resource).Object, d.Resource.Object); diff != "" {
					t.Errorf("%s\n%s is not kept as observed:\n%s", tc.reason, n, diff)
				}
			}
			if len(out.Conditions) != 1 || out.Conditions[0].Type != emit.ConditionDeletion || out.Conditions[0].Reason != tc.reasonIs {
				t.Errorf("%s\nconditions = %+v, want one %s with reason %s", tc.reason, out.Conditions, emit.ConditionDeletion, tc.reasonIs)
			}
			if !out.NotReady {
				t.Errorf("%s\na pool being removed must not report Ready", tc.reason)
			}
			if got := len(out.Results) == 1; got != tc.event {
				t.Errorf("%s\nresults = %+v, want an event: %v", tc.reason, out.Results, tc.event)
			}
		})
	}
}

func TestDeletionGuard(t *testing.T) {
	builtinSpec := map[string]any{"osImage": builtin()}
	guard := func(out compose.Output) *composed.Unstructured {
		if d, ok := out.Resources[read.ResourceDeletionGuard]; ok {
			return d.Resource
		}
		return nil
	}
	settled := composeOnce(t, builtinSpec, succeeded, mdReady(1))
	cases := map[string]struct {
		reason   string
		xr       *composite.Unstructured
		world    worldFixture
		observed map[resource.Name]resource.ObservedComposed
		config   func(*config.Config)
		want     bool
	}{
		"GuardsAComposedDeployment": {
			reason: "The XNodePool cannot be deleted while its MachineDeployment exists: the Usage names the pool as `of` and the deployment as `by`.",
			xr:     nodePoolXR(builtinSpec),
			world:  succeeded,
			want:   true,
		},
		"NoDeploymentNoGuard": {
			reason: "A first template waiting for the clone grant composes no MachineDeployment, so there is nothing to wait for on deletion.",
			xr:     nodePoolXR(builtinSpec),
			world:  worldFixture{goldenDV: succeeded.goldenDV, goldenPVC: succeeded.goldenPVC, classes: succeeded.classes, ungranted: true},
		},
		"UsagesOffComposesNone": {
			reason: "With usages.enabled false no Usage is composed, the guard included.",
			xr:     nodePoolXR(builtinSpec),
			world:  succeeded,
			config: func(c *config.Config) { c.Usages = false },
		},
		"UsagesOffKeepsAnExistingGuard": {
			reason:   "Turning Usages off never deletes protection that exists while the deployment is kept.",
			xr:       nodePoolXR(builtinSpec),
			world:    succeeded,
			config:   func(c *config.Config) { c.Usages = false },
			observed: settled,
			want:     true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := request(t, tc.xr, tc.world, tc.observed)
			if tc.config != nil {
				tc.config(&r.Config)
			}
			out := composetest.Run(Mode{}, r).Output
			if out.Fatal != nil {
				t.Fatal(out.Fatal)
			}
			g := guard(out)
			if (g != nil) != tc.want {
				t.Fatalf("%s\nguard composed = %v, want %v", tc.reason, g != nil, tc.want)
			}
			if g == nil {
				return
			}
			want := map[string]any{
				"of":             map[string]any{"apiVersion": "workerimage.cozystack.io/v1alpha1", "kind": "XNodePool", "resourceRef": map[string]any{"name": fxCluster + "-" + fxPool}},
				"by":             map[string]any{"apiVersion": clusterapi.V1Beta1APIVersion, "kind": clusterapi.KindMachineDeployment, "resourceRef": map[string]any{"name": fxCluster + "-" + fxPool}},
				"replayDeletion": true,
			}
			if diff := cmp.Diff(want, g.Object["spec"]); diff != "" {
				t.Errorf("%s\n-want, +got guard spec:\n%s", tc.reason, diff)
			}
		})
	}
}
