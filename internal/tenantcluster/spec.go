package tenantcluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/crossplane/function-sdk-go/resource/composite"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/nodepool"
	"github.com/cozystack/function-worker-image/internal/rules"
)

// decodeSpec reads the composite's spec into its typed mirror, once. A field
// of the wrong type is reported by its full path, with the pool named: the
// JSON decoder drops map keys from its paths, which would leave a user with
// five pools guessing which one says replicas: "three".
func decodeSpec(xr *composite.Unstructured) (v1alpha1.TenantClusterSpec, error) {
	spec := v1alpha1.TenantClusterSpec{}
	raw, ok := xr.UnstructuredContent()["spec"]
	if !ok || raw == nil {
		return spec, nil
	}
	if err := checkReplicasAsWritten(raw); err != nil {
		return spec, err
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return spec, fmt.Errorf("cannot read spec: %w", err)
	}
	err = json.Unmarshal(b, &spec)
	if err == nil {
		return spec, nil
	}
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return spec, fmt.Errorf("cannot read spec: %w", err)
	}
	field := "spec." + te.Field
	if te.Field == "nodePools" || strings.HasPrefix(te.Field, "nodePools.") {
		field = poolFieldPath(b, te)
	}
	return spec, fmt.Errorf("%s is %s, but must be %s; fix the field's type in the composite", field, nodepool.Article(te.Value), nodepool.JSONKind(te.Type))
}

// poolFieldPath finds the pool whose field failed to decode by decoding each
// pool on its own, in sorted order so that the first bad pool is always the
// one named.
func poolFieldPath(spec []byte, te *json.UnmarshalTypeError) string {
	fallback := "spec." + te.Field
	var s struct {
		NodePools map[string]json.RawMessage `json:"nodePools"`
	}
	if json.Unmarshal(spec, &s) != nil {
		return fallback
	}
	names := make([]string, 0, len(s.NodePools))
	for n := range s.NodePools {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		var p v1alpha1.PoolShape
		var pe *json.UnmarshalTypeError
		if errors.As(json.Unmarshal(s.NodePools[n], &p), &pe) {
			return poolField(n, pe.Field)
		}
	}
	return fallback
}

// checkReplicasAsWritten checks each pool's replicas before the decode
// narrows it to int32, where 4294967297 is only "not an integer"; pools in
// name order, so the first bad one is always the one named.
func checkReplicasAsWritten(spec any) error {
	m, _ := spec.(map[string]any)
	pools, _ := m["nodePools"].(map[string]any)
	names := make([]string, 0, len(pools))
	for n := range pools {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		pool, _ := pools[n].(map[string]any)
		if err := rules.CheckReplicas(poolField(n, "replicas"), pool["replicas"]); err != nil {
			return err
		}
	}
	return nil
}
