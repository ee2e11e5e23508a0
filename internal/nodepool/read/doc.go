// Package read is the node pool's current state, read once per call: what
// the pool composed (Composed), what it last reported (Previous), and
// the required objects a call asks Crossplane for. What a call reads, when
// it asks, and how each object is read is the one table of reads; Reads
// says, from the spec, the previous status and the composed state alone,
// which rows a call needs, so both calls of a reconcile ask the same.
package read
