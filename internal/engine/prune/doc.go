// Package prune reclaims the space of blobs no snapshot references.
//
// Run marks every blob reachable from every snapshot, then sweeps: packs
// holding no used blob are deleted, packs whose unused share exceeds
// Options.MaxUnused are repacked (their used blobs are saved into new packs,
// which get their own index file), the surviving packs are written into a
// merged index, and only then are superseded index files and, last, old
// packs deleted. A crash at any point leaves every snapshot's blobs
// reachable through some index file and pack on the store, and no index
// entry pointing at a deleted pack (packs named by an index file too new
// to delete are kept).
//
// Defence in depth against a failed lock: prune never deletes a pack or
// index file whose store modification time is not older than the start of
// its mark phase minus Options.Margin (so the packs of a backup still
// running are safe), it checks its lease (Options.Lease) before every batch
// of deletes, and it re-lists snapshots before deleting: a snapshot that
// appeared since the mark phase stops the run before any delete.
package prune
