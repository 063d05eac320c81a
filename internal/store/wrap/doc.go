// Package wrap holds store.Store wrappers that add behaviour around any
// backend without changing what is stored: request logging with timing
// (-debug) and request counting. Wrappers pass the inner store's declared
// capabilities through unchanged.
package wrap
