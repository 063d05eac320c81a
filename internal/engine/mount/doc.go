// Package mount serves a repository's snapshots as a read-only FUSE file
// system (github.com/hanwen/go-fuse), laid out like restic's mount:
//
//	snapshots/<time>/...   one directory per snapshot, and snapshots/latest
//	ids/<id>               the same snapshots by short id (symlinks)
//	hosts/<host>/<time>    per host (symlinks), with a latest
//	tags/<tag>/<time>      per tag (symlinks), with a latest
//	latest                 the newest snapshot of all
//
// Directories come from tree blobs as they are visited; file contents are
// read blob by blob on demand through a cache bounded in bytes, so a read
// fetches only the packs holding the blobs it touches. The snapshot list
// is re-read every few seconds: new snapshots appear without remounting.
package mount
