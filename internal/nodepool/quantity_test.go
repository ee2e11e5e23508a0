package nodepool

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/compose/composetest"
)

// TestQuantitiesAsIntegersComposeAsStrings: the XRDs take a quantity as an
// integer too (x-kubernetes-int-or-string), as the chart's values files
// write cpu: 4; the API server stores it as a JSON number (float64 in a
// request's Struct, int64 from YAML). Each is read as the quantity its
// digits spell, so a pool composes exactly what the same values as strings
// compose.
func TestQuantitiesAsIntegersComposeAsStrings(t *testing.T) {
	spec := func(cpu, memory, podLimit, disk any) map[string]any {
		return map[string]any{
			"osImage":     builtin(),
			"resources":   map[string]any{"cpu": cpu, "memory": memory},
			"podCpuLimit": podLimit,
			"diskSize":    disk,
		}
	}
	want := composetest.Run(Mode{}, request(t, nodePoolXR(spec("4", "17179869184", "3", "21474836480")), succeeded, nil)).Output
	if want.Fatal != nil {
		t.Fatal(want.Fatal)
	}
	for name, s := range map[string]map[string]any{
		"Int64":   spec(int64(4), int64(17179869184), int64(3), int64(21474836480)),
		"Float64": spec(float64(4), float64(17179869184), float64(3), float64(21474836480)),
	} {
		t.Run(name, func(t *testing.T) {
			got := composetest.Run(Mode{}, request(t, nodePoolXR(s), succeeded, nil)).Output
			if got.Fatal != nil {
				t.Fatalf("an integer quantity is refused: %v", got.Fatal)
			}
			if diff := cmp.Diff(objects(want), objects(got)); diff != "" {
				t.Errorf("integers compose otherwise than the same digits as strings (-strings, +integers):\n%s", diff)
			}
		})
	}
}

// objects are the composed resources of out, by name.
func objects(out compose.Output) map[string]map[string]any {
	m := map[string]map[string]any{}
	for n, d := range out.Resources {
		m[string(n)] = d.Resource.Object
	}
	return m
}

// TestChartResourcesCPUCases re-expresses the kubernetes-nodes chart's
// tests/resources_cpu_test.yaml@c2d4b80: resources.cpu becomes the VM's
// domain.cpu.cores, so only a positive whole number of cores is taken, in
// every spelling. Two deliberate differences follow Kubernetes' grammar
// (docs/platform.md "What the schemas enforce"): 2000m and a leading zero
// ("010", which resource.ParseQuantity reads as 10) are whole cores here,
// where the chart refuses them.
func TestChartResourcesCPUCases(t *testing.T) {
	const coresPath = "spec.template.spec.virtualMachineTemplate.spec.template.spec.domain.cpu.cores"
	cases := map[string]struct {
		cpu   any
		cores int64 // 0: refused
	}{
		"QuotedWholeNumber":   {cpu: "2", cores: 2},
		"UnquotedInteger":     {cpu: float64(4), cores: 4},
		"WholeFloat":          {cpu: float64(2.0), cores: 2},
		"QuotedWholeDecimal":  {cpu: "2.0", cores: 2},
		"PlusSign":            {cpu: "+2", cores: 2},
		"Exponent":            {cpu: "1e1", cores: 10},
		"Millicores":          {cpu: "500m"},
		"FractionalCores":     {cpu: "1.5"},
		"UnquotedZero":        {cpu: float64(0)},
		"QuotedZero":          {cpu: "0"},
		"Negative":            {cpu: "-2"},
		"MillicoresWholeCore": {cpu: "2000m", cores: 2},
		"LeadingZero":         {cpu: "010", cores: 10},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := map[string]any{"osImage": builtin(), "resources": map[string]any{"cpu": tc.cpu, "memory": "4Gi"}}
			out := composetest.Run(Mode{}, request(t, nodePoolXR(spec), succeeded, nil)).Output
			if tc.cores == 0 {
				if out.Fatal == nil || !strings.Contains(out.Fatal.Error(), "spec.resources.cpu") {
					t.Fatalf("cpu %v: want a fatal naming spec.resources.cpu, got %v", tc.cpu, out.Fatal)
				}
				return
			}
			if out.Fatal != nil {
				t.Fatalf("cpu %v refused: %v", tc.cpu, out.Fatal)
			}
			for n, d := range out.Resources {
				if d.Resource.GetKind() != "KubevirtMachineTemplate" {
					continue
				}
				got, err := d.Resource.GetInteger(coresPath)
				if err != nil || got != tc.cores {
					t.Errorf("cpu %v: %s cores = %d (%v), want %d", tc.cpu, n, got, err, tc.cores)
				}
				return
			}
			t.Fatalf("no KubevirtMachineTemplate composed: %v", summarize(out).Resources)
		})
	}
}
