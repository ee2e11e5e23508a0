package nodepool

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cozystack/function-worker-image/internal/compose/composetest"
)

func TestSpecValuesAsWritten(t *testing.T) {
	const range1000 = "is not a whole number from 0 to 1000; set how many workers the pool runs, at most 1000 per pool (split a larger fleet into several pools)"
	cases := map[string]struct {
		reason  string
		spec    map[string]any
		wantErr string
	}{
		"ReplicasOfWrongTypeNamesFieldAndValue": {
			reason:  "A string where a count belongs names the pool, the field, the value and the type wanted.",
			spec:    map[string]any{"replicas": "three"},
			wantErr: `XNodePool "tenant-a/demo-md0": spec.replicas: Invalid value: "three": is a string, but must be an integer; fix the field's type in the composite`,
		},
		"ReplicasWrappingInt32IsRefused": {
			reason:  "2^32+1 must not wrap to 1 on its way to int32.",
			spec:    map[string]any{"replicas": int64(4294967297)},
			wantErr: `XNodePool "tenant-a/demo-md0": spec.replicas: Invalid value: 4294967297: ` + range1000,
		},
		"ReplicasAsFloatFromProtobufIsRefused": {
			reason:  "Numbers arrive from protobuf as float64; 1e12 is named as JSON writes it, not as -727379968.",
			spec:    map[string]any{"replicas": 1e12},
			wantErr: `XNodePool "tenant-a/demo-md0": spec.replicas: Invalid value: 1000000000000: ` + range1000,
		},
		"FractionalReplicasIsRefused": {
			reason:  "Half a worker is not a count.",
			spec:    map[string]any{"replicas": 2.5},
			wantErr: `XNodePool "tenant-a/demo-md0": spec.replicas: Invalid value: 2.5: ` + range1000,
		},
		"NegativeReplicasIsRefused": {
			reason:  "Replicas cannot be negative.",
			spec:    map[string]any{"replicas": int64(-1)},
			wantErr: `XNodePool "tenant-a/demo-md0": spec.replicas: Invalid value: -1: ` + range1000,
		},
		"NestedWrongTypeNamesItsPath": {
			reason:  "A wrong type under osImage is named by its full path.",
			spec:    map[string]any{"osImage": map[string]any{"builtin": map[string]any{"version": float64(3)}}},
			wantErr: `XNodePool "tenant-a/demo-md0": spec.osImage.builtin.version: Invalid value: 3: is a number, but must be a string; fix the field's type in the composite`,
		},
		"WrongTypeUnderMapKeyNamesTheKey": {
			reason:  "The decoder drops map keys from its paths; the message keeps them.",
			spec:    map[string]any{"talos": map[string]any{"registryMirrors": map[string]any{"docker.io": map[string]any{"endpoints": []any{float64(1)}}}}},
			wantErr: `XNodePool "tenant-a/demo-md0": spec.talos.registryMirrors[docker.io].endpoints[0]: Invalid value: 1: is a number, but must be a string; fix the field's type in the composite`,
		},
		"MirrorKeyWithNewlineIsEscapedInThePath": {
			reason:  "A key is part of the field path: a newline in it is written escaped, as in the value, so it cannot start a line of its own in the message.",
			spec:    map[string]any{"talos": map[string]any{"registryMirrors": map[string]any{"docker.io\nevil: true": map[string]any{"endpoints": []any{"https://m.example"}}}}},
			wantErr: `XNodePool "tenant-a/demo-md0": spec.talos.registryMirrors[docker.io\nevil: true]: Invalid value: "docker.io\nevil: true": is not a registry host[:port] such as docker.io or registry.example.com:5000, or * for every registry`,
		},
		"ObjectGivenAsStringIsNamed": {
			reason:  "A string where an object belongs is named with its value.",
			spec:    map[string]any{"resources": "big"},
			wantErr: `XNodePool "tenant-a/demo-md0": spec.resources: Invalid value: "big": is a string, but must be an object; fix the field's type in the composite`,
		},
		"ValidReplicasPass": {
			reason: "A count within range composes.",
			spec:   map[string]any{"replicas": float64(3)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out := composetest.Run(Mode{}, request(t, nodePoolXR(tc.spec), worldFixture{}, nil)).Output
			if diff := cmp.Diff(tc.wantErr, errString(out.Fatal)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
