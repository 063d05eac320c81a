// Package repo ties the repository format together: the plaintext config,
// key slots, the merged blob index, saving blobs into packs and loading them
// back, trees and snapshots. It sits on a store.Store and is used by the
// engine; it knows nothing of files on disk or of the command line.
//
// Store layout (see docs/format.md):
//
//	config                         plaintext JSON: format version, repository id, parameters
//	keys/<id>                      key slots (plain JSON wrapping the master key)
//	data/<2 hex>/<pack id>         packs of sealed blobs (data and trees)
//	index/packs/<id>               sealed index files, one or more per backup
//	snapshots/<id>                 sealed snapshots
//	index/lock.exclusive           the exclusive lock (package lock)
//	index/lock.shared/<ts>-<rand>  shared locks
//
// Everything a backup writes is immutable and uniquely named (content
// hashes), so concurrent backups never overwrite each other's work.
//
// A Repository only reads, and owns all pack I/O (whole packs checked
// against their names, headers, ranges into a caller's buffer, trees from
// another index: packio.go). Writes hang off a Writer (shared lock or
// stronger) or an ExclusiveWriter, made only from a lease, whose every
// request goes through the lease's fence (writer.go); the few writes the
// seed runs with no lock hang off WithoutLock (unlocked.go).
package repo
