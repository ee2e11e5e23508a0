package emit

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; CAPI v1.11 still serves it.

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
)

// TestKeepReferenced: a previous template stays while the deployment or a
// MachineSet points at it, and retires once nothing does; while the
// deployment cannot be read, what the pool runs on is unknown and nothing
// retires.
func TestKeepReferenced(t *testing.T) {
	templates := []string{"m-old", "m-older", "m-running"}
	configs := []string{"b-old", "b-running"}
	observedOf := func() map[resource.Name]resource.ObservedComposed {
		obs := map[resource.Name]resource.ObservedComposed{}
		for _, n := range templates {
			u := composed.New()
			u.SetAPIVersion(pool.InfraAPIVersion)
			u.SetKind(pool.KindKubevirtMachineTmpl)
			u.SetName(n)
			obs[read.MachineTemplateResource(n)] = resource.ObservedComposed{Resource: u}
		}
		for _, n := range configs {
			u := composed.New()
			u.SetAPIVersion("bootstrap.cluster.x-k8s.io/v1alpha3")
			u.SetKind("TalosConfigTemplate")
			u.SetName(n)
			obs[read.BootstrapTemplateResource(n)] = resource.ObservedComposed{Resource: u}
		}
		return obs
	}
	deployment := func(apiVersion string) resource.ObservedComposed {
		u := composed.New()
		u.SetAPIVersion(apiVersion)
		u.SetKind("MachineDeployment")
		u.SetName("demo-md0")
		_ = u.SetValue("spec.template.spec.infrastructureRef.name", "m-running")
		_ = u.SetValue("spec.template.spec.bootstrap.configRef.name", "b-running")
		_ = u.SetValue("spec.template.spec.clusterName", "demo")
		return resource.ObservedComposed{Resource: u}
	}
	set := func(machine, bootstrap string) clusterv1.MachineSet {
		ms := clusterv1.MachineSet{}
		ms.Spec.Template.Spec.InfrastructureRef.Name = machine
		ms.Spec.Template.Spec.Bootstrap.ConfigRef = &corev1.ObjectReference{Name: bootstrap}
		return ms
	}
	cases := map[string]struct {
		reason string
		md     resource.ObservedComposed
		sets   []clusterv1.MachineSet
		want   []string
	}{
		"OnlyWhatRuns": {
			reason: "With no old MachineSet, only what the deployment runs on stays.",
			md:     deployment("cluster.x-k8s.io/v1beta1"),
			want:   []string{"b-running", "m-running"},
		},
		"WhatAMachineSetNeeds": {
			reason: "An old MachineSet keeps its templates for its scale-down and remediation.",
			md:     deployment("cluster.x-k8s.io/v1beta1"), sets: []clusterv1.MachineSet{set("m-old", "b-old")},
			want: []string{"b-old", "b-running", "m-old", "m-running"},
		},
		"UnreadableDeploymentRetiresNothing": {
			reason: "A deployment of a kind the mode cannot read leaves what runs unknown: every template stays.",
			md: func() resource.ObservedComposed {
				o := deployment("cluster.x-k8s.io/v1beta1")
				o.Resource.SetKind("Deployment")
				return o
			}(),
			want: []string{"b-old", "b-running", "m-old", "m-older", "m-running"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obs := observedOf()
			obs[read.ResourceMachineDeployment] = tc.md
			pl := decide.Plan{Composed: read.ReadComposed(obs, ""), Required: read.Required{MachineSets: tc.sets}}
			into := map[resource.Name]*resource.DesiredComposed{}
			keepReferenced(pl, into)
			var got []string
			for n, d := range into {
				if n != read.ResourceMachineDeployment {
					got = append(got, d.Resource.GetName())
				}
			}
			slices.Sort(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
