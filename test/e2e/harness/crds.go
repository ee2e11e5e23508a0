package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Crossplane core versions the suite runs on: every version the function
// supports, each with its tools module test/e2e/tools/crossplane/<version>
// (which builds the core binary). CROSSPLANE_VERSION picks one
// (make e2e CROSSPLANE_VERSION=v2.2.0); DefaultCrossplaneVersion is the one
// it runs otherwise, and test/e2e/hack/build-binaries.sh reads it from here.
const (
	CrossplaneModule         = "github.com/crossplane/crossplane/v2"
	DefaultCrossplaneVersion = "v2.4.2"
)

// CrossplaneVersions are the supported versions, oldest first.
var CrossplaneVersions = []string{"v2.2.0", "v2.3.4", "v2.4.2"}

// CrossplaneVersion is the version this run of the suite uses: its CRDs,
// webhook configurations and core binary.
var CrossplaneVersion = crossplaneVersion()

func crossplaneVersion() string {
	v := os.Getenv("CROSSPLANE_VERSION")
	if v == "" {
		return DefaultCrossplaneVersion
	}
	return v
}

// CheckCrossplaneVersion refuses a CROSSPLANE_VERSION the suite has no
// tools module for.
func CheckCrossplaneVersion() error {
	if !slices.Contains(CrossplaneVersions, CrossplaneVersion) {
		return fmt.Errorf("CROSSPLANE_VERSION=%s is not a version the suite supports; use one of %v", CrossplaneVersion, CrossplaneVersions)
	}
	return nil
}

// Pinned versions of the other modules whose CRDs the suite installs.
const (
	CAPIModule   = "sigs.k8s.io/cluster-api"
	CAPIVersion  = "v1.11.4"
	CAPKModule   = "sigs.k8s.io/cluster-api-provider-kubevirt"
	CAPKVersion  = "v0.11.2"
	CABPTModule  = "github.com/siderolabs/cluster-api-bootstrap-provider-talos"
	CABPTVersion = "v0.6.12"
)

// MinimalCRD returns a structural CRD for a kind whose real CRD the suite
// does not install: spec and status preserve unknown fields, and status is a
// subresource so that the fake controllers write it the way real ones do.
func MinimalCRD(group, version, kind, plural, scope string) *unstructured.Unstructured {
	crd := MustObject(fmt.Sprintf(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[4]s.%[1]s
spec:
  group: %[1]s
  scope: %[5]s
  names:
    kind: %[3]s
    listKind: %[3]sList
    plural: %[4]s
    singular: %[6]s
  versions:
  - name: %[2]s
    served: true
    storage: true
    subresources:
      status: {}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
`, group, version, kind, plural, scope, strings.ToLower(kind)))
	// The kube-apiserver refuses a CRD in a protected group (k8s.io,
	// kubernetes.io and their subdomains) without the approval annotation
	// (KEP-1111; apiextensions-apiserver pkg/apis/apiextensions/validation,
	// ValidateCustomResourceDefinition). The upstream CRDs carry it.
	if protectedGroup(group) {
		crd.SetAnnotations(map[string]string{"api-approved.kubernetes.io": "unapproved, a minimal stand-in of the e2e suite"})
	}
	return crd
}

func protectedGroup(group string) bool {
	for _, g := range []string{"k8s.io", "kubernetes.io"} {
		if group == g || strings.HasSuffix(group, "."+g) {
			return true
		}
	}
	return false
}

// MinimalCRDs are the kinds the function composes or reads whose project
// (the Talos control-plane provider, Kamaji's control plane, KubeVirt's
// instance types) the suite does not pull in. CDI's
// kinds are CDI's own CRDs (CDIBinaries.CRDs) and the snapshot kinds
// external-snapshotter's (SnapshotCRDs, snapshot.go).
func MinimalCRDs() []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		MinimalCRD("controlplane.cluster.x-k8s.io", "v1alpha3", "TalosControlPlane", "taloscontrolplanes", "Namespaced"),
		// A Join pool requires its cluster's control plane (the Input's
		// join.controlPlaneKind, Kamaji's KamajiControlPlane by default)
		// by name, for the version guard; Crossplane fails a reconcile
		// whose required kind is not served.
		MinimalCRD("controlplane.cluster.x-k8s.io", "v1alpha1", "KamajiControlPlane", "kamajicontrolplanes", "Namespaced"),
		// A node pool requires its instance type (the kubelet
		// reservations are computed from its size), and Crossplane fails
		// a reconcile whose required kind is not served.
		MinimalCRD("instancetype.kubevirt.io", "v1beta1", "VirtualMachineClusterInstancetype", "virtualmachineclusterinstancetypes", "Cluster"),
	}
}

// UpstreamCRDs reads the CRDs of Crossplane, Cluster API, the KubeVirt and
// Talos bootstrap providers from their modules, downloading them through the module proxy on
// a cold module cache.
func UpstreamCRDs(ctx context.Context) ([]*unstructured.Unstructured, error) {
	sources := []struct{ module, version, dir string }{
		{CrossplaneModule, CrossplaneVersion, "cluster/crds"},
		{CAPIModule, CAPIVersion, "config/crd/bases"},
		{CAPKModule, CAPKVersion, "config/crd/bases"},
		{CABPTModule, CABPTVersion, "config/crd/bases"},
	}
	var out []*unstructured.Unstructured
	for _, s := range sources {
		dir, err := ModuleDir(ctx, s.module, s.version)
		if err != nil {
			return nil, err
		}
		objs, err := ReadYAMLFiles(filepath.Join(dir, filepath.FromSlash(s.dir)))
		if err != nil {
			return nil, err
		}
		if len(objs) == 0 {
			return nil, fmt.Errorf("no CRDs in %s@%s/%s", s.module, s.version, s.dir)
		}
		out = append(out, objs...)
	}
	return out, nil
}
