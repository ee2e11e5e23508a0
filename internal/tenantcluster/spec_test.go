package tenantcluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/rules"
)

func TestDecodeSpec(t *testing.T) {
	type want struct {
		spec v1alpha1.TenantClusterSpec
		err  string
	}
	cases := map[string]struct {
		reason string
		xr     string
		want   want
	}{
		"MissingSpecIsEmpty": {
			reason: "A composite without a spec decodes to the zero spec; defaults fill it later.",
			xr:     `{"metadata":{"name":"acme"}}`,
		},
		"WellTypedSpecDecodes": {
			reason: "Every field of a well-typed spec arrives in the typed mirror.",
			xr:     `{"spec":{"version":"v1.35","talos":{"version":"v1.13.6"},"storageClass":"replicated","nodePools":{"workers":{"replicas":3,"osImage":{"builtin":{}}}}}}`,
			want: want{spec: v1alpha1.TenantClusterSpec{
				Version:      "v1.35",
				Talos:        v1alpha1.Talos{Version: "v1.13.6"},
				StorageClass: "replicated",
				NodePools: map[string]v1alpha1.PoolShape{
					"workers": {Replicas: ptr[int32](3), OSImage: &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{}}},
				},
			}},
		},
		"WrongTypeOfClusterFieldIsNamed": {
			reason: "A number where a string belongs names the field and the expected type.",
			xr:     `{"spec":{"version":1.35}}`,
			want:   want{err: "spec.version: Invalid value: 1.35: is a number, but must be a string; fix the field's type in the composite"},
		},
		"WrongTypeOfPoolFieldNamesThePool": {
			reason: "The decoder drops map keys from its paths; the pool must still be named.",
			xr:     `{"spec":{"nodePools":{"a":{"replicas":1},"gpu":{"replicas":"three"}}}}`,
			want:   want{err: `spec.nodePools[gpu].replicas: Invalid value: "three": is a string, but must be an integer; fix the field's type in the composite`},
		},
		"ReplicasWrappingInt32IsRefusedWithTheRange": {
			reason: "2^32+1 is checked as written, before int32 could wrap it or the decoder call it no integer.",
			xr:     `{"spec":{"nodePools":{"a":{"replicas":1},"gpu":{"replicas":4294967297}}}}`,
			want:   want{err: "spec.nodePools[gpu].replicas: Invalid value: 4294967297: is not a whole number from 0 to 1000; set how many workers the pool runs, at most 1000 per pool (split a larger fleet into several pools)"},
		},
		"PoolThatIsNoObjectIsNamed": {
			reason: "A pool given as a string names the pool itself.",
			xr:     `{"spec":{"nodePools":{"gpu":"big"}}}`,
			want:   want{err: `spec.nodePools[gpu]: Invalid value: "big": is a string, but must be an object; fix the field's type in the composite`},
		},
		"NodePoolsAsListIsNamed": {
			reason: "nodePools is a map from pool name to pool, not a list.",
			xr:     `{"spec":{"nodePools":[{"name":"gpu"}]}}`,
			want:   want{err: "spec.nodePools: Invalid value: is an array, but must be an object; fix the field's type in the composite"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec, errs := decodeSpec(newXR(t, tc.xr))
			if diff := cmp.Diff(tc.want.err, rules.Message(errs)); diff != "" {
				t.Errorf("%s\n-want err, +got err:\n%s", tc.reason, diff)
			}
			if len(errs) > 0 {
				return
			}
			if diff := cmp.Diff(tc.want.spec, spec); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
