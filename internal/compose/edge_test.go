package compose

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/resource/composite"
)

func obj(m map[string]any) *composed.Unstructured {
	return &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: m}}
}

func cm(name string, extra map[string]any) map[string]any {
	m := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "ns"}}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// ownsConfigMaps owns "cm-*" names as ConfigMaps.
func ownsConfigMaps(n resource.Name) (string, string, bool) {
	if len(n) > 3 && n[:3] == "cm-" {
		return "v1", "ConfigMap", true
	}
	return "", "", false
}

func TestAsObserved(t *testing.T) {
	u := obj(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name": "a", "namespace": "ns", "generateName": "a-",
			// Crossplane's usage controller and webhook own the in-use label
			// and the deletion-attempt annotation.
			"labels":      map[string]any{"l": "1", "crossplane.io/in-use": "true"},
			"annotations": map[string]any{"crossplane.io/composition-resource-name": "cm-a", "usage.crossplane.io/deletion-attempt-with-policy": "Background"},
			"uid":         "u", "resourceVersion": "7", "generation": int64(2), "creationTimestamp": "2024-01-01T00:00:00Z", "managedFields": []any{map[string]any{}},
			"ownerReferences": []any{map[string]any{"name": "xr"}}, "finalizers": []any{"f"}, "deletionTimestamp": "2024-01-02T00:00:00Z",
		},
		"data":   map[string]any{"k": "v"},
		"status": map[string]any{"phase": "x"},
	})
	want := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "namespace": "ns", "generateName": "a-", "labels": map[string]any{"l": "1"}, "annotations": map[string]any{"crossplane.io/composition-resource-name": "cm-a"}},
		"data":     map[string]any{"k": "v"},
	}
	if diff := cmp.Diff(want, AsObserved(u).Object); diff != "" {
		t.Errorf("a kept object says everything it said but its status and the metadata others own\n-want, +got:\n%s", diff)
	}
	if _, ok := u.Object["status"]; !ok {
		t.Errorf("AsObserved must not change the observed object")
	}
}

func TestKeep(t *testing.T) {
	ready := func(resource.Name) resource.Ready { return resource.ReadyTrue }
	observedOf := func(objs map[resource.Name]map[string]any) map[resource.Name]resource.ObservedComposed {
		out := map[resource.Name]resource.ObservedComposed{}
		for n, o := range objs {
			out[n] = resource.ObservedComposed{Resource: obj(o)}
		}
		return out
	}
	decided := &resource.DesiredComposed{Resource: obj(cm("decided", nil)), Ready: resource.ReadyFalse}
	cases := map[string]struct {
		reason   string
		observed map[resource.Name]map[string]any
		desired  map[resource.Name]*resource.DesiredComposed
		retired  Retired
		want     []resource.Name
	}{
		"HoldKeepsEverythingOwned": {
			reason:   "A mode that cannot decide keeps every owned resource as observed, and nothing of other steps.",
			observed: map[resource.Name]map[string]any{"cm-a": cm("a", nil), "cm-b": cm("b", nil), "other": cm("o", nil)},
			desired:  map[resource.Name]*resource.DesiredComposed{},
			retired:  RetireNone,
			want:     []resource.Name{"cm-a", "cm-b"},
		},
		"DecidedIsNotOverwritten": {
			reason:   "What the mode composes this call wins over the observed copy.",
			observed: map[resource.Name]map[string]any{"cm-a": cm("a", nil)},
			desired:  map[resource.Name]*resource.DesiredComposed{"cm-a": decided},
			retired:  RetireNone,
			want:     []resource.Name{"cm-a"},
		},
		"RetiredReadableGoes": {
			reason:   "A readable resource a rule retires is left out, which deletes it.",
			observed: map[resource.Name]map[string]any{"cm-a": cm("a", nil), "cm-b": cm("b", nil)},
			desired:  map[resource.Name]*resource.DesiredComposed{},
			retired:  func(n resource.Name) bool { return n == "cm-a" },
			want:     []resource.Name{"cm-b"},
		},
		"UnreadableIsNeverRetired": {
			reason:   "An owned name holding another kind is not the mode's to delete, whatever its rules say.",
			observed: map[resource.Name]map[string]any{"cm-a": {"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "a"}}, "cm-b": cm("b", nil)},
			desired:  map[resource.Name]*resource.DesiredComposed{},
			retired:  RetireAll,
			want:     []resource.Name{"cm-a"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := ReadObserved(observedOf(tc.observed), ownsConfigMaps)
			o.Keep(tc.desired, tc.retired, ready)
			got := make([]resource.Name, 0, len(tc.desired))
			for _, n := range sortedNames(tc.desired) {
				got = append(got, n)
				if d := tc.desired[n]; d != decided {
					if diff := cmp.Diff(AsObserved(o.Resources[n]).Object, d.Resource.Object); diff != "" || d.Ready != resource.ReadyTrue {
						t.Errorf("%s\n%s is kept exactly as observed, ready as asked\n-want, +got:\n%s", tc.reason, n, diff)
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func sortedNames(m map[resource.Name]*resource.DesiredComposed) []resource.Name {
	o := Observed{Resources: map[resource.Name]*composed.Unstructured{}}
	for n := range m {
		o.Resources[n] = nil
	}
	return o.Names()
}

func TestObservedRead(t *testing.T) {
	obs := map[resource.Name]resource.ObservedComposed{
		"cm-good":  {Resource: obj(cm("good", map[string]any{"data": map[string]any{"k": "v"}}))},
		"cm-shape": {Resource: obj(cm("shape", map[string]any{"data": "not a map"}))},
		"cm-kind":  {Resource: obj(map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "kind", "namespace": "ns"}})},
		"other":    {Resource: obj(cm("other", nil))},
	}
	o := ReadObserved(obs, ownsConfigMaps)
	read := map[resource.Name]bool{}
	for _, n := range []resource.Name{"cm-good", "cm-shape", "cm-kind", "cm-missing", "other"} {
		read[n] = o.Read(n, &corev1.ConfigMap{})
	}
	if diff := cmp.Diff(map[resource.Name]bool{"cm-good": true, "cm-shape": false, "cm-kind": false, "cm-missing": false, "other": false}, read); diff != "" {
		t.Errorf("only an owned, observed object of the kind composed there and of the right shape is read\n-want, +got:\n%s", diff)
	}
	o.MarkUnreadable("cm-good", errors.New("data.k is not a Talos version"))
	o.MarkUnreadable("cm-absent", errors.New("ignored"))
	want := []string{
		"composed resource cm-good (ConfigMap ns/good): data.k is not a Talos version",
		"composed resource cm-kind (Secret ns/kind): it is a v1 Secret, not the v1 ConfigMap this function composes there",
		`composed resource cm-shape (ConfigMap ns/shape): cannot read ConfigMap "ns/shape": cannot restore map from string`,
	}
	if diff := cmp.Diff(want, o.Problems()); diff != "" {
		t.Errorf("each unreadable owned resource is named with its kind, object and why, sorted; a name not observed is not\n-want, +got:\n%s", diff)
	}
}

func TestToDesiredShapes(t *testing.T) {
	type spec struct {
		Replicas int32             `json:"replicas"`
		Empty    struct{}          `json:"empty,omitempty"`
		Builtin  map[string]string `json:"builtin"`
		Flag     bool              `json:"flag"`
	}
	type object struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		Spec              spec           `json:"spec"`
		Status            map[string]any `json:"status"`
	}
	in := object{TypeMeta: metav1.TypeMeta{APIVersion: "x/v1", Kind: "X"}, ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: spec{Replicas: 2, Builtin: map[string]string{}}, Status: map[string]any{"s": 1}}
	cases := map[string]struct {
		reason string
		opts   []Option
		want   map[string]any
	}{
		"KeepsWhatTheTypeEncodes": {
			reason: "Without options an empty object means something (osImage {builtin: {}}); integers are int64 as in unstructured objects; status is never desired.",
			want:   map[string]any{"apiVersion": "x/v1", "kind": "X", "metadata": map[string]any{"name": "a"}, "spec": map[string]any{"replicas": int64(2), "empty": map[string]any{}, "builtin": map[string]any{}, "flag": false}},
		},
		"DropEmpty": {
			reason: "A mode whose types never need an empty object drops them.",
			opts:   []Option{DropEmpty()},
			want:   map[string]any{"apiVersion": "x/v1", "kind": "X", "metadata": map[string]any{"name": "a"}, "spec": map[string]any{"replicas": int64(2), "flag": false}},
		},
		"DropEmptyKeepsNamedEmptyObjects": {
			reason: "An empty object whose presence is the meaning (KubeVirt's bridge: {}) survives DropEmpty under its key.",
			opts:   []Option{DropEmpty(), KeepEmpty("builtin")},
			want:   map[string]any{"apiVersion": "x/v1", "kind": "X", "metadata": map[string]any{"name": "a"}, "spec": map[string]any{"replicas": int64(2), "builtin": map[string]any{}, "flag": false}},
		},
		"DropZero": {
			reason: "A zero value serialised without omitempty is no opinion.",
			opts:   []Option{DropZero("spec", "flag"), DropZero("spec", "replicas")},
			want:   map[string]any{"apiVersion": "x/v1", "kind": "X", "metadata": map[string]any{"name": "a"}, "spec": map[string]any{"replicas": int64(2), "empty": map[string]any{}, "builtin": map[string]any{}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ToDesired(in, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Object); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}

	rb, err := ToDesired(&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"}})
	if err != nil || rb.GetAPIVersion() != "rbac.authorization.k8s.io/v1" || rb.GetKind() != "RoleBinding" {
		t.Errorf("a typed object without TypeMeta takes its apiVersion and kind from the scheme, got %v %v", rb, err)
	}
	if _, err := ToDesired(map[string]any{"spec": 1}); err == nil {
		t.Errorf("an object with no apiVersion or kind cannot be desired")
	}
}

func TestPreviousStatus(t *testing.T) {
	type view struct {
		Template   string              `json:"template"`
		Conditions []ObservedCondition `json:"conditions"`
	}
	cases := map[string]struct {
		reason string
		xr     map[string]any
		want   view
	}{
		"Read": {
			reason: "The fields the view names are read; the rest is ignored.",
			xr:     map[string]any{"status": map[string]any{"template": "t1", "other": 3, "conditions": []any{map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"}}}},
			want:   view{Template: "t1", Conditions: []ObservedCondition{{Type: "Ready", Status: "True"}}},
		},
		"NoStatus": {
			reason: "A composite on its first reconcile has reported nothing.",
			xr:     map[string]any{"spec": map[string]any{}},
		},
		"UnreadableCountsAsNone": {
			reason: "A status of the wrong shape is never half read: it counts as none.",
			xr:     map[string]any{"status": map[string]any{"template": "t1", "conditions": "Ready"}},
		},
		"StatusNotAnObject": {
			reason: "Whatever the status holds, the reader does not fail the call.",
			xr:     map[string]any{"status": "weird"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := composite.New()
			xr.Object = tc.xr
			if diff := cmp.Diff(tc.want, PreviousStatus[view](xr)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestReadableWhenNeeded(t *testing.T) {
	stale := []ObservedCondition{{Type: ConditionObservedReadable, Status: "False", Reason: ReasonUnreadable}}
	afterFatal := []ObservedCondition{{Type: ConditionObservedReadable, Status: "Unknown", Reason: "FatalError"}}
	clear := []ObservedCondition{{Type: ConditionObservedReadable, Status: "True", Reason: ReasonAllReadable}}
	cases := map[string]struct {
		reason   string
		problems []string
		previous []ObservedCondition
		want     bool
		status   ConditionStatus
	}{
		"NothingToSay":         {reason: "A mode that reads everything adds no condition.", want: false, status: StatusTrue},
		"AlreadyClear":         {reason: "Once cleared, the True condition on the composite is right and stays.", previous: clear, want: false, status: StatusTrue},
		"Problem":              {reason: "An unreadable object is reported.", problems: []string{"x"}, want: true, status: StatusFalse},
		"ClearsAStaleFalse":    {reason: "Crossplane keeps a condition a function stops returning, so a fixed object is reported True once.", previous: stale, want: true, status: StatusTrue},
		"ClearsAfterAFatal":    {reason: "After a fatal Crossplane marks unreturned conditions Unknown; that is cleared too.", previous: afterFatal, want: true, status: StatusTrue},
		"ProblemAfterProblems": {reason: "Still unreadable: still reported.", problems: []string{"x"}, previous: stale, want: true, status: StatusFalse},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, emit := ReadableWhenNeeded(`catalog "x"`, tc.problems, tc.previous)
			if emit != tc.want || c.Status != tc.status {
				t.Errorf("%s: got emit=%v status=%s, want emit=%v status=%s", tc.reason, emit, c.Status, tc.want, tc.status)
			}
		})
	}
}

func TestTransition(t *testing.T) {
	c := Readable(`catalog "x"`, []string{"composed resource golden-a (ConfigMap ns/a): it is a v1 ConfigMap"})
	if diff := cmp.Diff(Condition{Type: ConditionObservedReadable, Status: StatusFalse, Reason: ReasonUnreadable,
		Message: `Catalog "x" ignores objects it cannot read: composed resource golden-a (ConfigMap ns/a): it is a v1 ConfigMap. None of them is deleted by this function: a composed one is kept as observed, unless the spec alone decides it. Check them with kubectl.`}, c); diff != "" {
		t.Errorf("the condition names each object and why\n-want, +got:\n%s", diff)
	}
	if _, ok := Transition(c, nil); !ok {
		t.Errorf("the first time an object cannot be read is one Warning")
	}
	if _, ok := Transition(c, []ObservedCondition{{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message}}); ok {
		t.Errorf("the same problems on the next reconcile are no new event")
	}
	if _, ok := Transition(Readable(`catalog "x"`, nil), nil); ok {
		t.Errorf("nothing unreadable, no event")
	}
}

func TestObservedComposite(t *testing.T) {
	cases := map[string]struct {
		reason string
		req    *fnv1.RunFunctionRequest
		want   string
	}{
		"NoObservedState": {
			reason: "Without an observed composite there is nothing to compose from.",
			req:    &fnv1.RunFunctionRequest{},
			want:   "the request carries no observed composite resource: there is nothing to compose from, and composing nothing would delete every composed resource, so nothing is changed",
		},
		"ObservedResourcesWithoutComposite": {
			reason: "Observed composed resources do not make up for a missing composite.",
			req:    &fnv1.RunFunctionRequest{Observed: &fnv1.State{Resources: map[string]*fnv1.Resource{"a": {Resource: resource.MustStructJSON(`{"kind":"ConfigMap"}`)}}}},
			want:   "the request carries no observed composite resource: there is nothing to compose from, and composing nothing would delete every composed resource, so nothing is changed",
		},
		"EmptyComposite": {
			reason: "An empty object is not a composite.",
			req:    &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{}`)}}},
			want:   `the observed composite resource has no kind or no name (kind "", name ""): there is nothing to compose from, and composing nothing would delete every composed resource, so nothing is changed`,
		},
		"Composite": {
			reason: "A composite with a kind and a name is read.",
			req:    &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"x/v1","kind":"X","metadata":{"name":"a"}}`)}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ObservedComposite(tc.req)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
