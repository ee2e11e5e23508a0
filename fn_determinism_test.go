package main

import (
	"bytes"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/cozystack/function-worker-image/internal/fixture"
)

// Runs per request of TestDeterminismUnderPermutation: the shipped examples
// are small and cheap, the synthetic fixtures larger and dearer.
const (
	permutationsPerScenario = 1000
	permutationsPerFixture  = 100
)

// determinismFixtureScale is the size of the synthetic fixtures the
// determinism test adds to the examples: ten catalog entries, classes,
// MachineSets or pools give an order leak many ways to show, where an example
// lists at most three of anything.
const determinismFixtureScale = 10

// determinismCase is one settled request and the response it got.
type determinismCase struct {
	name string
	req  *fnv1.RunFunctionRequest
	rsp  *fnv1.RunFunctionResponse
	runs int
}

// TestDeterminismUnderPermutation sends the settled request of every example
// scenario, and of each mode's synthetic fixture, again and again, each time
// with every required-resource list shuffled: a list from the API server has
// no meaningful order, and its order survives the protobuf encoding, so a
// decision that takes the first match or sorts unstably shows up here. Maps
// (observed resources, required-resource keys, every Struct's fields) need no
// shuffling: their order does not survive into protobuf, and Go ranges each
// map in a fresh random order, so each call is already a new map order and a
// name, message or list built by ranging a map shows up by repetition alone.
// Every response must be byte-identical (deterministic protobuf) to the
// first: one differing byte is a spurious template roll or event.
func TestDeterminismUnderPermutation(t *testing.T) {
	f := newTestFunction()
	var cases []determinismCase
	for _, sc := range loadExampleScenarios(t) {
		final, rsp := settleRequest(t, f, sc.firstRequest(), sc.Pool)
		cases = append(cases, determinismCase{sc.Name, final, rsp, permutationsPerScenario})
	}
	for _, c := range benchCases() {
		if c.Scale != determinismFixtureScale {
			continue
		}
		calls, err := fixture.Settle(t.Context(), f.RunFunction, c.Scenario(), c.Status, 4)
		if err != nil {
			// A response that differs from call to call never settles.
			t.Fatalf("fixture %s %s: %v", c.Mode, c.Size, err)
		}
		last := calls[len(calls)-1]
		cases = append(cases, determinismCase{"fixture/" + c.Mode + "/" + c.Size, last.Request, last.Response, permutationsPerFixture})
	}
	// Without a list of two or more items, shuffling permutes nothing and
	// only the map-order half of this test is left.
	shufflable := 0
	for _, c := range cases {
		for _, rs := range c.req.GetRequiredResources() {
			if len(rs.GetItems()) > 1 {
				shufflable++
				break
			}
		}
	}
	if shufflable == 0 {
		t.Fatal("no request has a required-resource list of two or more items: there is nothing to shuffle")
	}

	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(6, uint64(i))) // fixed seed per case: a failing permutation reproduces
			want := deterministicBytes(t, c.rsp)
			for n := range c.runs {
				got, err := f.RunFunction(t.Context(), shuffled(rng, c.req))
				if err != nil {
					t.Fatalf("permutation %d: RunFunction returned an error: %v", n, err)
				}
				if b := deterministicBytes(t, got); !bytes.Equal(want, b) {
					t.Fatalf("permutation %d of %s gave a different response.\nwant:\n%v\ngot:\n%v", n, c.name, c.rsp, got)
				}
			}
		})
	}
}

// shuffled returns a copy of req with every required-resource list
// permuted. The lists are taken in key order so that the permutation depends
// on the seed alone, not on the map's.
func shuffled(rng *rand.Rand, req *fnv1.RunFunctionRequest) *fnv1.RunFunctionRequest {
	out := proto.CloneOf(req)
	for _, k := range slices.Sorted(maps.Keys(out.GetRequiredResources())) {
		items := out.GetRequiredResources()[k].GetItems()
		rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	}
	return out
}
