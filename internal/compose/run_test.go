package compose

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/internal/required"
)

// fakeMode's calls ask for first (or fail with err) and, when chained is
// set, for chained(got) once the first are fetched.
type fakeMode struct {
	first   []string
	err     error
	chained func(got required.Resolved) []string
	// log records, in order, what the driver asked of the call.
	log *[]string
}

type fakeCall struct{ m fakeMode }

type fakeChainedCall struct{ fakeCall }

func (m fakeMode) Prepare(Request) Call {
	if m.chained != nil {
		return fakeChainedCall{fakeCall{m}}
	}
	return fakeCall{m}
}

func names(ns []string) required.Selectors {
	if ns == nil {
		return nil
	}
	sel := required.Selectors{}
	for _, n := range ns {
		sel[n] = required.ByName("v1", "ConfigMap", "ns", n)
	}
	return sel
}

func (c fakeCall) Requirements() (required.Selectors, error) {
	*c.m.log = append(*c.m.log, "Requirements")
	return names(c.m.first), c.m.err
}

func (c fakeCall) Raw() map[string]bool { return map[string]bool{"raw": true} }

func (c fakeCall) Compose(got required.Resolved, raw required.Raw) Output {
	*c.m.log = append(*c.m.log, "Compose "+keys(got, raw))
	return Output{Status: map[string]any{"composed": keys(got, raw)}}
}

func (c fakeChainedCall) ChainedRequirements(got required.Resolved) required.Selectors {
	*c.m.log = append(*c.m.log, "ChainedRequirements "+keys(got, nil))
	return names(c.m.chained(got))
}

// keys lists the names got and raw resolve, sorted.
func keys(got required.Resolved, raw required.Raw) string {
	var ks []string
	for k := range got {
		ks = append(ks, k)
	}
	for k := range raw {
		ks = append(ks, "raw:"+k)
	}
	sort.Strings(ks)
	s := "["
	for i, k := range ks {
		if i > 0 {
			s += " "
		}
		s += k
	}
	return s + "]"
}

// fetched is a Fetcher that knows the names in have: complete only when
// every selector is one of them. It logs each call.
func fetched(log *[]string, have []string, err error) Fetcher {
	return func(sel required.Selectors, raw map[string]bool) (required.Resolved, required.Raw, bool, error) {
		asked := make([]string, 0, len(sel))
		for n := range sel {
			asked = append(asked, n)
		}
		sort.Strings(asked)
		*log = append(*log, "fetch "+fmt.Sprint(asked))
		if err != nil {
			return nil, nil, false, err
		}
		got, wire, complete := required.Resolved{}, required.Raw{}, true
		for _, n := range asked {
			switch {
			case !slices.Contains(have, n):
				complete = false
			case raw[n]:
				wire[n] = nil
			default:
				got[n] = []*unstructured.Unstructured{}
			}
		}
		return got, wire, complete, nil
	}
}

func TestRun(t *testing.T) {
	errBroken := errors.New("the composite cannot be read")
	errFetch := errors.New("cannot read required resources")
	pv := func(got required.Resolved) []string {
		if _, ok := got["pvc"]; !ok {
			return nil
		}
		return []string{"pv"}
	}
	none := func(required.Resolved) []string { return []string{} }
	type want struct {
		Log                              []string
		Requirements, Chained, Selectors []string
		Composed                         bool
		Output                           Output
		Err                              error
	}
	cases := map[string]struct {
		reason string
		mode   fakeMode
		have   []string
		err    error
		want   want
	}{
		"RequirementsFail": {
			reason: "A fatal Requirements error is the result: nothing is fetched, asked or composed, and the response carries no requirements.",
			mode:   fakeMode{first: []string{"pvc"}, err: errBroken, chained: pv},
			have:   []string{"pvc", "pv"},
			want:   want{Log: []string{"Requirements"}, Requirements: []string{"pvc"}, Err: errBroken},
		},
		"NothingFetched": {
			reason: "Before Crossplane fetched the first requirements, the chained ones are not asked and nothing is composed.",
			mode:   fakeMode{first: []string{"pvc", "raw"}, chained: pv},
			want:   want{Log: []string{"Requirements", "fetch [pvc raw]"}, Requirements: []string{"pvc", "raw"}, Selectors: []string{"pvc", "raw"}},
		},
		"PartlyFetched": {
			reason: "While one first requirement is unfetched, the chained ones are not asked and nothing is composed.",
			mode:   fakeMode{first: []string{"pvc", "raw"}, chained: pv},
			have:   []string{"pvc"},
			want:   want{Log: []string{"Requirements", "fetch [pvc raw]"}, Requirements: []string{"pvc", "raw"}, Selectors: []string{"pvc", "raw"}},
		},
		"ChainedNotFetched": {
			reason: "Once the first requirements are fetched the chained ones are asked besides; nothing is composed until they are fetched too.",
			mode:   fakeMode{first: []string{"pvc", "raw"}, chained: pv},
			have:   []string{"pvc", "raw"},
			want: want{
				Log:          []string{"Requirements", "fetch [pvc raw]", "ChainedRequirements [pvc]", "fetch [pv pvc raw]"},
				Requirements: []string{"pvc", "raw"}, Chained: []string{"pv"}, Selectors: []string{"pv", "pvc", "raw"},
			},
		},
		"AllFetched": {
			reason: "With every requirement, first and chained, fetched, Compose runs on all of them, raw ones apart.",
			mode:   fakeMode{first: []string{"pvc", "raw"}, chained: pv},
			have:   []string{"pvc", "raw", "pv"},
			want: want{
				Log:          []string{"Requirements", "fetch [pvc raw]", "ChainedRequirements [pvc]", "fetch [pv pvc raw]", "Compose [pv pvc raw:raw]"},
				Requirements: []string{"pvc", "raw"}, Chained: []string{"pv"}, Selectors: []string{"pv", "pvc", "raw"},
				Composed: true, Output: Output{Status: map[string]any{"composed": "[pv pvc raw:raw]"}},
			},
		},
		"NoChainedRequirements": {
			reason: "A chained call that asks nothing besides is fetched once and composed.",
			mode:   fakeMode{first: []string{"pvc"}, chained: none},
			have:   []string{"pvc"},
			want: want{
				Log:          []string{"Requirements", "fetch [pvc]", "ChainedRequirements [pvc]", "Compose [pvc]"},
				Requirements: []string{"pvc"}, Chained: []string{}, Selectors: []string{"pvc"},
				Composed: true, Output: Output{Status: map[string]any{"composed": "[pvc]"}},
			},
		},
		"NotChained": {
			reason: "A call that is not compose.Chained is composed once its requirements are fetched.",
			mode:   fakeMode{first: []string{"pvc"}},
			have:   []string{"pvc"},
			want: want{
				Log:          []string{"Requirements", "fetch [pvc]", "Compose [pvc]"},
				Requirements: []string{"pvc"}, Selectors: []string{"pvc"},
				Composed: true, Output: Output{Status: map[string]any{"composed": "[pvc]"}},
			},
		},
		"NoRequirements": {
			reason: "A call that asks for nothing is complete at once.",
			mode:   fakeMode{},
			want:   want{Log: []string{"Requirements", "fetch []", "Compose []"}, Composed: true, Output: Output{Status: map[string]any{"composed": "[]"}}},
		},
		"FetchFails": {
			reason: "A fatal fetch error is the result; the requirements asked are still reported.",
			mode:   fakeMode{first: []string{"pvc"}, chained: pv},
			err:    errFetch,
			want:   want{Log: []string{"Requirements", "fetch [pvc]"}, Requirements: []string{"pvc"}, Selectors: []string{"pvc"}, Err: errFetch},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var log []string
			tc.mode.log = &log
			res := Run(tc.mode, Request{}, fetched(&log, tc.have, tc.err))
			got := want{
				Log:          log,
				Requirements: selectorNames(res.Requirements), Chained: selectorNames(res.Chained), Selectors: selectorNames(res.Selectors),
				Composed: res.Composed, Output: res.Output, Err: res.Err,
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// selectorNames lists sel's names, sorted, nil for a nil sel and empty for an empty one.
func selectorNames(sel required.Selectors) []string {
	if sel == nil {
		return nil
	}
	ns := make([]string, 0, len(sel))
	for n := range sel {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}
