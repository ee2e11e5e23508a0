// Package nodepool composes an XNodePool: the content-named
// KubevirtMachineTemplate and TalosConfigTemplate of a Talos worker pool, the
// MachineDeployment on both, its MachineHealthCheck, and the Usages that
// protect the goldens it clones and the pool's own deletion. The Talos config
// is internal/talosconfig's to render, the Cluster API objects
// internal/clusterapi's to build.
//
// Prepare (mode.go) decodes the pool (pool/pool.go, resolve.go), or its removal
// (emit/teardown.go), and what the call reads (read/reads.go); Requirements asks for
// it (read/world.go, read/join.go). Compose then decides (decide/plan.go, decide):
//  1. the world read and the Join facts (read/world.go, decide/joinplan.go);
//  2. the installer repository (decide/installer.go) and the support matrix
//     (decide/supportmatrix.go); the installer condition (decide/health.go);
//  3. the clone gates' input, the disk template's StorageClass (decide/gate.go)
//     and the copy path the Input chose for it (decide/copy.go), then the disk
//     template (render/render.go, render/vmtemplate.go);
//  4. the workers: node size and kubelet reservations (decide/reservations.go), the
//     bootstrap template, the MachineDeployment and its health check
//     (render/render.go, render/deployment.go);
//  5. the pool's ask (render/ask.go): running templates that carry it are
//     kept in place of what this release renders, so no release rolls a pool
//     that asked for nothing new;
//  6. the hold, the first that applies: KubeVirt's admission of the VM's
//     architecture (decide/multiarch.go), the clone gates and pre-flight of a
//     new clone template (decide/gate.go, decide/preflight.go), an unknown node size, the
//     clone grant, the Join mode's holds (decide/joinplan.go);
//  7. a Join pool not held stays on its running bootstrap template when only
//     the facts changed (decide/joinplan.go);
//  8. clone health, of the disks read and of the template the workers are
//     made from after the hold (decide/health.go, decide/copy.go).
//
// emit/emit.go writes the plan: the current objects, the previous templates a
// MachineSet still needs, the clone Usages (emit/usage.go), status, conditions
// and results; the deletion guard follows (emit/teardown.go).
package nodepool
