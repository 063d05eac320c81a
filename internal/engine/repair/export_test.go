package repair

// WithBatch returns opts with new index files of at most n packs, and the
// headers of n packs read between two writes.
func WithBatch(opts IndexOptions, n int) IndexOptions {
	opts.batch = n
	return opts
}
