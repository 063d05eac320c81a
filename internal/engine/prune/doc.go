// Package prune reclaims the space of blobs no snapshot references.
//
// Run marks every blob reachable from every snapshot, then sweeps: packs
// holding no used blob are deleted, packs whose unused share exceeds
// Options.MaxUnused are repacked (their used blobs are saved into new packs,
// which get their own index file), the surviving packs are written into a
// merged index, and only then are the index files read and, last, old
// packs deleted. A crash at any point leaves every snapshot's blobs
// reachable through some index file and pack on the store, and no index
// entry pointing at a deleted pack.
//
// # What prune may delete
//
// Prune runs under the exclusive lock (its lease, required), so no backup holds
// a valid lease while it runs. A backup stores its packs first, then the
// index files naming them, then its snapshot, all under its shared lock,
// and stops writing when it loses its lease (its work's context ends
// before the lease can run out). So:
//
//   - A pack an index file names but no snapshot uses is dead, whatever its
//     age: the backup that wrote it either finished (its snapshot would
//     use it) or lost its lease and will write no snapshot; a backup that
//     could deduplicate against it would need a shared lock. Prune deletes
//     or repacks such packs at once, and supersedes every index file it
//     read by the merged index.
//   - A pack no index file names is a leftover of a writer that crashed or
//     lost its lease between storing the pack and indexing it, or one
//     still writing without a valid lock (broken by break-lock, a host
//     asleep past its lease, a store whose lock is weaker than the model).
//     For that last case prune keeps it until the store's time of the write
//     is older than the start of the run minus Options.Margin, and reports
//     it in Result.Kept.
//
// Defence in depth against a failed lock: prune checks its lease before
// every delete, and before the first one re-lists snapshots and index
// files: a snapshot, or an index file it did not write, that appeared
// since the mark phase stops the run with nothing deleted.
package prune
