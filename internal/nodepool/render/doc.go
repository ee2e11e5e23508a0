// Package render builds what a node pool composes from what it asks for
// and what was decided: the content-named KubevirtMachineTemplate and
// TalosConfigTemplate, the MachineDeployment and its MachineHealthCheck, and
// the ask each template records (ask.go), which keeps a running template in
// place of what a later release renders. The Talos config is
// internal/talosconfig's, the Cluster API objects internal/clusterapi's.
package render
