package main

import (
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// TestTenantClusterNeverComposesAPoolThePoolRefuses is the guarantee of one
// owner for a pool's validation (issue 13): for randomized tenant clusters
// mixing valid and invalid values in every field the cluster hands to its
// pools, either the cluster refuses the spec, or every XNodePool it composes
// is one node-pool mode accepts. Both outcomes must occur, or the generator
// has stopped testing anything.
func TestTenantClusterNeverComposesAPoolThePoolRefuses(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 1)) // fixed seed: failures reproduce
	// pick mostly takes the first value, a valid one, so that a case is
	// often wholly valid; otherwise any of the others.
	pick := func(vs ...any) any {
		if rng.IntN(10) < 8 {
			return vs[0]
		}
		return vs[rng.IntN(len(vs))]
	}
	f := newTestFunction()
	var accepted, refused int
	for i := range 400 {
		pool := func() map[string]any {
			p := map[string]any{}
			if rng.IntN(2) == 0 {
				p["replicas"] = pick(3.0, 0.0, 1000.0, 1001.0, -1.0, 2.5, 4294967297.0)
			}
			if rng.IntN(3) == 0 {
				p["diskSize"] = pick("20Gi", "0", "-1Gi", "1000000000000000000000", "twenty")
			}
			if rng.IntN(3) == 0 {
				p["storageClass"] = pick("replicated", "Fast SSD", "a.b")
			}
			switch rng.IntN(4) {
			case 0:
				p["instanceType"] = pick("u1.large", "U1 Large")
			case 1:
				p["resources"] = map[string]any{"cpu": pick("2", "1.5", "513"), "memory": pick("4Gi", "", "17Ti")}
			}
			switch rng.IntN(4) {
			case 0:
				p["osImage"] = map[string]any{"builtin": map[string]any{"version": pick("v1.13.6", "v1.013.6", "v1.13")}}
			case 1:
				p["osImage"] = map[string]any{"factory": map[string]any{"imageFactoryURL": pick("https://factory.talos.dev", "https://u@f.example", "http://[::1]:8080")}}
			case 2:
				p["osImage"] = map[string]any{pick("builtin", "buitin").(string): map[string]any{}}
			}
			return p
		}
		pools := map[string]any{}
		for range 1 + rng.IntN(3) {
			pools[pick([]any{"md0", "gpu", "web"}[rng.IntN(3)], "GPU", "a-very-long-pool-name-that-makes-the-deployment-name-too-long").(string)] = pool()
		}
		spec := map[string]any{"nodePools": pools}
		if rng.IntN(2) == 0 {
			spec["version"] = pick("v1.35", "v1.34", "v1.035", "v1.35.2")
		}
		talos := map[string]any{}
		if rng.IntN(2) == 0 {
			talos["version"] = pick("v1.13.6", "v1.12.4", "v1.13.06")
		}
		if rng.IntN(3) == 0 {
			talos["imageFactoryURL"] = pick("https://factory.talos.dev", "https://factory.talos.dev?x", "http://factory:8080")
		}
		if rng.IntN(3) == 0 {
			talos["installerRepository"] = pick("factory.talos.dev/openstack-installer", "https://factory.talos.dev/installer")
		}
		if rng.IntN(3) == 0 {
			talos["registryMirrors"] = map[string]any{pick("docker.io", "https://docker.io").(string): map[string]any{"endpoints": []any{pick("https://m.example", "https://m.example\u2028")}}}
		}
		spec["talos"] = talos
		if rng.IntN(3) == 0 {
			spec["storageClass"] = pick("replicated", "UPPER")
		}
		if rng.IntN(3) == 0 {
			spec["goldenNamespace"] = pick("cozy-public", "cozy_public")
		}
		name := pick("acme", "acme.prod", "a-cluster-name-long-enough-to-leave-almost-no-room-for-pools").(string)
		xr := mustStruct(t, map[string]any{"apiVersion": "workerimage.cozystack.io/v1alpha1", "kind": "XTenantCluster",
			"metadata": map[string]any{"name": name, "namespace": "tenant-acme"}, "spec": spec})
		_, rsp := settleRequest(t, f, &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}}}, nil)
		if fatalMessage(rsp) != "" {
			refused++
			continue
		}
		accepted++
		for key, dc := range rsp.GetDesired().GetResources() {
			np := dc.GetResource().AsMap()
			if np["kind"] != "XNodePool" {
				continue
			}
			np["metadata"].(map[string]any)["namespace"] = "tenant-acme"
			req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: mustStruct(t, np)}}}
			if _, prsp := settleRequest(t, f, req, nil); fatalMessage(prsp) != "" {
				spec, _ := structpb.NewStruct(spec)
				t.Fatalf("case %d: cluster %q with spec %v composed %s, which node-pool mode refuses: %s", i, name, spec, key, fatalMessage(prsp))
			}
		}
	}
	if accepted == 0 || refused == 0 {
		t.Fatalf("the generator must produce both accepted (%d) and refused (%d) clusters", accepted, refused)
	}
	t.Logf("%d clusters accepted (their XNodePools all accepted by node-pool mode), %d refused", accepted, refused)
}
