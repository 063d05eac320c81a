// Package tag changes the tags of existing snapshots. Snapshot objects are
// immutable and named by the hash of their bytes, so a change is a rewrite:
// the snapshot with its new tags is stored as a new object (recording the
// id the backup was first stored under in its Original field), and only
// then is the object it replaces deleted. No data, tree or index is
// touched. Run requires the caller's shared lease: the only writes are a new,
// uniquely named immutable object and the removal of the one it replaced,
// and prune (which holds the exclusive lock) cannot run meanwhile. A crash
// between the two steps leaves both snapshots, each complete.
package tag
