// Package local is the source.Source of the local file system: lstat,
// readdir, open, readlink and the extended attributes of paths, with the
// system calls backup made before sources existed.
package local
