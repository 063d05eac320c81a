// Package dump writes what a snapshot holds at one path to a stream: a
// file's contents, or a directory as a tar or zip archive with modes,
// owners, times, symlinks and hard links. Memory stays bounded by one
// blob, whatever the size of the files.
package dump
