package schema

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/defaults"
)

// xrdByKind returns the modern XRD of kind.
func xrdByKind(t *testing.T, dir, kind string) XRD {
	t.Helper()
	for _, x := range mustXRDs(t, dir) {
		if x.Spec.Names.Kind == kind {
			return x
		}
	}
	t.Fatalf("%s has no XRD for %s", dir, kind)
	return XRD{}
}

func specSchema(x XRD) extv1.JSONSchemaProps {
	return x.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
}

// TestXRDsDefineTheThreeComposites pins the API surface: group, version,
// kinds, scopes and default Compositions.
func TestXRDsDefineTheThreeComposites(t *testing.T) {
	type want struct {
		apiVersion, name, scope, composition string
	}
	cases := map[string]struct {
		reason string
		dir    string
		kind   string
		want   want
	}{
		"CatalogIsClusterScoped": {
			reason: "The catalog composes goldens into the golden namespace and ClusterRoles, which only a Cluster XR may do.",
			dir:    configurationDir, kind: v1alpha1.KindWorkerImageCatalog,
			want: want{"apiextensions.crossplane.io/v2", "xworkerimagecatalogs.workerimage.cozystack.io", ScopeCluster, "xworkerimagecatalogs.workerimage.cozystack.io"},
		},
		"TenantClusterIsNamespaced": {
			reason: "A tenant cluster composes its XNodePools into its own namespace only.",
			dir:    configurationDir, kind: v1alpha1.KindTenantCluster,
			want: want{"apiextensions.crossplane.io/v2", "xtenantclusters.workerimage.cozystack.io", ScopeNamespaced, "xtenantclusters.workerimage.cozystack.io"},
		},
		"NodePoolIsNamespaced": {
			reason: "A node pool composes its templates and MachineDeployment into its own namespace only.",
			dir:    configurationDir, kind: v1alpha1.KindNodePool,
			want: want{"apiextensions.crossplane.io/v2", "xnodepools.workerimage.cozystack.io", ScopeNamespaced, "xnodepools.workerimage.cozystack.io"},
		},
		"LegacyTenantClusterOffersClaims": {
			reason: "Claims exist only on Crossplane v1 XRDs of scope LegacyCluster.",
			dir:    legacyDir, kind: v1alpha1.KindTenantCluster,
			want: want{"apiextensions.crossplane.io/v1", "xtenantclusters.workerimage.cozystack.io", ScopeLegacyCluster, "xtenantclusters.workerimage.cozystack.io"},
		},
		"LegacyNodePoolOffersClaims": {
			reason: "Claims exist only on Crossplane v1 XRDs of scope LegacyCluster.",
			dir:    legacyDir, kind: v1alpha1.KindNodePool,
			want: want{"apiextensions.crossplane.io/v1", "xnodepools.workerimage.cozystack.io", ScopeLegacyCluster, "xnodepools.workerimage.cozystack.io"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			x := xrdByKind(t, tc.dir, tc.kind)
			got := want{x.APIVersion, x.Metadata.Name, x.EffectiveScope(), ""}
			if x.Spec.DefaultCompositionRef != nil {
				got.composition = x.Spec.DefaultCompositionRef.Name
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			if x.Spec.Group != v1alpha1.Group || len(x.Spec.Versions) != 1 || x.Spec.Versions[0].Name != v1alpha1.Version {
				t.Errorf("%s: want group %s with the single version %s", x.File, v1alpha1.Group, v1alpha1.Version)
			}
		})
	}
}

// jsonFields returns the JSON names of t's fields, following inlined structs.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if name == "" && (f.Anonymous || strings.Contains(opts, "inline")) {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// schemaDefaults lists every default in s by field path.
func schemaDefaults(path string, s extv1.JSONSchemaProps, out map[string]string) {
	if s.Default != nil {
		out[path] = string(s.Default.Raw)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		schemaDefaults(path+"."+k, s.Properties[k], out)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		schemaDefaults(path+"[*]", *s.AdditionalProperties.Schema, out)
	}
	if s.Items != nil && s.Items.Schema != nil {
		schemaDefaults(path+"[]", *s.Items.Schema, out)
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestDefaultsComeFromInternalDefaults checks that every default of every XRD
// is the value internal/defaults holds, and that no XRD carries a default this
// table does not know about.
func TestDefaultsComeFromInternalDefaults(t *testing.T) {
	talos := map[string]string{
		".talos":                 `{}`,
		".talos.version":         jsonString(defaults.TalosVersion),
		".talos.schematicID":     jsonString(defaults.TalosSchematicID),
		".talos.imageFactoryURL": jsonString(defaults.ImageFactoryURL),
	}
	pool := map[string]string{
		// No replicas default: an autoscaled pool (minReplicas/maxReplicas)
		// must have none, so the function defaults a fixed pool to
		// defaults.Replicas itself.
		".diskSize": jsonString(defaults.DiskSize),
		// The shipped XRDs default osImage to the golden path (README, "The node pool").
		".osImage": `{"builtin":{}}`,
		// Generate: CABPT generates the worker config, as before.
		".bootstrap": `{}`, ".bootstrap.mode": jsonString(defaults.BootstrapMode),
	}
	with := func(prefix string, ms ...map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range ms {
			for k, v := range m {
				out[prefix+k] = v
			}
		}
		return out
	}
	common := map[string]string{
		".version":         jsonString(defaults.KubernetesVersion),
		".goldenNamespace": jsonString(defaults.GoldenNamespace),
	}
	cases := map[string]struct {
		reason string
		dir    string
		kind   string
		want   map[string]string
	}{
		"Catalog": {
			reason: "The catalog's defaults are the function's golden namespace, factory and golden size.",
			dir:    configurationDir, kind: v1alpha1.KindWorkerImageCatalog,
			want: map[string]string{
				"spec.goldenNamespace": jsonString(defaults.GoldenNamespace),
				"spec.imageFactoryURL": jsonString(defaults.ImageFactoryURL),
				"spec.storage":         jsonString(defaults.GoldenStorage),
			},
		},
		"TenantCluster": {
			reason: "The tenant cluster's defaults are the function's Kubernetes minor, Talos image and pool shape.",
			dir:    configurationDir, kind: v1alpha1.KindTenantCluster,
			want: with("spec", common, talos, with(".nodePools[*]", pool)),
		},
		"NodePool": {
			reason: "A standalone node pool defaults like a tenant cluster's pool.",
			dir:    configurationDir, kind: v1alpha1.KindNodePool,
			want: with("spec", common, talos, pool),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := map[string]string{}
			schemaDefaults("spec", specSchema(xrdByKind(t, tc.dir, tc.kind)), got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want (internal/defaults), +got (XRD):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestSharedSchemasAreIdentical checks that what a tenant cluster hands to a
// pool has the same schema on both sides: the talos block, the golden
// namespace, the Kubernetes version and every field of the pool shape.
func TestSharedSchemasAreIdentical(t *testing.T) {
	tc := specSchema(xrdByKind(t, configurationDir, v1alpha1.KindTenantCluster))
	np := specSchema(xrdByKind(t, configurationDir, v1alpha1.KindNodePool))
	pool := tc.Properties["nodePools"].AdditionalProperties.Schema

	shared := []string{"talos", "goldenNamespace"}
	for _, k := range shared {
		if diff := cmp.Diff(tc.Properties[k], np.Properties[k]); diff != "" {
			t.Errorf("spec.%s differs between XTenantCluster and XNodePool\n-XTenantCluster, +XNodePool:\n%s", k, diff)
		}
	}
	// The version descriptions say "cluster" and "pool"; the rest must match.
	v1, v2 := tc.Properties["version"], np.Properties["version"]
	v1.Description, v2.Description = "", ""
	if diff := cmp.Diff(v1, v2); diff != "" {
		t.Errorf("spec.version differs between XTenantCluster and XNodePool\n-XTenantCluster, +XNodePool:\n%s", diff)
	}
	var fields []string
	for k := range jsonFields(reflect.TypeFor[v1alpha1.PoolShape]()) {
		fields = append(fields, k)
	}
	sort.Strings(fields)
	for _, k := range fields {
		if diff := cmp.Diff(pool.Properties[k], np.Properties[k]); diff != "" {
			t.Errorf("pool field %s differs between XTenantCluster.spec.nodePools[*] and XNodePool.spec\n-XTenantCluster, +XNodePool:\n%s", k, diff)
		}
	}
	// The pool-level rules that do not involve clusterName or poolName.
	if diff := cmp.Diff(pool.XValidations, np.XValidations); diff != "" {
		t.Errorf("pool rules differ between XTenantCluster.spec.nodePools[*] and XNodePool.spec\n-XTenantCluster, +XNodePool:\n%s", diff)
	}
}
