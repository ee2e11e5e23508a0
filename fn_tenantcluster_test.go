package main

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

// tenantTalos is the Talos block every XNodePool carries when the cluster
// and the Input leave the defaults alone.
const tenantTalos = `{"version":"v1.13.6","schematicID":"` + sidA + `","imageFactoryURL":"https://factory.talos.dev"}`

func tenantClusterXR(spec, status string) *fnv1.Resource {
	st := ""
	if status != "" {
		st = `,"status":` + status
	}
	return &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XTenantCluster","metadata":{"name":"acme","namespace":"tenant-acme"},"spec":` + spec + st + `}`)}
}

func TestRunFunctionTenantCluster(t *testing.T) {
	type args struct {
		req *fnv1.RunFunctionRequest
	}
	type want struct {
		rsp *fnv1.RunFunctionResponse
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"PoolsBecomeXNodePoolsAndReadinessIsSummarised": {
			reason: "Each pool is composed in one call (the mode needs no required resources); a ready XNodePool is ReadyTrue, the other ReadyFalse, and the pool that just became ready is one event.",
			args: args{req: &fnv1.RunFunctionRequest{
				Meta:  &fnv1.RequestMeta{Tag: "t"},
				Input: resource.MustStructJSON(inputCat),
				Observed: &fnv1.State{
					Composite: tenantClusterXR(`{"storageClass":"replicated","nodePools":{"workers":{"replicas":2,"osImage":{"builtin":{}}},"gpu":{"storageClass":"local"}}}`,
						`{"pools":{"workers":{"ready":false},"gpu":{"ready":false}}}`),
					Resources: map[string]*fnv1.Resource{
						"nodepool-workers": {Resource: resource.MustStructJSON(`{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XNodePool","metadata":{"name":"acme-workers","namespace":"tenant-acme"},"status":{
							"image":{"schematicID":"` + sidA + `","version":"v1.13.6","sourceType":"Clone","golden":"cozy-public/` + goldenA + `"},
							"template":"acme-workers-0123456789abcdef","gate":{"state":"Open"},"replicas":2,"readyReplicas":2,
							"conditions":[{"type":"Ready","status":"True","reason":"Available"}]}}`)},
						"nodepool-gpu": {Resource: resource.MustStructJSON(`{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XNodePool","metadata":{"name":"acme-gpu","namespace":"tenant-acme"},"status":{
							"image":{"schematicID":"` + sidA + `","version":"v1.13.6","sourceType":"HTTP","imageURL":"` + urlA + `"},
							"template":"acme-gpu-fedcba9876543210","gate":{"state":"Open"},"replicas":1,"readyReplicas":0,
							"conditions":[{"type":"Ready","status":"False","reason":"Creating"}]}}`)},
					},
				},
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta: &fnv1.ResponseMeta{Tag: "t", Ttl: durationpb.New(time.Minute)},
				Desired: &fnv1.State{
					Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"status":{"pools":{
						"gpu":{"image":{"schematicID":"` + sidA + `","version":"v1.13.6","sourceType":"HTTP","imageURL":"` + urlA + `"},"sourceType":"HTTP","template":"acme-gpu-fedcba9876543210","ready":false,"gate":{"state":"Open"}},
						"workers":{"image":{"schematicID":"` + sidA + `","version":"v1.13.6","sourceType":"Clone","golden":"cozy-public/` + goldenA + `"},"sourceType":"Clone","template":"acme-workers-0123456789abcdef","ready":true,"gate":{"state":"Open"}}}}}`)},
					Resources: map[string]*fnv1.Resource{
						"nodepool-gpu": desired(`{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XNodePool","metadata":{"name":"acme-gpu"},
							"spec":{"clusterName":"acme","poolName":"gpu","version":"v1.35","goldenNamespace":"cozy-public","talos":`+tenantTalos+`,"storageClass":"local"}}`, fnv1.Ready_READY_FALSE),
						"nodepool-workers": desired(`{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XNodePool","metadata":{"name":"acme-workers"},
							"spec":{"clusterName":"acme","poolName":"workers","version":"v1.35","goldenNamespace":"cozy-public","talos":`+tenantTalos+`,"replicas":2,"storageClass":"replicated","osImage":{"builtin":{}}}}`, fnv1.Ready_READY_TRUE),
					},
				},
				Conditions: []*fnv1.Condition{
					cond("NodePoolsReady", fnv1.Status_STATUS_CONDITION_FALSE, "PoolsNotReady", "1 of 2 node pools are not ready: gpu (0/1 workers ready)."),
					cond("SupportMatrix", fnv1.Status_STATUS_CONDITION_TRUE, "Supported", "Talos v1.13.6 supports Kubernetes v1.35."),
				},
				Results: []*fnv1.Result{{
					Severity: fnv1.Severity_SEVERITY_NORMAL,
					Reason:   tenantReason("NodePoolReady"),
					Message:  "Node pool workers is ready.",
					Target:   fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum(),
				}},
			}},
		},
		"KnownBadTalosKubernetesPairingIsFatal": {
			reason: "Talos v1.11 stops at Kubernetes v1.34; nothing is composed and the message says how to get out.",
			args: args{req: &fnv1.RunFunctionRequest{
				Input:    resource.MustStructJSON(inputCat),
				Observed: &fnv1.State{Composite: tenantClusterXR(`{"version":"v1.35","talos":{"version":"v1.11.2"},"nodePools":{"workers":{}}}`, "")},
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta: &fnv1.ResponseMeta{Ttl: durationpb.New(time.Minute)},
				Results: []*fnv1.Result{{
					Severity: fnv1.Severity_SEVERITY_FATAL,
					Target:   fnv1.Target_TARGET_COMPOSITE.Enum(),
					Message:  `XTenantCluster "tenant-acme/acme": Kubernetes v1.35 is not supported by Talos v1.11.2 (Talos v1.11 supports v1.29, v1.30, v1.31, v1.32, v1.33, v1.34). Bump the tenant cluster's version or set talos.version explicitly.`,
				}},
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := NewFunction(logging.NewNopLogger(), time.Minute)
			rsp, err := f.RunFunction(context.Background(), tc.args.req)
			if err != nil {
				t.Fatalf("%s\nf.RunFunction(...): unexpected error: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want.rsp, rsp, protocmp.Transform()); diff != "" {
				t.Errorf("%s\nf.RunFunction(...): -want rsp, +got rsp:\n%s", tc.reason, diff)
			}
		})
	}
}

func tenantReason(r string) *string { return &r }
