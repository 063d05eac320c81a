// Package store defines the small interface every repository backend
// implements (local disk, S3, SFTP), its sentinel errors and its declared
// capabilities. A store moves opaque bytes under string keys; encryption,
// compression and packing belong to the repository layer above it.
//
// Keys are slash-separated relative paths such as "data/ab/abcdef" or
// "index/lock.exclusive". No key is ever also the "directory" prefix of other
// keys, so filesystem-backed stores can map keys to files one to one. Keys
// never have a path element starting with "." (stores may use such names for
// their own temporary files).
package store
