package decide

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	infrav1 "sigs.k8s.io/cluster-api-provider-kubevirt/api/v1alpha1"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/cdistate"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/nodepool/render"
)

// TestDecideHoldOrder: when several holds apply, the one decideHold lists
// first wins, whatever else applies; and a template that is already
// composed or adopted waits for no golden.
func TestDecideHoldOrder(t *testing.T) {
	p := pool.Pool{Namespace: "tenant-a", Cluster: "demo", Name: "md0"}
	clone := pool.Image{Source: pool.SourceClone, GoldenNamespace: "cozy-public", GoldenName: "talos-worker-a-v1"}
	http := pool.Image{Source: pool.SourceHTTP, URL: "https://factory.talos.dev/image/a/v1/nocloud-amd64.raw.xz"}
	clone.Arch.Value, http.Arch.Value = "arm64", "arm64"
	missingGolden := GateInput{Pool: p, Image: clone, Golden: cdistate.State{Kind: cdistate.Missing}}
	joinMissing := func() *read.JoinPlan {
		j := &read.JoinPlan{}
		j.Facts.Missing = []string{"Secret tenant-a/demo-talos-secrets"}
		return j
	}
	adoption := &Hold{Reason: ReasonAdoptionWouldRoll}
	size := &Hold{Reason: ReasonInstanceTypeMissing}
	refusingKubeVirt := read.KubeVirtGate{Found: true, Name: "kubevirt/kubevirt", Default: "amd64"}
	grantConfig := config.Config{WaitForCloneGrant: true, VMServiceAccount: "default"}

	cases := map[string]struct {
		reason   string
		in       Input
		pl       Plan
		gate     GateInput
		adoption *Hold
		size     *Hold
		want     string
	}{
		"AdoptionWinsOverEverything": {
			reason: "An existing pool that would roll holds everything, even with a golden missing and facts missing.",
			in:     Input{Config: grantConfig}, pl: Plan{Pool: p, Image: clone, Join: joinMissing()},
			gate: missingGolden, adoption: adoption, size: size, want: ReasonAdoptionWouldRoll,
		},
		"ArchitectureBeforeTheGolden": {
			reason: "Without KubeVirt's admission no VM runs, whatever it clones.",
			in:     Input{Reads: read.Reads{KubeVirt: true}}, pl: Plan{Pool: p, Image: clone, Required: read.Required{KubeVirt: refusingKubeVirt}},
			gate: missingGolden, size: size, want: ReasonArchitectureNotAdmitted,
		},
		"GoldenBeforeTheNodeSize": {
			reason: "A missing golden holds a new clone template before an unknown node size.",
			pl:     Plan{Pool: p, Image: clone}, gate: missingGolden, size: size, want: ReasonGoldenMissing,
		},
		"NodeSizeBeforeJoin": {
			reason: "An unknown node size comes before the Join mode's holds.",
			pl:     Plan{Pool: p, Image: http, Join: joinMissing()}, size: size, want: ReasonInstanceTypeMissing,
		},
		"JoinBeforeTheGrant": {
			reason: "The Join mode's holds hold everything, so they win over the deployment-only grant.",
			in:     Input{Config: grantConfig},
			pl:     Plan{Pool: p, Image: clone, Join: joinMissing(), Composed: composedTemplate("demo-md0-new")},
			gate:   GateInput{Pool: p, Image: clone}, want: ReasonJoinFactsMissing,
		},
		"GrantLast": {
			reason: "A clone template that is composed is not gated again; its deployment still waits for the grant.",
			in:     Input{Config: grantConfig},
			pl:     Plan{Pool: p, Image: clone, Composed: composedTemplate("demo-md0-new")},
			gate:   GateInput{Pool: p, Image: clone}, want: ReasonCloneNotAuthorized,
		},
		"ComposedTemplateWaitsForNoGolden": {
			reason: "A composed template has nothing left to wait for: the missing golden holds nothing.",
			pl:     Plan{Pool: p, Image: clone, Composed: composedTemplate("demo-md0-new")},
			gate:   missingGolden, want: "",
		},
		"AdoptedTemplateWaitsForNoGolden": {
			reason: "An adopted template runs already.",
			pl:     Plan{Pool: p, Image: clone, Adopted: []KeptTemplate{{Running: "chart"}}},
			gate:   missingGolden, want: "",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.pl.MachineTemplate = render.MachineTemplate{KubevirtMachineTemplate: &infrav1.KubevirtMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: "demo-md0-new"}}}
			h, _ := decideHold(tc.in, tc.pl, tc.gate, tc.adoption, tc.size)
			got := ""
			if h != nil {
				got = h.Reason
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// composedTemplate is a pool that composes the machine template name.
func composedTemplate(name string) read.Composed {
	u := &composed.Unstructured{}
	u.SetName(name)
	return read.Composed{Observed: compose.Observed{Resources: map[resource.Name]*composed.Unstructured{read.MachineTemplateResource(name): u}}}
}
