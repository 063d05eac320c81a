// Package tree defines directory trees: one tree blob per directory, listing
// its entries (Node) sorted by name. A directory entry points at its own
// tree blob by id, so the whole snapshot is a Merkle tree and an unchanged
// directory is stored once and reused by later snapshots.
package tree
