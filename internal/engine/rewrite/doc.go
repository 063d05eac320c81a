// Package rewrite removes files from existing snapshots, for example a
// secret that was backed up by mistake. The entries that gitignore-style
// exclude patterns match (package exclude, as backup reads them) are
// dropped: the trees above them are stored again and the snapshot is
// stored as a new object (a new id, recording the id its backup was first
// stored under in Original, with the patterns added to its excludes), and
// only then is the object it replaces deleted. Trees that do not change
// keep their ids; no data blob is written. The data the removed files
// used stays in the repository until a prune reclaims it.
//
// Run requires the caller's shared lease, as tag does: it writes only
// immutable, uniquely named objects (packs, index files, the new snapshot)
// and deletes the snapshot object it replaced, which forget does with no
// lock at all; the lease keeps prune, the only command that deletes data,
// out while the new trees refer to data blobs it could otherwise remove.
// A crash between the new snapshot's write and the old one's deletion
// leaves both, each complete.
package rewrite
