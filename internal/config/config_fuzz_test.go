package config

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/rules"
)

// FuzzQuantity feeds arbitrary sizes to the three storage fields of the
// Input. An accepted size must be positive, render back to a quantity that
// parses to the same value (it is written into DataVolumes as text), and be
// decided the same way every time. Seed corpus: testdata/fuzz/FuzzQuantity.
func FuzzQuantity(f *testing.F) {
	for _, s := range []string{
		"6Gi", "6144Mi", "1246Mi", "20Gi", "0", "-1Gi", "1e3", "1E3", "0.5Gi", "1.5", "1m",
		"9223372036854775807", "9223372036854775808Ei", "1e308", "1e-308", "+1Gi", " 6Gi", "6Gi\n",
		"6gi", "6 Gi", "６Gi", "Gi", "", "1e1000000", "0x10", "1_000", "NaN", "Inf",
		"5", "1500m", "8000000000000m", "1Pi", "1125899906842625", "0.001Ki",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if v == "" {
			return // empty means "default", covered by TestFromInput
		}
		for _, field := range []string{"goldenStorage", "minimumImageStorage", "diskSize"} {
			in := &v1beta1.Input{}
			switch field {
			case "goldenStorage":
				in.Storage.GoldenStorage = v
			case "minimumImageStorage":
				in.Storage.MinimumImageStorage = v
			default:
				in.Storage.DiskSize = v
			}
			c1, err1 := FromInput(in, time.Minute)
			c2, err2 := FromInput(in, time.Minute)
			if (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
				t.Fatalf("storage.%s %q is not decided deterministically: %v / %v", field, v, err1, err2)
			}
			if err1 != nil {
				continue
			}
			for _, q := range []resource.Quantity{c1.GoldenStorage, c1.MinimumImageStorage, c1.DiskSize} {
				if q.Sign() <= 0 {
					t.Fatalf("storage.%s %q accepted as non-positive %s", field, v, q.String())
				}
				if q.MilliValue()%1000 != 0 {
					t.Fatalf("storage.%s %q accepted as %s, not a whole number of bytes", field, v, q.String())
				}
				back, err := resource.ParseQuantity(q.String())
				if err != nil || back.Cmp(q) != 0 {
					t.Fatalf("storage.%s %q renders as %q, which does not parse back to the same size (%v)", field, v, q.String(), err)
				}
			}
			if c1.GoldenStorage.Cmp(c2.GoldenStorage) != 0 || c1.DiskSize.Cmp(c2.DiskSize) != 0 || c1.MinimumImageStorage.Cmp(c2.MinimumImageStorage) != 0 {
				t.Fatalf("storage.%s %q parses to different sizes on two calls", field, v)
			}
		}
	})
}

// FuzzFromInput feeds arbitrary Input documents (as Crossplane would hand
// them over, JSON) to FromInput. It must never panic, must decide the same
// way twice, and whatever it accepts must be safe to interpolate: a DNS-label
// namespace, URL-path-safe platform and arch, TTLs of at least a second, and
// support-matrix rows that are minors, unique and sorted. The Talos fields are
// checked by the talosimage fuzz targets. Seed corpus:
// testdata/fuzz/FuzzFromInput.
func FuzzFromInput(f *testing.F) {
	for _, s := range []string{
		`{}`,
		`{"apiVersion":"workerimage.fn.crossplane.io/v1beta1","kind":"Input","mode":"Catalog"}`,
		`{"mode":"NodePool","goldenNamespace":"cozy-public","image":{"platform":"openstack","arch":"arm64"}}`,
		`{"talos":{"version":"v1.13.6","schematicID":"ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515","imageFactoryURL":"https://factory.talos.dev","installerRepository":"factory.talos.dev/installer","kubernetesVersion":"v1.35"}}`,
		`{"storage":{"goldenStorage":"8Gi","minimumImageStorage":"1246Mi","diskSize":"30Gi"}}`,
		`{"supportMatrix":{"replace":true,"entries":[{"talos":"v1.13","minKubernetes":"v1.30","maxKubernetes":"v1.35"},{"talos":"v1.12","minKubernetes":"v1.29","maxKubernetes":"v1.34"}]}}`,
		`{"supportMatrix":{"entries":[{"talos":"v1.13","minKubernetes":"v1.30","maxKubernetes":"v1.35"},{"talos":"v1.13","minKubernetes":"v1.30","maxKubernetes":"v1.35"}]}}`,
		`{"cloneRBAC":{"scope":"AllServiceAccounts"},"polling":{"steady":"2m","inProgress":"5s"}}`,
		`{"polling":{"steady":"0s"}}`,
		`{"polling":{"steady":"-1h","inProgress":"1ns"}}`,
		`{"goldenNamespace":"Cozy-Public"}`,
		`{"goldenNamespace":"cozy-public\n"}`,
		`{"image":{"platform":"open stack","arch":"../../etc"}}`,
		`{"mode":"catalog"}`,
		`{"talos":{"kubernetesVersion":"v1.35.0-very-long-suffix"}}`,
		`{"storage":{"diskSize":"-20Gi"}}`,
		// Sizes that are not whole bytes (m is milli), URLs whose path
		// walks up once decoded, and the Input's newer blocks.
		`{"storage":{"diskSize":"1m"}}`,
		`{"storage":{"goldenStorage":"6442450944500m","minimumImageStorage":"5"}}`,
		`{"talos":{"imageFactoryURL":"https://f.example/%2e%2e/x"}}`,
		`{"talos":{"imageFactoryURL":"https://f.example/%252E%252e"}}`,
		`{"talos":{"imageFactoryURL":"https://f.example/a%2fb"}}`,
		`{"talos":{"installerRepository":"registry.example/` + strings.Repeat("i", 240) + `"}}`,
		`{"talos":{"imageFactoryCA":"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"}}`,
		`{"image":{"platform":"nocloud","arch":"arm64"}}`,
		`{"clonePreflight":{"allowHostAssistedCopy":true,"hostAssistedCopy":{"storageClasses":["local","local"]},"readVolumeSnapshotClasses":false}}`,
		`{"cloneBudget":{"default":5,"storageClasses":{"replicated":2,"Local":-1}}}`,
		`{"snapshotGoldens":{"enabled":true},"cloneHealth":{"leakedClaimAfter":"0s"}}`,
		`{"polling":{"stallAfter":{"imports":"1s","clones":"100h"}}}`,
		`{"scheduling":{"topologySpreadConstraints":[{"maxSkew":0,"topologyKey":"","whenUnsatisfiable":"Never"}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		in := &v1beta1.Input{}
		if err := json.Unmarshal(doc, in); err != nil {
			return
		}
		c1, err1 := FromInput(in, time.Minute)
		c2, err2 := FromInput(in, time.Minute)
		if (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
			t.Fatalf("Input %s is not decided deterministically: %v / %v", doc, err1, err2)
		}
		if err1 != nil {
			return
		}
		if diff := cmp.Diff(c1, c2, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
			t.Fatalf("Input %s gives different configs:\n%s", doc, diff)
		}
		if errs := validation.IsDNS1123Label(c1.GoldenNamespace); len(errs) > 0 {
			t.Fatalf("Input %s accepted goldenNamespace %q: %v", doc, c1.GoldenNamespace, errs)
		}
		for _, seg := range []string{c1.Platform, c1.Arch} {
			if len(rules.PathSegment(nil, seg)) > 0 {
				t.Fatalf("Input %s accepted image path segment %q", doc, seg)
			}
		}
		for _, q := range []resource.Quantity{c1.GoldenStorage, c1.MinimumImageStorage, c1.DiskSize} {
			if q.MilliValue()%1000 != 0 {
				t.Fatalf("Input %s accepted a size that is not whole bytes: %s", doc, q.String())
			}
		}
		if p := c1.ImageFactoryURL; strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") || strings.Contains(strings.ToLower(p), "%2e%2e") {
			t.Fatalf("Input %s accepted factory URL %q with a dot segment", doc, p)
		}
		if c1.SteadyTTL < time.Second || c1.InProgressTTL < time.Second {
			t.Fatalf("Input %s accepted TTLs %s / %s", doc, c1.SteadyTTL, c1.InProgressTTL)
		}
		switch c1.Mode {
		case "", v1beta1.ModeCatalog, v1beta1.ModeTenantCluster, v1beta1.ModeNodePool:
		default:
			t.Fatalf("Input %s accepted mode %q", doc, c1.Mode)
		}
		seen := map[string]bool{}
		for _, e := range c1.MatrixEntries {
			if seen[e.Talos] {
				t.Fatalf("Input %s accepted support-matrix row %q twice", doc, e.Talos)
			}
			seen[e.Talos] = true
		}
		if !sort.SliceIsSorted(c1.MatrixEntries, func(i, j int) bool { return c1.MatrixEntries[i].Talos < c1.MatrixEntries[j].Talos }) {
			t.Fatalf("Input %s gives an unsorted support matrix", doc)
		}
	})
}
