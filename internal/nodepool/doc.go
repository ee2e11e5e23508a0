// Package nodepool composes an XNodePool: the content-named
// KubevirtMachineTemplate and TalosConfigTemplate of a Talos worker pool, the
// MachineDeployment that points at both and its MachineHealthCheck. The Talos
// config is internal/talosconfig's to render, the Cluster API objects
// internal/clusterapi's to build. A call first decides what it reads, then
// reads everything (world.go, join.go), then decides in order (plan.go):
//  1. what the call reads, from the spec, the previous status and the
//     observed composed resources alone (reads.go);
//  2. the osImage, the disk source and the shape (internal/poolspec, called
//     from resolve.go), and the installer (installer.go);
//  3. the support matrix (supportmatrix.go);
//  4. clone health (health.go);
//  5. the disk template and its StorageClass (render.go, vmtemplate.go);
//  6. the node size and kubelet reservations (reservations.go), then the
//     bootstrap template, the MachineDeployment and its health check;
//  7. what holds the pool back: the clone gates (gate.go) and pre-flight
//     (preflight.go), a missing instance type, the clone grant, the Join
//     mode's guard and facts (joinplan.go);
//  8. what is emitted (emit.go): the current objects, the previous templates
//     a MachineSet still needs, status, conditions and results;
//  9. the Usages that protect clones and guard deletion (usage.go), or the
//     pool's removal when it is asked to go (teardown.go).
package nodepool
