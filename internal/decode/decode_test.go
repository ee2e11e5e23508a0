package decode

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
)

func TestInto(t *testing.T) {
	three := int32(3)
	cases := map[string]struct {
		reason   string
		raw      any
		skip     []string
		want     v1alpha1.TenantClusterSpec
		wantErrs []string
	}{
		"WellTyped": {
			reason: "A well-typed spec decodes whole.",
			raw:    map[string]any{"version": "v1.35", "nodePools": map[string]any{"gpu": map[string]any{"replicas": float64(3)}}},
			want:   v1alpha1.TenantClusterSpec{Version: "v1.35", NodePools: map[string]v1alpha1.PoolShape{"gpu": {Replicas: &three}}},
		},
		"MapKeyInPath": {
			reason:   "A pool's field is named by its pool, as the user wrote it, not by Go struct names.",
			raw:      map[string]any{"nodePools": map[string]any{"gpu": map[string]any{"replicas": "three"}, "web": map[string]any{"instanceType": float64(20)}}},
			want:     v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{"gpu": {}, "web": {}}},
			wantErrs: []string{`spec.nodePools[gpu].replicas: Invalid value: "three": is a string, but must be an integer; fix the field's type in the composite`, `spec.nodePools[web].instanceType: Invalid value: 20: is a number, but must be a string; fix the field's type in the composite`},
		},
		"QuantityAsInteger": {
			reason: "A quantity is int-or-string, as in a Pod spec: an integer reads as the quantity its digits spell.",
			raw:    map[string]any{"nodePools": map[string]any{"web": map[string]any{"diskSize": float64(21474836480), "resources": map[string]any{"cpu": int64(4)}}}},
			want:   v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{"web": {DiskSize: "21474836480", Resources: &v1alpha1.Resources{CPU: "4"}}}},
		},
		"QuantityAsObject": {
			reason:   "Not an object, though: the message says both kinds it takes.",
			raw:      map[string]any{"nodePools": map[string]any{"web": map[string]any{"diskSize": map[string]any{"size": "20Gi"}}}},
			want:     v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{"web": {}}},
			wantErrs: []string{`spec.nodePools[web].diskSize: Invalid value: is an object, but must be a string or an integer; fix the field's type in the composite`},
		},
		"ObjectWhereMapBelongs": {
			reason:   "An array is not a map, and its value is not dumped into the message.",
			raw:      map[string]any{"nodePools": []any{map[string]any{"name": "a"}}},
			wantErrs: []string{`spec.nodePools: Invalid value: is an array, but must be an object; fix the field's type in the composite`},
		},
		"IntOutOfRange": {
			reason:   "A number beyond int32 is refused, not wrapped.",
			raw:      map[string]any{"nodePools": map[string]any{"a": map[string]any{"replicas": float64(4294967297)}}},
			want:     v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{"a": {}}},
			wantErrs: []string{`spec.nodePools[a].replicas: Invalid value: 4294967297: must be a whole number from -2147483648 to 2147483647`},
		},
		"Skipped": {
			reason: "A value a rule has reported as written is neither reported again nor decoded.",
			raw:    map[string]any{"nodePools": map[string]any{"a": map[string]any{"replicas": float64(4294967297)}}},
			skip:   []string{"spec.nodePools[a].replicas"},
			want:   v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{"a": {}}},
		},
		"NullSelectsAUnionMember": {
			reason: "osImage: {builtin: } selects builtin, like builtin: {}.",
			raw:    map[string]any{"nodePools": map[string]any{"a": map[string]any{"osImage": map[string]any{"builtin": nil}}}},
			want:   v1alpha1.TenantClusterSpec{NodePools: map[string]v1alpha1.PoolShape{"a": {OSImage: &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{}}}}},
		},
		"SpecNotAnObject": {
			reason:   "A spec that is not an object.",
			raw:      "x",
			wantErrs: []string{`spec: Invalid value: "x": is a string, but must be an object; fix the field's type in the composite`},
		},
		"UnknownKeysIgnored": {
			reason: "Crossplane writes spec.crossplane and legacy reference fields into a spec; they are not the function's.",
			raw:    map[string]any{"crossplane": map[string]any{"compositionRef": map[string]any{"name": "x"}}, "version": "v1.35"},
			want:   v1alpha1.TenantClusterSpec{Version: "v1.35"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got v1alpha1.TenantClusterSpec
			errs := Into(tc.raw, field.NewPath("spec"), &got, tc.skip...)
			var msgs []string
			for _, e := range errs {
				msgs = append(msgs, e.Error())
			}
			if diff := cmp.Diff(tc.wantErrs, msgs); diff != "" {
				t.Errorf("%s\nerrors -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nspec -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCatalogListIndexInPath(t *testing.T) {
	var got v1alpha1.WorkerImageCatalogSpec
	errs := Into(map[string]any{"images": []any{map[string]any{"version": "v1.13.6"}, map[string]any{"version": float64(6)}}}, field.NewPath("spec"), &got)
	if len(errs) != 1 || errs[0].Field != "spec.images[1].version" {
		t.Fatalf("want one error at spec.images[1].version, got %v", errs)
	}
	if len(got.Images) != 2 || got.Images[0].Version != "v1.13.6" {
		t.Errorf("the well-typed entries decode: %+v", got.Images)
	}
}
