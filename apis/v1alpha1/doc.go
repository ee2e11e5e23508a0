// Package v1alpha1 is the API of the three composites this function serves
// (group workerimage.cozystack.io), and its single source: the XRDs under
// package/configuration are generated from these types (hack/genxrd, run by
// make generate), and the function reads a composite's spec into them once, at
// the edge, so that decisions never index map[string]any.
//
// Doc comments of fields become the descriptions users read in kubectl
// explain and in docs/platform.md: write them for users. The markers
// (+kubebuilder:...) are controller-gen's; every field is optional unless it
// says +required. Defaults must equal internal/defaults (test/schema checks).
//
// +groupName=workerimage.cozystack.io
// +kubebuilder:validation:Optional
package v1alpha1

//go:generate go run ../../hack/genxrd -paths . -out ../../package/configuration
