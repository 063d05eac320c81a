// Package backup walks a directory tree of a source (package source: the
// local file system, an SFTP server) and stores it as a snapshot: files
// are split into content-defined chunks, each chunk is hashed and, when
// the repository does not have it yet, compressed, sealed and packed;
// every directory becomes a tree blob. Files whose size, mtime, ctime and
// inode match the parent snapshot are not read again.
//
// Pipeline: the walker goroutine reads directories and hands regular files
// to a pool of file workers (read → chunk → hash); new chunks go to a pool
// of blob workers (compress → seal → pack); full packs go to the saver's
// uploaders. Every stage is bounded, so memory stays flat whatever the size
// of the tree.
package backup
