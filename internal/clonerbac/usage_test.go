package clonerbac

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	protectionv1beta1 "github.com/crossplane/crossplane/apis/v2/protection/v1beta1"
)

func TestUsages(t *testing.T) {
	cases := map[string]struct {
		reason string
		usage  *protectionv1beta1.Usage
		want   string
	}{
		"BindingUsedByTheGolden": {
			reason: "The RoleBinding is in use by the golden DataVolume, both in the golden namespace, so `of` names no namespace; a refused delete is replayed once the golden is gone.",
			usage:  BindingUsage("default", goldenNS, golden),
			want: `{"kind":"Usage","apiVersion":"protection.crossplane.io/v1beta1","metadata":{"name":"workerimage-clone-default-ab8848638c1b6247","namespace":"cozy-public"},` +
				`"spec":{"of":{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","resourceRef":{"name":"workerimage-clone-default"}},"by":{"apiVersion":"cdi.kubevirt.io/v1beta1","kind":"DataVolume","resourceRef":{"name":"talos-worker-abc-v1.13.6"}},"replayDeletion":true},"status":{}}`,
		},
		"RoleUsedByTheBindingNamesTheEmptyNamespace": {
			reason: "The ClusterRole is cluster-scoped: `of` names the empty namespace explicitly, or Crossplane would index the Usage under the golden namespace and its webhook, looking under the role's own empty one, would allow the delete.",
			usage:  RoleUsage("default", goldenNS),
			want: `{"kind":"Usage","apiVersion":"protection.crossplane.io/v1beta1","metadata":{"name":"workerimage-clone-default","namespace":"cozy-public"},` +
				`"spec":{"of":{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","resourceRef":{"name":"workerimage-clone-default","namespace":""}},"by":{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","resourceRef":{"name":"workerimage-clone-default"}},"replayDeletion":true},"status":{}}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := json.Marshal(tc.usage)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
