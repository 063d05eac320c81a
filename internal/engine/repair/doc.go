// Package repair mends a repository that damage would otherwise blind.
// Snapshots removes the snapshots that cannot be read back (they fail their
// hash check, authentication or decoding); Index rebuilds the index files
// from the packs' own headers. Both act only on positive proof of damage
// (repo.IsDamage): an object that could not be read for another reason
// (network, timeout, permissions, cancellation) fails the run and is left
// alone, since such a failure says nothing about the object.
//
// # Snapshots
//
// Snapshots loads every snapshot; each one found damaged is read once more,
// straight from the store (not from the metadata cache), and deleted only
// when that second read proves the damage too. It takes no lock, like
// forget, whose only write is the same delete: a backup stores its snapshot
// whole and atomically (every store's writes are), so a damaged snapshot
// object is never a backup still in progress, and deleting one snapshot
// object never harms another object. A prune that runs meanwhile refuses to
// start while a snapshot is damaged, or already marked what every good
// snapshot uses.
//
// # Index
//
// Index runs under the exclusive lock, through its lease's fence (no
// request reaches the store once the lease is lost). It lists the index
// files, reads the readable ones (for the plain lengths they record, and
// for the entries of packs whose header cannot be read), lists data/ and
// reads every pack's own header, writing new index files as it goes (a
// batch of packs each, so that its memory grows with the packs, not the
// blobs: see rebuild.go) naming every pack whose header it read (and the
// packs it could not read that a readable old index file names, with those
// entries), and only once every new file is written deletes the old index
// files it listed. A read that fails for another reason than damage after
// some new files were written stops the run before any delete: the new
// files are correct and the old ones all still there. An interruption at
// any point leaves a readable repository: before the deletes the old files
// are all still there (readers merge duplicates across index files), after
// them the new files name every readable pack. A run repeated after an
// interruption reads the files the interrupted one wrote like any other,
// writes its own and deletes the rest. A pack whose header is unreadable
// and that no readable index file names is reported and left in place: its
// blobs are then in no index (check reports the snapshots that need them,
// and prune refuses to delete anything while one does).
//
// # Proof that the key is right
//
// When nothing in the repository authenticates under the key it was
// opened with (no snapshot, no index file, no pack header), every object
// would look damaged: that is a wrong key or a tampered config, not
// damage, and both repairs refuse (ErrNoProof) instead of deleting
// everything.
package repair
