package read

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/observed"
)

// KubeVirt's MultiArchitecture gate, as KubeVirt v1.7.4 enforces it:
//   - virt-api refuses a VM, a VMI or a VMI replica set whose
//     spec(.template.spec).architecture is set and differs from
//     runtime.GOARCH, the architecture virt-api itself runs on, unless the
//     MultiArchitecture feature gate is on
//     (pkg/virt-api/webhooks/validating-webhook/admitters/
//     vmi-create-admitter.go validateArchitecture, called for VMs from
//     vms-admitter.go);
//   - the gate is on when spec.configuration.developerConfiguration.
//     featureGates of the KubeVirt CR lists it (pkg/virt-config/
//     feature-gates.go isFeatureGateEnabled; an Alpha gate,
//     featuregate/active.go);
//   - the control plane's architecture is not in the CR, but its default
//     is: virt-operator writes status.defaultArchitecture from
//     spec.configuration.architectureConfiguration.defaultArchitecture, else
//     once from its own runtime.GOARCH (pkg/virt-operator/util/config.go
//     SetDefaultArchitecture), and every VM that names none is given it
//     (pkg/defaults/defaults.go setDefaultArchitecture, from
//     pkg/virt-config/configuration.go setConfigFromKubeVirt). With the gate
//     off, a default other than virt-api's own architecture would have
//     every ordinary VM refused, so on a working cluster the default is the
//     control plane's architecture: the one architecture it admits.
//
// A pool writes spec.template.spec.architecture only when its architecture
// is not the Input's image.arch (render/vmtemplate.go), and only such a pool reads
// the KubeVirt CR: every other pool's VM names no architecture and is given
// the default, which this gate has nothing to say about.

// ReqKubeVirt is the KubeVirt CRs, all of them (a cluster runs one).
const ReqKubeVirt = "kubevirt"

// featureGateMultiArchitecture is KubeVirt's name of the gate
// (pkg/virt-config/featuregate/active.go, v1.7.4).
const featureGateMultiArchitecture = "MultiArchitecture"

// WritesArchitecture reports a pool whose VM names its architecture.
func WritesArchitecture(img pool.Image, cfg config.Config) bool {
	return pool.VMArchitecture(img.Arch.Value, cfg.Arch) != ""
}

// KubeVirtGate is what the gate reads of the KubeVirt CR.
type KubeVirtGate struct {
	// Found: a KubeVirt CR was read; Name is the one that decides,
	// "<namespace>/<name>".
	Found bool
	Name  string
	// MultiArchitecture: the feature gate is on.
	MultiArchitecture bool
	// Default is status.defaultArchitecture; "" before virt-operator wrote it.
	Default string
	// Unreadable is why a KubeVirt CR could not be converted; the gate then
	// knows nothing of it.
	Unreadable string
}

// ReadKubeVirt reads the KubeVirt CRs: the first by namespace and name
// decides, should there be more (virt-operator deploys one per cluster),
// whatever order they came in, as the CDI resource does (table.go). An
// unreadable one that comes first leaves the gate undecided: it may be the
// one that runs. Every unreadable one is returned, to be reported.
func ReadKubeVirt(items []*unstructured.Unstructured) (KubeVirtGate, []string) {
	var g KubeVirtGate
	var unreadable []string
	for _, u := range items {
		if g.Found && observed.Ref(u) >= g.Name {
			// Still read: an unreadable one is reported all the same.
			if _, err := KubeVirtGateOf(u); err != nil {
				unreadable = append(unreadable, err.Error())
			}
			continue
		}
		kv, err := KubeVirtGateOf(u)
		if err != nil {
			unreadable = append(unreadable, err.Error())
		}
		g = kv
	}
	return g, unreadable
}

// KubeVirtGateOf reads one KubeVirt CR; an unreadable one is Found with
// the reason it is Unreadable.
func KubeVirtGateOf(u *unstructured.Unstructured) (KubeVirtGate, error) {
	kv := &kubevirtv1.KubeVirt{}
	if err := observed.Into(u, KubeVirtAPIVersion, KindKubeVirt, kv); err != nil {
		return KubeVirtGate{Found: true, Name: observed.Ref(u), Unreadable: err.Error()}, err
	}
	g := KubeVirtGate{Found: true, Name: observed.Ref(u), Default: kv.Status.DefaultArchitecture}
	if dc := kv.Spec.Configuration.DeveloperConfiguration; dc != nil {
		for _, fg := range dc.FeatureGates {
			if fg == featureGateMultiArchitecture {
				g.MultiArchitecture = true
			}
		}
	}
	return g, nil
}

const (
	KubeVirtAPIVersion = "kubevirt.io/v1"
	KindKubeVirt       = "KubeVirt"
)
