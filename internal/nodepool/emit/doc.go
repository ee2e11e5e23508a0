// Package emit turns a node pool's plan into the desired state: the current
// templates, deployment and health check, the previous templates a
// MachineSet still needs, the Usages of every golden a kept template clones
// (usage.go), status, conditions (conditions.go) and results on
// transitions; and the removal of a pool asked to go (teardown.go).
package emit
