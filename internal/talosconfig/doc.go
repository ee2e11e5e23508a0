// Package talosconfig renders a Talos worker's machine config for the Talos
// bootstrap provider (CABPT): the strategic patches of every worker
// (patches.go: installer image, registry mirrors in the form the Talos minor
// reads), the node patch (node.go: labels, taints, kernel modules, kubelet
// reservations) and a Join worker's complete base config (join.go).
//
// The few TalosConfig fields written are mirrored rather than imported:
// CABPT's module does not resolve from the module proxy and would pull in
// Talos' machinery; test/talos validates the output with that machinery.
package talosconfig
