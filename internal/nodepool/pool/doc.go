// Package pool is what an XNodePool asks for, decoded and resolved once per
// call: the pool's identity (namespace, cluster, name) and its shape, the
// spec with every default applied (poolspec parses and validates it), and
// the names and annotations the other stages share. It decides nothing.
package pool
