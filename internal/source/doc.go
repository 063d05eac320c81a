// Package source says what a backup reads: a tree of files, directories
// and symlinks reached by path, through the Source interface. Package
// source/local reads the local file system, source/sftp a directory of an
// SFTP server. The backup engine reads only through a Source, so that
// every source gets the same excludes, incremental parents and snapshot
// layout.
//
// This package sits beside internal/store: it imports nothing of the
// repository, the stores, the engine or the CLI.
package source
