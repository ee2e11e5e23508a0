package nodepool

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The Talos bootstrap provider's Go module does not resolve from the module
// proxy, and importing it would pull Talos' machinery into this function, so
// the handful of TalosConfigTemplate fields we write are mirrored here
// (bootstrap.cluster.x-k8s.io/v1alpha3, cluster-api-bootstrap-provider-talos).

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
}

// generateTypeWorker is the generateType of a worker.
const generateTypeWorker = "worker"
