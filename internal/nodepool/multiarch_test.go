package nodepool

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/internal/compose/composetest"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/poolspec"
)

func kubeVirtObj(namespace, name string, gates []any, defaultArch string) *unstructured.Unstructured {
	fields := map[string]any{"spec": map[string]any{}}
	if gates != nil {
		fields["spec"] = map[string]any{"configuration": map[string]any{"developerConfiguration": map[string]any{"featureGates": gates}}}
	}
	if defaultArch != "" {
		fields["status"] = map[string]any{"defaultArchitecture": defaultArch}
	}
	return obj(read.KubeVirtAPIVersion, read.KindKubeVirt, namespace, name, fields)
}

func TestAdmitArchitecture(t *testing.T) {
	amd64Plane := read.KubeVirtGate{Found: true, Name: "kubevirt/kubevirt", Default: "amd64"}
	cases := map[string]struct {
		reason string
		arch   string
		kv     read.KubeVirtGate
		want   decide.ArchAdmission
	}{
		"GateOffOtherArchitectureIsRefused": {
			reason: "virt-api refuses an arm64 VM on an amd64 control plane without the gate (vmi-create-admitter.go validateArchitecture).",
			arch:   "arm64", kv: amd64Plane, want: decide.ArchRefused,
		},
		"GateOnOtherArchitectureIsAdmitted": {
			reason: "With MultiArchitecture on, any architecture is admitted.",
			arch:   "arm64", kv: read.KubeVirtGate{Found: true, Default: "amd64", MultiArchitecture: true}, want: decide.ArchAdmitted,
		},
		"ControlPlanesArchitectureIsAdmittedWithoutTheGate": {
			reason: "A pool of the control plane's architecture (an arm64 cluster, an amd64 Input) needs no gate.",
			arch:   "arm64", kv: read.KubeVirtGate{Found: true, Default: "arm64"}, want: decide.ArchAdmitted,
		},
		"NoKubeVirtCRLetsThePoolThrough": {
			reason: "KubeVirt runs on another cluster (CAPK's infraClusterSecretRef) or not yet: the function cannot see its gate.",
			arch:   "arm64", want: decide.ArchNoKubeVirt,
		},
		"UnreadableKubeVirtCRHolds": {
			reason: "A KubeVirt CR that exists but cannot be read: whether it admits the VM is unknown.",
			arch:   "arm64", kv: read.KubeVirtGate{Found: true, Unreadable: "cannot read"}, want: decide.ArchUndecided,
		},
		"NoDefaultArchitectureYetHolds": {
			reason: "virt-operator has not written status.defaultArchitecture: the control plane's architecture is unknown.",
			arch:   "arm64", kv: read.KubeVirtGate{Found: true}, want: decide.ArchUndecided,
		},
		"NoDefaultArchitectureButTheGateOnIsAdmitted": {
			reason: "With the gate on the control plane's architecture does not matter.",
			arch:   "arm64", kv: read.KubeVirtGate{Found: true, MultiArchitecture: true}, want: decide.ArchAdmitted,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, decide.AdmitArchitecture(tc.arch, tc.kv)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestReadKubeVirt(t *testing.T) {
	cases := map[string]struct {
		reason         string
		items          []*unstructured.Unstructured
		want           read.KubeVirtGate
		wantUnreadable []string
	}{
		"None": {
			reason: "No KubeVirt CR: nothing found.",
		},
		"GateAmongOthers": {
			reason: "The gate is found among other feature gates, with the default architecture.",
			items:  []*unstructured.Unstructured{kubeVirtObj("kubevirt", "kubevirt", []any{"Snapshot", "MultiArchitecture"}, "amd64")},
			want:   read.KubeVirtGate{Found: true, Name: "kubevirt/kubevirt", MultiArchitecture: true, Default: "amd64"},
		},
		"GateNameIsExact": {
			reason: "KubeVirt compares gate names exactly (feature-gates.go isFeatureGateDefined).",
			items:  []*unstructured.Unstructured{kubeVirtObj("kubevirt", "kubevirt", []any{"multiarchitecture"}, "amd64")},
			want:   read.KubeVirtGate{Found: true, Name: "kubevirt/kubevirt", Default: "amd64"},
		},
		"FirstByNameDecidesWhateverTheOrder": {
			reason: "Two CRs: the first by namespace and name decides, in any order.",
			items: []*unstructured.Unstructured{
				kubeVirtObj("kubevirt", "z", []any{"MultiArchitecture"}, "amd64"),
				kubeVirtObj("kubevirt", "a", nil, "amd64"),
			},
			want: read.KubeVirtGate{Found: true, Name: "kubevirt/a", Default: "amd64"},
		},
		"NamespaceBeforeName": {
			reason: "The namespace orders first: kubevirt/z comes before other/a.",
			items: []*unstructured.Unstructured{
				kubeVirtObj("other", "a", nil, "arm64"),
				kubeVirtObj("kubevirt", "z", []any{"MultiArchitecture"}, "amd64"),
			},
			want: read.KubeVirtGate{Found: true, Name: "kubevirt/z", MultiArchitecture: true, Default: "amd64"},
		},
		"UnreadableIsReportedAndDecides": {
			reason: "A CR whose featureGates is not a list cannot be read: it is reported and the gate is undecided.",
			items:  []*unstructured.Unstructured{kubeVirtObj("kubevirt", "kubevirt", []any{}, "amd64")},
		},
	}
	// The unreadable case: featureGates of the wrong type.
	bad := kubeVirtObj("kubevirt", "kubevirt", nil, "amd64")
	bad.Object["spec"] = map[string]any{"configuration": map[string]any{"developerConfiguration": map[string]any{"featureGates": "MultiArchitecture"}}}
	c := cases["UnreadableIsReportedAndDecides"]
	c.items = []*unstructured.Unstructured{bad}
	_, err := read.KubeVirtGateOf(bad)
	if err == nil {
		t.Fatal("a featureGates string must not read")
	}
	c.want = read.KubeVirtGate{Found: true, Name: "kubevirt/kubevirt", Unreadable: err.Error()}
	c.wantUnreadable = []string{err.Error()}
	cases["UnreadableIsReportedAndDecides"] = c
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, unreadable := read.ReadKubeVirt(tc.items)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantUnreadable, unreadable); diff != "" {
				t.Errorf("%s: unreadable\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestGateOnMultiArchitectureMessages(t *testing.T) {
	p := pool.Pool{Namespace: "tenant-a", Cluster: "demo", Name: "md0"}
	img := pool.Image{Arch: poolspec.Setting{Value: "arm64", Field: "spec.architecture"}}
	cases := map[string]struct {
		kv   read.KubeVirtGate
		want *decide.Hold
	}{
		"Refused": {
			kv:   read.KubeVirtGate{Found: true, Name: "kubevirt/kubevirt", Default: "amd64"},
			want: &decide.Hold{Reason: decide.ReasonArchitectureNotAdmitted, Message: `Node pool "tenant-a/demo-md0": spec.architecture is "arm64", which its worker VMs carry as spec.template.spec.architecture, but the KubeVirt CR kubevirt/kubevirt has the MultiArchitecture feature gate off and its control plane is amd64 (status.defaultArchitecture), and KubeVirt refuses a VM of another architecture than its control plane's without that gate; so the new worker template is held back and the pool's existing resources are kept as they are. Enable the MultiArchitecture feature gate in the KubeVirt CR's spec.configuration.developerConfiguration.featureGates, or use a pool of the control plane's architecture (spec.architecture amd64, or unset when it is the Input's image.arch).`},
		},
		"NoDefaultYet": {
			kv:   read.KubeVirtGate{Found: true, Name: "kubevirt/kubevirt"},
			want: &decide.Hold{Reason: decide.ReasonArchitectureNotAdmitted, Message: `Node pool "tenant-a/demo-md0": spec.architecture is "arm64", which its worker VMs carry as spec.template.spec.architecture, but the KubeVirt CR kubevirt/kubevirt has the MultiArchitecture feature gate off and reports no control plane architecture yet (status.defaultArchitecture), so whether KubeVirt admits it is unknown; the hold lifts once virt-operator reports it and it is arm64; so the new worker template is held back and the pool's existing resources are kept as they are. Enable the MultiArchitecture feature gate in the KubeVirt CR's spec.configuration.developerConfiguration.featureGates, or use a pool of the control plane's architecture (leave spec.architecture unset for the Input's image.arch).`},
		},
		"Unreadable": {
			kv:   read.KubeVirtGate{Found: true, Name: "kubevirt/kubevirt", Unreadable: "bad"},
			want: &decide.Hold{Reason: decide.ReasonArchitectureNotAdmitted, Message: `Node pool "tenant-a/demo-md0": spec.architecture is "arm64", which its worker VMs carry as spec.template.spec.architecture, but the KubeVirt CR kubevirt/kubevirt cannot be read (bad), so whether KubeVirt admits it is unknown; so the new worker template is held back and the pool's existing resources are kept as they are. Enable the MultiArchitecture feature gate in the KubeVirt CR's spec.configuration.developerConfiguration.featureGates, or use a pool of the control plane's architecture (leave spec.architecture unset for the Input's image.arch).`},
		},
		"Admitted": {kv: read.KubeVirtGate{Found: true, Name: "kubevirt/kubevirt", Default: "amd64", MultiArchitecture: true}},
		"Absent":   {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, decide.GateOnMultiArchitecture(p, img, tc.kv)); diff != "" {
				t.Errorf("-want, +got:\n%s", diff)
			}
		})
	}
}

func TestVMArchitecture(t *testing.T) {
	cases := map[string]struct {
		reason            string
		pool, input       string
		wantVM            string
		wantReadsKubeVirt bool
	}{
		"InputsArchitectureNamesNone": {
			reason: "A pool of the Input's architecture writes none: no existing template changes, and it reads no KubeVirt CR.",
			pool:   "amd64", input: "amd64",
		},
		"OtherArchitectureIsNamed": {
			reason: "An arm64 pool on an amd64 Input names arm64, and reads the KubeVirt CR.",
			pool:   "arm64", input: "amd64", wantVM: "arm64", wantReadsKubeVirt: true,
		},
		"Amd64OnAnArm64InputIsNamed": {
			reason: "The rule is relative to the Input: an amd64 pool on an arm64 Input names amd64.",
			pool:   "amd64", input: "arm64", wantVM: "amd64", wantReadsKubeVirt: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantVM, pool.VMArchitecture(tc.pool, tc.input)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			cfg := testConfig(t)
			cfg.Arch = tc.input
			r := request(t, nodePoolXR(map[string]any{"architecture": tc.pool}), worldFixture{}, nil)
			r.Config = cfg
			_, asked := composetest.Run(Mode{}, r).Requirements[read.ReqKubeVirt]
			if asked != tc.wantReadsKubeVirt {
				t.Errorf("%s: KubeVirt CR asked for = %t, want %t", tc.reason, asked, tc.wantReadsKubeVirt)
			}
		})
	}
}
