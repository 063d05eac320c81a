package prune

// WithMergeBatch returns opts with the merged index written n packs to a
// WriteIndex call, so that tests reach several files with a few packs.
func WithMergeBatch(opts Options, n int) Options {
	opts.mergeBatch = n
	return opts
}
