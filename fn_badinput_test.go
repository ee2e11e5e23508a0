package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

// nodePoolXR is an XNodePool tenant-demo/demo-md0 with spec.
func nodePoolXR(spec string) *fnv1.Resource {
	return &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XNodePool","metadata":{"name":"demo-md0","namespace":"tenant-demo"},"spec":` + spec + `}`)}
}

// TestBadInputOnceLetThroughIsRefused runs the input issue 36 (item 5)
// found let through, each through the whole function as Crossplane calls it
// (requirements first, then with what they select, here nothing), and
// compares the whole last response: a fatal result naming the object, the
// field, the value and the fix, and nothing composed or dropped (nothing is
// observed yet). A value refused only where it is used (the installer, once
// the pool composes) is refused after the requirements, which stay those of
// the same pool with a valid value (twin): what a call asks for never
// depends on a refusal.
func TestBadInputOnceLetThroughIsRefused(t *testing.T) {
	fatal := func(msg string) *fnv1.RunFunctionResponse {
		return &fnv1.RunFunctionResponse{
			Meta: &fnv1.ResponseMeta{Tag: "t", Ttl: durationpb.New(time.Minute)},
			Results: []*fnv1.Result{{
				Severity: fnv1.Severity_SEVERITY_FATAL,
				Target:   fnv1.Target_TARGET_COMPOSITE.Enum(),
				Message:  msg,
			}},
		}
	}
	longRepo := "registry.example/" + strings.Repeat("i", 190)
	cases := map[string]struct {
		reason string
		xr     *fnv1.Resource
		twin   *fnv1.Resource
		want   *fnv1.RunFunctionResponse
	}{
		"HTTPDiskOfFiveBytes": {
			reason: "diskSize: 5 rendered a disk of five bytes, into which the HTTP import of a 1246 MiB image could only fail.",
			xr:     nodePoolXR(`{"clusterName":"demo","version":"v1.35","diskSize":"5"}`),
			want:   fatal(`XNodePool "tenant-demo/demo-md0": spec.diskSize: Invalid value: "5": is smaller than the Talos disk image (1246Mi), so the import would fail; set diskSize to at least 1246Mi, or omit it for the default 20Gi`),
		},
		"DiskOfOneMilli": {
			reason: "diskSize: 1m is a thousandth of a byte, not a megabyte.",
			xr:     nodePoolXR(`{"clusterName":"demo","version":"v1.35","diskSize":"1m","osImage":{"factory":{}}}`),
			want:   fatal(`XNodePool "tenant-demo/demo-md0": spec.diskSize: Invalid value: "1m": is not a whole number of bytes (the suffix m is milli: 1m is a thousandth of a byte); write a size such as 20Gi (Mi, Gi for binary megabytes and gigabytes, M, G for decimal)`),
		},
		"FactoryURLWithEncodedDotSegment": {
			reason: "%2e%2e is .. to whichever hop decodes the path: the disk URL would fetch another path than written.",
			xr:     nodePoolXR(`{"clusterName":"demo","version":"v1.35","osImage":{"factory":{"imageFactoryURL":"https://factory.talos.dev/%2E%2e/x"}}}`),
			want:   fatal(`XNodePool "tenant-demo/demo-md0": spec.osImage.factory.imageFactoryURL: Invalid value: "https://factory.talos.dev/%2E%2e/x": has a dot segment (.., plain or percent-encoded) in its path, which walks the path up at whichever server or proxy resolves it, so the URL would fetch another path than the one written; write the path without it, as the server serves it (e.g. https://factory.example/talos rather than https://factory.example/x/../talos)`),
		},
		"LongInstallerRepository": {
			reason: "A long installerRepository was reported at Input talos.schematicID; it is refused at its own field, with its budget.",
			xr:     nodePoolXR(`{"clusterName":"demo","version":"v1.35","talos":{"installerRepository":"` + longRepo + `"}}`),
			twin:   nodePoolXR(`{"clusterName":"demo","version":"v1.35","talos":{"installerRepository":"registry.example/installer"}}`),
			want:   fatal(`XNodePool "tenant-demo/demo-md0": spec.talos.installerRepository: Invalid value: "registry.example/iiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiii...": is 207 characters and, with Input talos.schematicID "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515" (64 characters), makes the installer image name <installerRepository>/<schematic> 272 characters long, more than the 255 an OCI reference holds; shorten spec.talos.installerRepository to at most 190 characters, or shorten Input talos.schematicID`),
		},
		"LongClusterName": {
			reason: "A long clusterName's fix said to shorten the pool name; it is refused at clusterName, with each field's budget.",
			xr:     nodePoolXR(`{"clusterName":"` + strings.Repeat("c", 60) + `","poolName":"workers","version":"v1.35"}`),
			want:   fatal(`XNodePool "tenant-demo/demo-md0": spec.clusterName: Invalid value: "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc": is 60 characters and, with spec.poolName "workers" (7 characters), makes the MachineDeployment name <cluster>-<pool> (also a label value) 68 characters long, more than the 63 a DNS-1123 label holds; shorten spec.clusterName to at most 55 characters, or spec.poolName to at most 2`),
		},
		"LongTenantClusterName": {
			reason: "A tenant cluster whose own name leaves its pools little room is refused at its name, with each field's budget, not told to shorten the pool name alone.",
			xr:     &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XTenantCluster","metadata":{"name":"` + strings.Repeat("c", 60) + `","namespace":"tenant-acme"},"spec":{"version":"v1.35","nodePools":{"workers":{}}}}`)},
			want:   fatal(`XTenantCluster "tenant-acme/` + strings.Repeat("c", 60) + `": metadata.name: Invalid value: "` + strings.Repeat("c", 60) + `": is 60 characters and, with spec.nodePools[workers] "workers" (7 characters), makes the MachineDeployment name <cluster>-<pool> (also a label value) 68 characters long, more than the 63 a DNS-1123 label holds; shorten metadata.name to at most 55 characters, or spec.nodePools[workers] to at most 2`),
		},
		"TenantClusterFactoryURLWithDoubleEncodedDotSegment": {
			reason: "%252e%252e is .. one decoding later: the cluster refuses it where it is written, before composing pools that would import from it.",
			xr:     &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XTenantCluster","metadata":{"name":"acme","namespace":"tenant-acme"},"spec":{"version":"v1.35","talos":{"imageFactoryURL":"https://factory.talos.dev/%252e%252e"},"nodePools":{"workers":{}}}}`)},
			want:   fatal(`XTenantCluster "tenant-acme/acme": spec.talos.imageFactoryURL: Invalid value: "https://factory.talos.dev/%252e%252e": has a dot segment (.., plain or percent-encoded) in its path, which walks the path up at whichever server or proxy resolves it, so the URL would fetch another path than the one written; write the path without it, as the server serves it (e.g. https://factory.example/talos rather than https://factory.example/x/../talos)`),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			request := func(xr *fnv1.Resource) *fnv1.RunFunctionRequest {
				return &fnv1.RunFunctionRequest{
					Meta:     &fnv1.RequestMeta{Tag: "t"},
					Input:    resource.MustStructJSON(inputCat),
					Observed: &fnv1.State{Composite: proto.CloneOf(xr)},
				}
			}
			want := tc.want
			if tc.twin != nil {
				_, valid := settleRequest(t, newTestFunction(), request(tc.twin), nil)
				if fatalMessage(valid) != "" {
					t.Fatalf("%s\nthe twin is refused too: %s", tc.reason, fatalMessage(valid))
				}
				want = proto.CloneOf(tc.want)
				want.Requirements = valid.GetRequirements()
			}
			final, rsp := settleRequest(t, newTestFunction(), request(tc.xr), nil)
			if tc.twin != nil {
				// The response echoes the tag of the request it answers,
				// which the loop sets on every call after the first.
				want.Meta.Tag = final.GetMeta().GetTag()
			}
			if diff := cmp.Diff(want, rsp, protocmp.Transform()); diff != "" {
				t.Errorf("%s\nf.RunFunction(...): -want rsp, +got rsp:\n%s", tc.reason, diff)
			}
		})
	}
}
