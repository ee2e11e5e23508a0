// Package decide is every decision of a node pool's call, in the order
// that wins: Decide (decide.go) lists the steps, decideHold (holds.go) the
// holds, the first that applies holding the pool. Each step is one call
// that reads what earlier ones decided and never rewrites it, and each
// hold's reason and message builder is in holds.go.
package decide
