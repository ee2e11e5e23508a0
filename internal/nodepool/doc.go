// Package nodepool composes an XNodePool: the content-named
// KubevirtMachineTemplate and TalosConfigTemplate of a Talos worker pool, the
// MachineDeployment on both, its MachineHealthCheck, and the Usages that
// protect the goldens it clones and the pool's own deletion. The Talos config
// is internal/talosconfig's to render, the Cluster API objects
// internal/clusterapi's to build.
//
// Prepare (mode.go) decodes the pool (pool.go, resolve.go), or its removal
// (teardown.go), and what the call reads (reads.go); Requirements asks for
// it (world.go, join.go). Compose then decides (plan.go, decide):
//  1. the world read and the Join facts (world.go, joinplan.go);
//  2. the installer repository (installer.go) and the support matrix
//     (supportmatrix.go); the installer condition (health.go);
//  3. the clone gates' input, the disk template's StorageClass (gate.go)
//     and the copy path the Input chose for it (copy.go), then the disk
//     template (render.go, vmtemplate.go);
//  4. the workers: node size and kubelet reservations (reservations.go), the
//     bootstrap template, the MachineDeployment and its health check
//     (render.go, deployment.go);
//  5. the pool's ask (ask.go): running templates that carry it are
//     kept in place of what this release renders, so no release rolls a pool
//     that asked for nothing new;
//  6. the hold, the first that applies: KubeVirt's admission of the VM's
//     architecture (multiarch.go), the clone gates and pre-flight of a
//     new clone template (gate.go, preflight.go), an unknown node size, the
//     clone grant, the Join mode's holds (joinplan.go);
//  7. a Join pool not held stays on its running bootstrap template when only
//     the facts changed (joinplan.go);
//  8. clone health, of the disks read and of the template the workers are
//     made from after the hold (health.go, copy.go).
//
// emit.go writes the plan: the current objects, the previous templates a
// MachineSet still needs, the clone Usages (usage.go), status, conditions
// and results; the deletion guard follows (teardown.go).
package nodepool
