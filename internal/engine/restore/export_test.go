package restore

import "github.com/cloudstic/cloudstic/internal/store"

// SetBeforeVerify makes a restore call f between its writes and its
// verification, so that tests can change files on disk there.
func SetBeforeVerify(opts *Options, f func()) { opts.beforeVerify = f }

// SetSegmentSize makes a restore split files of four times n bytes or
// more into segments of n bytes, so that tests need no 64 MiB files.
func SetSegmentSize(opts *Options, n int64) { opts.segmentSize = n }

// AcrossNetwork wraps a store to declare the request cost of a store
// across a network (remoteStore), for tests of the remote shape.
func AcrossNetwork(st store.Store) store.Store { return remoteStore{st} }
