package clusterapi

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // the v1beta1 view is what the conversion produces.
	clusterv1beta2 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

var testTemplates = TemplatesOf(
	metav1.TypeMeta{APIVersion: "infrastructure.cluster.x-k8s.io/v1alpha1", Kind: "KubevirtMachineTemplate"},
	metav1.TypeMeta{APIVersion: "bootstrap.cluster.x-k8s.io/v1alpha3", Kind: "TalosConfigTemplate"},
)

func machineSpec(infraGroup, infraKind string) clusterv1beta2.MachineSpec {
	return clusterv1beta2.MachineSpec{
		ClusterName:       "demo",
		InfrastructureRef: clusterv1beta2.ContractVersionedObjectReference{APIGroup: infraGroup, Kind: infraKind, Name: "demo-md0-kmt"},
		Bootstrap: clusterv1beta2.Bootstrap{ConfigRef: clusterv1beta2.ContractVersionedObjectReference{
			APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "TalosConfigTemplate", Name: "demo-md0-tct",
		}},
	}
}

// withCAPIGetter converts with Cluster API's own path, its process-wide
// getter set to the same table: what the function did before the table was
// passed. Only this test sets the getter.
func withCAPIGetter(t *testing.T) {
	t.Helper()
	clusterv1.SetAPIVersionGetter(testTemplates.apiVersion)
}

func TestMachineSetFrom(t *testing.T) {
	withCAPIGetter(t)
	cases := map[string]struct {
		reason string
		spec   clusterv1beta2.MachineSpec
		err    string
	}{
		"TemplateKindsConvert": {
			reason: "The function's two template kinds convert back to their apiVersions, namespaced as the MachineSet.",
			spec:   machineSpec("infrastructure.cluster.x-k8s.io", "KubevirtMachineTemplate"),
		},
		"NoReferences": {
			reason: "A spec without references needs no lookup.",
			spec:   clusterv1beta2.MachineSpec{ClusterName: "demo"},
		},
		"OtherKindIsRefused": {
			reason: "Another owner's template kind does not convert, with Cluster API's message.",
			spec:   machineSpec("infrastructure.cluster.x-k8s.io", "DockerMachineTemplate"),
			err:    "failed to convert object: DockerMachineTemplate.infrastructure.cluster.x-k8s.io is not a template kind this function composes",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			hub := &clusterv1beta2.MachineSet{
				ObjectMeta: metav1.ObjectMeta{Name: "demo-md0-abc", Namespace: "tenant-demo"},
				Spec:       clusterv1beta2.MachineSetSpec{ClusterName: "demo", Template: clusterv1beta2.MachineTemplateSpec{Spec: tc.spec}},
			}
			got, err := testTemplates.MachineSetFrom(hub.DeepCopy())
			want := clusterv1.MachineSet{}
			wantErr := want.ConvertFrom(hub.DeepCopy())
			if tc.err != "" {
				if err == nil || err.Error() != tc.err || wantErr == nil || wantErr.Error() != tc.err {
					t.Fatalf("%s\nwant error %q (Cluster API's: %v), got %v", tc.reason, tc.err, wantErr, err)
				}
				return
			}
			if err != nil || wantErr != nil {
				t.Fatalf("%s\nunexpected error: %v (Cluster API's: %v)", tc.reason, err, wantErr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\n-Cluster API's conversion, +MachineSetFrom:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestMachineDeploymentFrom(t *testing.T) {
	withCAPIGetter(t)
	replicas := int32(3)
	hub := &clusterv1beta2.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "demo-md0", Namespace: "tenant-demo", Annotations: map[string]string{"a": "b"}},
		Spec: clusterv1beta2.MachineDeploymentSpec{
			ClusterName: "demo", Replicas: &replicas,
			Template: clusterv1beta2.MachineTemplateSpec{Spec: machineSpec("infrastructure.cluster.x-k8s.io", "KubevirtMachineTemplate")},
		},
	}
	got, err := testTemplates.MachineDeploymentFrom(hub.DeepCopy())
	if err != nil {
		t.Fatalf("MachineDeploymentFrom: %v", err)
	}
	want := &clusterv1.MachineDeployment{}
	if err := want.ConvertFrom(hub.DeepCopy()); err != nil {
		t.Fatalf("Cluster API's ConvertFrom: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the deployment converts as Cluster API's conversion does, its conversion-data annotation included\n-Cluster API's conversion, +MachineDeploymentFrom:\n%s", diff)
	}
	wantRef := &corev1.ObjectReference{APIVersion: "bootstrap.cluster.x-k8s.io/v1alpha3", Kind: "TalosConfigTemplate", Namespace: "tenant-demo", Name: "demo-md0-tct"}
	if diff := cmp.Diff(wantRef, got.Spec.Template.Spec.Bootstrap.ConfigRef); diff != "" {
		t.Errorf("the bootstrap reference gets its apiVersion from the table\n-want, +got:\n%s", diff)
	}
}
