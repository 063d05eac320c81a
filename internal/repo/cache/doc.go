// Package cache keeps local copies of a repository's immutable metadata
// (sealed index files, snapshots and tree packs) so that repeated runs
// against a remote store (S3, B2, SFTP) do not download again what they
// already know.
//
// Every cached object is named by the SHA-256 of its stored bytes, exactly
// as in the store, so a copy is checked against its name when it is read
// whole and when it is added. Ranges of a cached pack are not hashed on
// read: the caller verifies each blob it decodes (AES-GCM and the blob id)
// and removes the pack from the cache when a blob fails.
//
// Derived files (GetDerived, PutDerived) are kept under derived/: data
// computed from cached objects and replaced as a whole, such as the heads
// of the snapshots (see repo.SnapshotHeads), which the repository seals
// with its key and checks when it reads them.
//
// The cache lives under <dir>/<repository id>/ (default
// $XDG_CACHE_HOME/cloudstic, else ~/.cache/cloudstic), is bounded in size
// (least recently used objects go first) and is safe to share between
// processes: files are written to a unique temporary name and renamed.
// Losing or corrupting the cache never loses data; it only costs downloads.
package cache
