// Package nodepool composes an XNodePool: the content-named
// KubevirtMachineTemplate and TalosConfigTemplate of a Talos worker pool, the
// MachineDeployment on both, its MachineHealthCheck, and the Usages that
// protect the goldens it clones and the pool's own deletion.
//
// A call goes through the stages in order, each a package:
//   - pool: what the pool asks for, decoded and resolved once (its identity,
//     its shape with the defaults, the names of what it composes);
//   - read: the current state, read once: what the pool composed, what it
//     last reported, and the required objects of its one table of reads
//     (what a call asks Crossplane for, when, and how each is read);
//   - decide: every decision, in order, in decide.Decide; the holds, in the
//     order that wins, in decideHold (decide/holds.go);
//   - render: the templates, the MachineDeployment and the health check, as
//     the Talos (internal/talosconfig) and Cluster API (internal/clusterapi)
//     packages build them;
//   - emit: the desired state, the Usages, status, conditions and results;
//     and a pool's removal.
//
// This package is the mode's front (mode.go): Prepare decodes the pool and
// decides what to read, Requirements and ChainedRequirements ask for it,
// Compose reads it, decides and emits.
package nodepool
