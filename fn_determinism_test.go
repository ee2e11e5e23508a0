package main

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/proto"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// permutationsPerScenario is how many shuffled copies of each example
// scenario's request are compared with the original.
const permutationsPerScenario = 1000

// TestDeterminismUnderPermutation settles every example scenario, then sends
// the same final request again permutationsPerScenario times with its
// observed resources and required resources re-inserted in a random order and
// every required list shuffled (a list from the API server has no meaningful
// order). Every response must be byte-identical (deterministic protobuf) to
// the first: one differing byte is a spurious template roll or event.
func TestDeterminismUnderPermutation(t *testing.T) {
	f := newTestFunction()
	for i, sc := range loadExampleScenarios(t) {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(6, uint64(i))) // fixed seed per scenario: failures reproduce
			final, rsp := settleRequest(t, f, sc.firstRequest(), sc.Pool)
			want := deterministicBytes(t, rsp)
			for i := range permutationsPerScenario {
				req := shuffled(rng, final)
				got, err := f.RunFunction(t.Context(), req)
				if err != nil {
					t.Fatalf("permutation %d: RunFunction returned an error: %v", i, err)
				}
				if b := deterministicBytes(t, got); !bytes.Equal(want, b) {
					t.Fatalf("permutation %d of %s gave a different response.\n-want, +got:\n%v\n%v", i, sc.Name, rsp, got)
				}
			}
		})
	}
}

// shuffled returns a copy of req with its maps rebuilt in a random insertion
// order and every required-resource list permuted.
func shuffled(rng *rand.Rand, req *fnv1.RunFunctionRequest) *fnv1.RunFunctionRequest {
	out := proto.Clone(req).(*fnv1.RunFunctionRequest)
	if obs := out.GetObserved().GetResources(); obs != nil {
		out.Observed.Resources = map[string]*fnv1.Resource{}
		for _, k := range shuffledKeys(rng, obs) {
			out.Observed.Resources[k] = obs[k]
		}
	}
	if reqd := out.GetRequiredResources(); reqd != nil {
		out.RequiredResources = map[string]*fnv1.Resources{}
		for _, k := range shuffledKeys(rng, reqd) {
			items := reqd[k].GetItems()
			rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
			out.RequiredResources[k] = reqd[k]
		}
	}
	return out
}

func shuffledKeys[V any](rng *rand.Rand, m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// Sort first so that the permutation depends on the seed alone.
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	return keys
}
