// Package wrap holds store.Store wrappers that add behaviour around any
// backend without changing what is stored: request logging with timing
// (-debug) and request counting, and Limited, which declares fewer
// conditional writes than its inner store has. Logging passes the inner
// store's declared capabilities through unchanged.
package wrap
