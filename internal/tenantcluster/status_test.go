package tenantcluster

import (
	"errors"
	"testing"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/matrix"

	"github.com/google/go-cmp/cmp"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/internal/compose"
)

func TestObservePool(t *testing.T) {
	cases := map[string]struct {
		reason   string
		observed string
		want     poolReport
	}{
		"NotObservedYet": {
			reason: "A pool Crossplane has not created yet is not ready, and says so.",
			want:   poolReport{Detail: "not created yet"},
		},
		"ObservedWithoutStatus": {
			reason:   "A fresh XNodePool has no Ready condition yet.",
			observed: `{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XNodePool","metadata":{"name":"acme-workers"}}`,
			want:     poolReport{Detail: "Ready is Unknown"},
		},
		"ReadyCloningPool": {
			reason: "A ready pool's image, source type and template are read back.",
			observed: `{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XNodePool","metadata":{"name":"acme-workers"},"status":{
				"image":{"schematicID":"abc","version":"v1.13.6","sourceType":"Clone","golden":"cozy-public/talos-worker-abc-v1.13.6","storageClass":"replicated"},
				"template":"acme-workers-1a2b3c4d","gate":{"state":"Open"},"replicas":3,"readyReplicas":3,
				"conditions":[{"type":"Synced","status":"True","reason":"ReconcileSuccess"},{"type":"Ready","status":"True","reason":"Available"}]}}`,
			want: poolReport{Status: v1alpha1.PoolStatus{
				Image:      &v1alpha1.NodePoolImage{SourceType: "Clone", SchematicID: "abc", Version: "v1.13.6", Golden: "cozy-public/talos-worker-abc-v1.13.6", StorageClass: "replicated"},
				SourceType: "Clone", Template: "acme-workers-1a2b3c4d", Ready: true, Gate: &v1alpha1.Gate{State: "Open"},
			}},
		},
		"HeldPoolSaysWhy": {
			reason: "A held gate and the worker count explain an unready pool.",
			observed: `{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XNodePool","metadata":{"name":"acme-gpu"},"status":{
				"image":{"schematicID":"abc","version":"v1.13.6","sourceType":"Clone"},
				"gate":{"state":"Held","reason":"GoldenImporting","message":"The golden is importing (42%)."},"replicas":2,"readyReplicas":1,
				"conditions":[{"type":"Ready","status":"False","reason":"Creating"}]}}`,
			want: poolReport{
				Status: v1alpha1.PoolStatus{
					Image:      &v1alpha1.NodePoolImage{SourceType: "Clone", SchematicID: "abc", Version: "v1.13.6"},
					SourceType: "Clone",
					Gate:       &v1alpha1.Gate{State: "Held", Reason: "GoldenImporting", Message: "The golden is importing (42%)."},
				},
				Detail: "change held: GoldenImporting, 1/2 workers ready",
			},
		},
		"UnreadableStatusIsNotReady": {
			reason:   "A status of the wrong shape makes the pool unready, never an error that drops it.",
			observed: `{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XNodePool","metadata":{"name":"acme-gpu"},"status":{"conditions":"Ready"}}`,
			want: poolReport{
				Detail:           "its XNodePool's status cannot be read (json: cannot unmarshal string into Go struct field nodePoolStatus.conditions of type []compose.ObservedCondition)",
				StatusUnreadable: errors.New("json: cannot unmarshal string into Go struct field nodePoolStatus.conditions of type []compose.ObservedCondition"),
			},
		},
		"NotAnXNodePoolIsNotReady": {
			reason:   "Another kind under a pool's name is not read as the pool's status, and says what it is.",
			observed: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"acme-workers"},"status":{"conditions":[{"type":"Ready","status":"True"}]}}`,
			want:     poolReport{Detail: "its XNodePool cannot be read (it is a v1 ConfigMap, not the workerimage.cozystack.io/v1alpha1 XNodePool this function composes there)"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obs := map[resource.Name]resource.ObservedComposed{}
			if tc.observed != "" {
				obs["nodepool-workers"] = newObserved(t, tc.observed)
			}
			got := observePool(compose.ReadObserved(obs, owns), "nodepool-workers")
			if diff := cmp.Diff(tc.want, got, equateErrorMessages); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestPoolsReady(t *testing.T) {
	pools := []Pool{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	cases := map[string]struct {
		reason  string
		pools   []Pool
		reports map[string]poolReport
		want    compose.Condition
	}{
		"NoPoolsIsReady": {
			reason: "A cluster without pools has nothing to wait for.",
			want:   compose.Condition{Type: TypeNodePoolsReady, Status: compose.StatusTrue, Reason: ReasonAllPoolsReady, Message: "The tenant cluster has no node pools."},
		},
		"AllReady": {
			reason:  "Every pool ready makes the condition True.",
			pools:   pools,
			reports: map[string]poolReport{"a": {Status: v1alpha1.PoolStatus{Ready: true}}, "b": {Status: v1alpha1.PoolStatus{Ready: true}}, "c": {Status: v1alpha1.PoolStatus{Ready: true}}},
			want:    compose.Condition{Type: TypeNodePoolsReady, Status: compose.StatusTrue, Reason: ReasonAllPoolsReady, Message: "All 3 node pools are ready."},
		},
		"UnreadyPoolsListedSorted": {
			reason:  "The message lists unready pools in name order with why, so it is stable.",
			pools:   pools,
			reports: map[string]poolReport{"a": {Detail: "not created yet"}, "b": {Status: v1alpha1.PoolStatus{Ready: true}}, "c": {Detail: "change held: GoldenImporting"}},
			want: compose.Condition{Type: TypeNodePoolsReady, Status: compose.StatusFalse, Reason: ReasonPoolsNotReady,
				Message: "2 of 3 node pools are not ready: a (not created yet); c (change held: GoldenImporting)."},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := poolsReady(tc.pools, tc.reports)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestTransitions(t *testing.T) {
	supported := compose.Condition{Type: matrix.ConditionType, Status: compose.StatusTrue, Reason: matrix.ReasonSupported, Message: "Talos v1.13.6 supports Kubernetes v1.35."}
	unknown := compose.Condition{Type: matrix.ConditionType, Status: compose.StatusUnknown, Reason: matrix.ReasonUnknownTalosMinor, Message: "Talos v1.14.0 is not in the support matrix."}
	pools := []Pool{{Name: "a"}, {Name: "b"}}
	cases := map[string]struct {
		reason  string
		prev    previousStatus
		reports map[string]poolReport
		support compose.Condition
		want    []compose.Result
	}{
		"SteadyStateEmitsNothing": {
			reason:  "Nothing changed since the last call, so no event.",
			prev:    previousStatus{Pools: map[string]v1alpha1.PoolStatus{"a": {Ready: true}, "b": {}}},
			reports: map[string]poolReport{"a": {Status: v1alpha1.PoolStatus{Ready: true}}, "b": {Detail: "not created yet"}},
			support: supported,
		},
		"PoolBecomingReadyIsAnEvent": {
			reason:  "A pool that was not ready and now is gets one Normal event.",
			prev:    previousStatus{Pools: map[string]v1alpha1.PoolStatus{"a": {}}},
			reports: map[string]poolReport{"a": {Status: v1alpha1.PoolStatus{Ready: true}}, "b": {Detail: "not created yet"}},
			support: supported,
			want:    []compose.Result{{Severity: compose.SeverityNormal, Reason: "NodePoolReady", Message: "Node pool a is ready."}},
		},
		"ReadyPoolBecomingUnreadyIsAWarning": {
			reason:  "A pool that was ready and no longer is gets one Warning with why.",
			prev:    previousStatus{Pools: map[string]v1alpha1.PoolStatus{"a": {Ready: true}, "b": {Ready: true}}},
			reports: map[string]poolReport{"a": {Status: v1alpha1.PoolStatus{Ready: true}}, "b": {Detail: "1/2 workers ready"}},
			support: supported,
			want:    []compose.Result{{Severity: compose.SeverityWarning, Reason: "NodePoolNotReady", Message: "Node pool b is no longer ready: 1/2 workers ready."}},
		},
		"MovingToAnUnknownTalosReleaseIsAWarning": {
			reason:  "The first call on an unlisted Talos minor warns once.",
			prev:    previousStatus{Conditions: []condition{{Type: matrix.ConditionType, Status: "True", Reason: matrix.ReasonSupported, Message: supported.Message}}},
			support: unknown,
			want:    []compose.Result{{Severity: compose.SeverityWarning, Reason: matrix.ReasonUnknownTalosMinor, Message: unknown.Message}},
		},
		"StayingOnAnUnknownTalosReleaseIsQuiet": {
			reason:  "The condition carries the steady state; the event is not repeated.",
			prev:    previousStatus{Conditions: []condition{{Type: matrix.ConditionType, Status: "Unknown", Reason: matrix.ReasonUnknownTalosMinor, Message: unknown.Message}}},
			support: unknown,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := transitions(tc.prev, pools, tc.reports, tc.support)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
