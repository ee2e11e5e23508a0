// Package clusterapi builds a node pool's Cluster API objects and speaks the
// contract version the Input asks for. It decides:
//   - the MachineDeployment (deployment.go) and, on it, the pool's scaling
//     (autoscaling.go): a fixed replica count or the cluster-autoscaler's
//     bounds and scale-from-zero capacity, and the rolling update;
//   - the MachineHealthCheck and its remediation thresholds (healthcheck.go);
//   - the contract version they are written and read in (contract.go): built
//     as v1beta1, converted to and from v1beta2 with Cluster API's own
//     conversions, the template references resolved from a table the caller
//     passes instead of a process-wide getter.
package clusterapi
