package rules

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Node labels and taints reach Talos machine.nodeLabels and
// machine.nodeTaints, which Talos applies to the Node with the same syntax
// rules as any label. The cozystack chart checks the same grammar with its
// own regular expressions (kubernetes-nodes
// templates/talos-reconcile-job.yaml@27f0283, $labelKeyRe, $labelValueRe);
// apimachinery's validators are that grammar.

// The XRD's patterns for label keys (taint keys and GPU resource names
// too) and label values: the grammar apimachinery's validators check, as
// RE2. The prefix's 253-character bound is the validators' alone.
const (
	LabelKeyPattern   = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	LabelValuePattern = `^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
)

// LabelGPU is the node label a GPU pool carries (gpu=on): HAMi's device
// plugin DaemonSet selects nodes on it.
const LabelGPU = "gpu"

// labelRolePrefix is the prefix of the node-role labels a pool's roles set.
const labelRolePrefix = "node-role.kubernetes.io/"

// LabelKey checks a label or taint key: an optional DNS-subdomain prefix and
// a slash, then a name of at most 63 characters. what is "label" or "taint".
func LabelKey(path *field.Path, k, what string) field.ErrorList {
	if errs := validation.IsQualifiedName(k); len(errs) > 0 {
		return field.ErrorList{field.Invalid(path, Quoted(k), fmt.Sprintf("is not a valid %s key (%s); use an optional DNS-subdomain prefix and a slash, then up to 63 letters, digits, '-', '_' or '.', e.g. example.com/tier", what, errs[0]))}
	}
	return nil
}

// LabelValue checks a label or taint value: up to 63 letters, digits, '-',
// '_' or '.', starting and ending alphanumeric, or empty.
func LabelValue(path *field.Path, v, what string) field.ErrorList {
	if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
		return field.ErrorList{field.Invalid(path, Quoted(v), fmt.Sprintf("is not a valid %s value (%s); use up to 63 letters, digits, '-', '_' or '.', starting and ending alphanumeric", what, errs[0]))}
	}
	return nil
}

// OwnedLabel refuses a pool label the function sets itself, as the chart
// does (talos-reconcile-job.yaml@27f0283, "is managed by the chart"): gpu
// comes from gpus, node-role.kubernetes.io/* from roles, and a pool label
// must not contradict them.
func OwnedLabel(path *field.Path, k string) field.ErrorList {
	if k == LabelGPU || strings.HasPrefix(k, labelRolePrefix) {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("label %q is managed by the function; use gpus for the gpu label and roles for node-role.kubernetes.io/* labels, and remove it from labels", Quoted(k)))}
	}
	return nil
}
