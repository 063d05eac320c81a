package restore

// SetBeforeVerify makes a restore call f between its writes and its
// verification, so that tests can change files on disk there.
func SetBeforeVerify(opts *Options, f func()) { opts.beforeVerify = f }
