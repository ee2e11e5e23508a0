// Package talosconfig renders a Talos worker's machine config as the Talos
// bootstrap provider (CABPT) takes it. It decides:
//   - the strategic patches of every worker (patches.go): the installer image,
//     the registry mirrors in the form the Talos minor reads, and the node
//     patch;
//   - the node patch (node.go): node labels and taints, kernel modules and
//     kubelet reservations;
//   - a Join worker's complete base config (join.go), from the cluster's join
//     facts.
//
// CABPT's Go module does not resolve from the module proxy, and importing it
// would pull Talos' machinery into the function, so the few TalosConfig
// fields written are mirrored here; test/talos proves with Talos' own
// machinery that what this package renders generates, patches and validates
// strictly.
package talosconfig
