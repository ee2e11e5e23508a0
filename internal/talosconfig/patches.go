package talosconfig

import (
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/talosimage"
	"github.com/cozystack/function-worker-image/internal/yamlenc"
)

// Talos bootstrap provider identifiers (cluster-api-bootstrap-provider-talos
// v0.6.12 api/v1alpha3).
const (
	APIVersion              = "bootstrap.cluster.x-k8s.io/v1alpha3"
	KindTalosConfigTemplate = "TalosConfigTemplate"
)

// TalosConfigTemplate is the Talos bootstrap provider's template.
type TalosConfigTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec TalosConfigTemplateSpec `json:"spec"`
}

// TalosConfigTemplateSpec holds the template.
type TalosConfigTemplateSpec struct {
	Template TalosConfigTemplateResource `json:"template"`
}

// TalosConfigTemplateResource wraps the TalosConfig spec stamped per Machine.
type TalosConfigTemplateResource struct {
	Spec TalosConfigSpec `json:"spec"`
}

// TalosConfigSpec is the subset of the TalosConfig spec the function sets.
type TalosConfigSpec struct {
	// GenerateType is the machine type of the generated config.
	GenerateType string `json:"generateType"`
	// TalosVersion is the Talos release the config is generated for.
	TalosVersion string `json:"talosVersion,omitempty"`
	// StrategicPatches are Talos machine config strategic merge patches
	// (YAML documents). A merge patch, unlike an RFC 6902 one, does not
	// depend on which keys the generated config already has.
	StrategicPatches []string `json:"strategicPatches,omitempty"`
	// Data is the complete machine config CABPT takes as it is
	// (generateType: none), before the strategic patches.
	Data string `json:"data,omitempty"`
}

// GenerateTypeWorker is the generateType of a worker; GenerateTypeNone has
// CABPT take the machine config from data (the Join bootstrap mode).
const (
	GenerateTypeWorker = "worker"
	GenerateTypeNone   = "none"
)

// From Talos 1.12 registry mirrors are RegistryMirrorConfig documents and
// machine.registries.mirrors is deprecated: Talos' generator switches above
// contract 1.11 (pkg/machinery/config/generate/registry.go
// generateRegistryConfigs, config/contract.go MultidocNetworkConfigSupported).
// CABPT reads talosVersion as major.minor, so the switch is on the minor.
const registryMirrorDocsMajor, registryMirrorDocsMinor = 1, 12

// registryMirrorConfig is Talos' RegistryMirrorConfig document, v1alpha1
// (pkg/machinery/config/types/cri/registry_mirror.go,
// RegistryMirrorConfigV1Alpha1; the same fields from v1.12.0 to v1.13.9).
type registryMirrorConfig struct {
	APIVersion   string             `json:"apiVersion"`
	Kind         string             `json:"kind"`
	Name         string             `json:"name"`
	Endpoints    []registryEndpoint `json:"endpoints,omitempty"`
	SkipFallback bool               `json:"skipFallback,omitempty"`
}

// registryEndpoint is one RegistryMirrorConfig endpoint.
type registryEndpoint struct {
	URL string `json:"url"`
}

// StrategicPatches are the worker's patches for talosVersion: the v1alpha1
// machine patch (installer image; mirrors below Talos 1.12), the node patch,
// then from 1.12 one RegistryMirrorConfig per mirrored host, sorted.
//
// Each document is an entry of its own, as CABPT appends its own
// HostnameConfig (v0.6.12 controllers/talosconfig_controller.go
// reconcileGenerate loads each with configpatcher.LoadPatch, in order): so
// the machine patch of a pool without mirrors or below 1.12 stays byte for
// byte the same and its template keeps its name and does not roll.
func StrategicPatches(installerImage, talosVersion string, mirrors map[string]v1alpha1.RegistryMirror, nc Node) ([]string, error) {
	documents := talosimage.AtLeast(talosVersion, registryMirrorDocsMajor, registryMirrorDocsMinor)
	machine := map[string]any{"install": map[string]any{"image": installerImage}}
	if len(mirrors) > 0 && !documents {
		machine["registries"] = map[string]any{"mirrors": mirrors}
	}
	patch, err := yamlenc.Marshal(map[string]any{"machine": machine})
	if err != nil {
		return nil, fmt.Errorf("cannot render the Talos config patch: %w", err)
	}
	node, err := NodePatch(nc)
	if err != nil {
		return nil, err
	}
	patches := []string{string(patch), node}
	if !documents {
		return patches, nil
	}
	for _, host := range slices.Sorted(maps.Keys(mirrors)) {
		m := mirrors[host]
		doc := registryMirrorConfig{APIVersion: "v1alpha1", Kind: "RegistryMirrorConfig", Name: host, SkipFallback: m.SkipFallback}
		for _, ep := range m.Endpoints {
			doc.Endpoints = append(doc.Endpoints, registryEndpoint{URL: ep})
		}
		b, err := yamlenc.Marshal(doc)
		if err != nil {
			return nil, fmt.Errorf("cannot render the Talos RegistryMirrorConfig for %q: %w", host, err)
		}
		patches = append(patches, string(b))
	}
	return patches, nil
}
