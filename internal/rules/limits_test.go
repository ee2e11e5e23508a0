package rules

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestReplicas(t *testing.T) {
	cases := map[string]struct {
		reason string
		v      any
		ok     bool
	}{
		"Omitted":       {"Omitted takes the default.", nil, true},
		"Zero":          {"A pool may be scaled to zero.", float64(0), true},
		"Most":          {"1000 is the bound.", int64(MaxReplicas), true},
		"JSONFloat":     {"Numbers arrive from protobuf as float64.", float64(3), true},
		"OverMost":      {"1001 is a typo more often than a fleet.", float64(1001), false},
		"Negative":      {"Replicas cannot be negative.", int64(-1), false},
		"WrappingInt32": {"2^32+1 must not wrap to 1.", float64(4294967297), false},
		"Absurd":        {"1e12 is named as JSON writes it.", 1e12, false},
		"Fraction":      {"Half a worker is not a count.", 2.5, false},
		"String":        {"The decoder reports a type error.", "three", true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := len(Replicas(field.NewPath("spec", "replicas"), tc.v)) == 0; got != tc.ok {
				t.Errorf("%s\nReplicas(%v) ok = %t, want %t", tc.reason, tc.v, got, tc.ok)
			}
		})
	}
}

func TestQuantities(t *testing.T) {
	minimum := resource.MustParse("1246Mi")
	path := field.NewPath("spec", "size")
	check := func(_ resource.Quantity, errs field.ErrorList) bool { return len(errs) == 0 }
	cases := map[string]struct {
		reason string
		ok     bool
		got    bool
	}{
		"DiskSize":             {"20Gi is a disk.", true, check(DiskSize(path, "20Gi"))},
		"DiskSizeOmitted":      {"Omitted takes the default.", true, check(DiskSize(path, ""))},
		"DiskSizeNegative":     {"A negative size.", false, check(DiskSize(path, "-20Gi"))},
		"DiskSizeZero":         {"A zero size.", false, check(DiskSize(path, "0"))},
		"DiskSizeAbsurd":       {"1e21 canonicalises to another size.", false, check(DiskSize(path, "1000000000000000000000"))},
		"DiskSizeProse":        {"Prose is not a size.", false, check(DiskSize(path, "six gigs"))},
		"Memory":               {"4Gi of memory.", true, check(Memory(path, "4Gi"))},
		"MemoryAbsurd":         {"More than any host.", false, check(Memory(path, "17Ti"))},
		"Golden":               {"6Gi holds the image.", true, check(GoldenStorage(path, "6Gi", minimum, "6Gi"))},
		"GoldenTooSmall":       {"The import would fail.", false, check(GoldenStorage(path, "1Gi", minimum, "6Gi"))},
		"GoldenTooLarge":       {"A golden holds one image.", false, check(GoldenStorage(path, "2Ti", minimum, "6Gi"))},
		"GoldenNegative":       {"A negative golden.", false, check(GoldenStorage(path, "-6Gi", minimum, "6Gi"))},
		"InputSize":            {"An Input size.", true, check(Size(path, "6Gi", "6Gi"))},
		"InputSizeNotQuantity": {"Not a quantity.", false, check(Size(path, "6 GB", "6Gi"))},
		"DiskSizeMilli":        {"1m is a thousandth of a byte, not a megabyte.", false, check(DiskSize(path, "1m"))},
		"DiskSizeFraction":     {"1.5 is not a whole number of bytes.", false, check(DiskSize(path, "1.5"))},
		"DiskSizeBytes":        {"5 is five whole bytes: a size, only too small for an image (HoldsImage).", true, check(DiskSize(path, "5"))},
		"DiskSizeLargestBytes": {"1Pi is whole bytes, and its milli value does not overflow.", true, check(DiskSize(path, "1Pi"))},
		"GoldenMilli":          {"A golden of 8000000000000m is 8G written in milli bytes: whole, accepted.", true, check(GoldenStorage(path, "8000000000000m", minimum, "6Gi"))},
		"InputSizeMilli":       {"The Input's sizes are whole bytes too.", false, check(Size(path, "20500m", "20Gi"))},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.got != tc.ok {
				t.Errorf("%s\nok = %t, want %t", tc.reason, tc.got, tc.ok)
			}
		})
	}
}

func TestHoldsImage(t *testing.T) {
	minimum := resource.MustParse("1246Mi")
	path := field.NewPath("spec", "diskSize")
	cases := map[string]struct {
		reason string
		v      string
		want   string
	}{
		"AtLeastTheImage": {reason: "A disk of the image's size holds it.", v: "1246Mi"},
		"Larger":          {reason: "The default worker disk holds it.", v: "20Gi"},
		"FiveBytes": {
			reason: "A disk of 5 bytes cannot hold the image: the import could only fail.",
			v:      "5",
			want:   `spec.diskSize: Invalid value: "5": is smaller than the Talos disk image (1246Mi), so the import would fail; set diskSize to at least 1246Mi`,
		},
		"JustBelow": {
			reason: "One byte short is short.",
			v:      "1306525695",
			want:   `spec.diskSize: Invalid value: "1306525695": is smaller than the Talos disk image (1246Mi), so the import would fail; set diskSize to at least 1246Mi`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := HoldsImage(path, tc.v, resource.MustParse(tc.v), minimum, "set diskSize to at least 1246Mi")
			if diff := cmp.Diff(tc.want, Message(got)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestWholeBytesMessage(t *testing.T) {
	_, errs := DiskSize(field.NewPath("spec", "diskSize"), "1m")
	want := `spec.diskSize: Invalid value: "1m": is not a whole number of bytes (the suffix m is milli: 1m is a thousandth of a byte); write a size such as 20Gi (Mi, Gi for binary megabytes and gigabytes, M, G for decimal)`
	if diff := cmp.Diff(want, Message(errs)); diff != "" {
		t.Errorf("A milli size is refused naming the suffix and a size to write.\n-want, +got:\n%s", diff)
	}
}

func TestCores(t *testing.T) {
	for v, want := range map[string]uint32{"2": 2, "512": 512, "": 0} {
		if got, errs := Cores(field.NewPath("c"), v); got != want || len(errs) > 0 {
			t.Errorf("Cores(%q) = %d, %v; want %d", v, got, errs, want)
		}
	}
	for _, v := range []string{"0", "513", "1.5", "500m", "1e30", "-1", "two"} {
		if _, errs := Cores(field.NewPath("c"), v); len(errs) == 0 {
			t.Errorf("Cores(%q) was accepted", v)
		}
	}
}

func TestSupportMatrixRow(t *testing.T) {
	cases := map[string]struct {
		reason        string
		talos, lo, hi string
		ok            bool
		wantField     string
	}{
		"Row":          {"A row.", "v1.13", "v1.32", "v1.35", true, ""},
		"OneMinor":     {"min equal to max is one minor.", "v1.13", "v1.35", "v1.35", true, ""},
		"NumericOrder": {"v1.9 is below v1.10 as numbers.", "v1.13", "v1.9", "v1.10", true, ""},
		"TalosPatch":   {"A row names a minor; a patch never matches.", "v1.13.6", "v1.32", "v1.35", false, "supportMatrix.entries[0].talos"},
		"KubePatch":    {"So does a Kubernetes patch.", "v1.13", "v1.32.1", "v1.35", false, "supportMatrix.entries[0].minKubernetes"},
		"Suffix":       {"A suffix never matches.", "v1.13", "v1.32", "v1.35-rc", false, "supportMatrix.entries[0].maxKubernetes"},
		"MinAboveMax":  {"min above max matches nothing.", "v1.13", "v1.35", "v1.32", false, "supportMatrix.entries[0].minKubernetes"},
		"LeadingZero":  {"v1.013 never matches v1.13.", "v1.013", "v1.32", "v1.35", false, "supportMatrix.entries[0].talos"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			errs := SupportMatrixRow(field.NewPath("supportMatrix", "entries").Index(0), tc.talos, tc.lo, tc.hi)
			if got := len(errs) == 0; got != tc.ok {
				t.Fatalf("%s\nok = %t, want %t (%v)", tc.reason, got, tc.ok, errs)
			}
			if !tc.ok && errs[0].Field != tc.wantField {
				t.Errorf("%s\nnames %q, want %q", tc.reason, errs[0].Field, tc.wantField)
			}
		})
	}
}

func TestStallBound(t *testing.T) {
	if errs := StallBound(field.NewPath("polling", "stallAfter", "imports"), 30*time.Second); len(errs) == 0 || errs[0].Field != "polling.stallAfter.imports" {
		t.Errorf("a bound below a minute is refused at its own path, got %v", errs)
	}
	if errs := StallBound(field.NewPath("polling", "stallAfter", "clones"), MinStallBound); len(errs) > 0 {
		t.Errorf("1m is accepted, got %v", errs)
	}
}

func TestPollingInterval(t *testing.T) {
	if errs := PollingInterval(field.NewPath("polling", "steady"), 0); len(errs) == 0 || errs[0].Field != "polling.steady" {
		t.Errorf("a zero TTL is refused at its own path, got %v", errs)
	}
	if errs := PollingInterval(field.NewPath("polling", "steady"), MinPollingInterval); len(errs) > 0 {
		t.Errorf("1s is accepted, got %v", errs)
	}
}
