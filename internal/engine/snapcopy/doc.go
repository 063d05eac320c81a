// Package snapcopy copies snapshots from one repository into another, for
// a second copy of a backup elsewhere (3-2-1). The repositories may have
// different keys and different chunker parameters.
//
// Blob ids are keyed hashes of the plaintext, so every blob is read from the
// source, verified, and stored under the id the destination's key gives it,
// sealed with the destination's key; trees are rewritten with the new ids.
// When both repositories chunk with the same size parameters, data blobs are
// copied one for one; when they differ, each file's contents are chunked
// again with the destination's chunker, so the copy deduplicates with the
// destination's own backups. Blobs the destination already has are not
// stored again.
//
// Run holds a shared lease on both repositories (prune cannot run on either
// meanwhile) and writes only immutable, uniquely named objects: packs and
// index files first, flushed per snapshot, then the snapshot object, last.
// A copied snapshot records the id its backup first had (Snapshot.Original),
// so a later run skips it; an interrupted run leaves only packs and index
// entries that the next run reuses or a prune reclaims.
package snapcopy
