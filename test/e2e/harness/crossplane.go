package harness

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// EnsureNamespace creates namespace name if it does not exist.
func (cp *ControlPlane) EnsureNamespace(ctx context.Context, name string) error {
	return cp.Apply(ctx, MustObject(fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", name)))
}

// RegisterFunction makes Crossplane call the running function for
// Compositions whose steps reference functionRef.name: name. Crossplane v2.2
// finds a function through its active FunctionRevision labelled
// pkg.crossplane.io/package=<name>, dials status.endpoint and requires the
// capability "composition" there; no Function object or package image is
// needed. The revision is paused so that the package manager never tries to
// pull its (nonexistent) image. Re-check these internals when bumping
// Crossplane.
func (cp *ControlPlane) RegisterFunction(ctx context.Context, name string) error {
	rev := MustObject(fmt.Sprintf(`
apiVersion: pkg.crossplane.io/v1
kind: FunctionRevision
metadata:
  name: %[1]s-e2e
  labels:
    pkg.crossplane.io/package: %[1]s
  annotations:
    crossplane.io/paused: "true"
spec:
  image: example.invalid/%[1]s:v0.0.0-e2e
  desiredState: Active
  revision: 1
`, name))
	if err := cp.Apply(ctx, rev); err != nil {
		return err
	}
	if !slices.Contains(cp.functionNames, name) {
		cp.functionNames = append(cp.functionNames, name)
	}
	status := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": rev.GetAPIVersion(),
		"kind":       rev.GetKind(),
		"metadata":   map[string]any{"name": rev.GetName()},
		"status": map[string]any{
			"endpoint":     cp.functionEndpoint(),
			"capabilities": []any{"composition"},
		},
	}}
	return cp.ApplyStatus(ctx, FieldManager, status)
}

// CheckFunctionRegistered returns an error unless the FunctionRevision of
// name still carries the endpoint and capability the suite gave it.
func (cp *ControlPlane) CheckFunctionRegistered(ctx context.Context, name string) error {
	u, err := cp.Existing(ctx, FunctionRevision, "", name+"-e2e")
	if err != nil {
		return err
	}
	ep, _, _ := unstructured.NestedString(u.Object, "status", "endpoint")
	caps, _, _ := unstructured.NestedStringSlice(u.Object, "status", "capabilities")
	if ep != cp.functionEndpoint() || len(caps) == 0 || caps[0] != "composition" {
		return fmt.Errorf("FunctionRevision %s-e2e has endpoint %q and capabilities %v, want %q and [composition]", name, ep, caps, cp.functionEndpoint())
	}
	return nil
}

// ApplyXRDs applies XRDs and Compositions (and anything else in objs) and
// waits until every XRD is Established and its composite CRD is Established.
func (cp *ControlPlane) ApplyXRDs(ctx context.Context, objs []*unstructured.Unstructured) error {
	var xrds, crds []string
	for _, o := range objs {
		if err := cp.Apply(ctx, o); err != nil {
			return err
		}
		if o.GroupVersionKind().GroupKind() == XRD.GroupKind() {
			xrds = append(xrds, o.GetName())
			crds = append(crds, o.GetName()) // an XRD is named after its CRD: <plural>.<group>
		}
	}
	if err := cp.WaitEstablished(ctx, XRD, xrds, 60*time.Second); err != nil {
		return err
	}
	return cp.WaitEstablished(ctx, CRD, crds, 60*time.Second)
}
