package rules

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// NodeRolePrefix is the label key prefix of a node role. Cluster API syncs
// Machine labels under it to the Node (its node-role.kubernetes.io/ sync
// rule), which is how a pool's role reaches the tenant's scheduler.
const NodeRolePrefix = "node-role.kubernetes.io/"

// NodeRolePattern is a Kubernetes label name, the role part of the key; the
// XRDs carry it on roles[] (NodeRole checks the whole key, which also bounds
// it to 63 characters).
const NodeRolePattern = `^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`

// NodeRole checks one role of a pool: node-role.kubernetes.io/<role> must be
// a label key, so role is a label name (at most 63 alphanumerics, '-', '_'
// or '.', starting and ending alphanumeric), as the API server validates the
// label on the VirtualMachine, the Pod and the Machine.
func NodeRole(path *field.Path, role string) field.ErrorList {
	if errs := validation.IsQualifiedName(NodeRolePrefix + role); len(errs) > 0 || role == "" {
		why := "it is empty"
		if len(errs) > 0 {
			why = errs[0]
		}
		return field.ErrorList{field.Invalid(path, Quoted(role), fmt.Sprintf("does not make the label key %s<role> (%s); use a label name of at most 63 letters, digits, '-', '_' or '.', such as ingress-nginx", NodeRolePrefix, why))}
	}
	return nil
}
