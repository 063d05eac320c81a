// Package fsmeta is the file-system side of backup and restore.
//
// On the backup side a Capturer turns an lstat result into a tree.Node:
// type, permission bits, times, ownership (numeric and by name), device
// and inode numbers, symlink target and extended attributes.
//
// On the restore side a Writer creates entries below one output directory
// and applies their metadata. The repository it restores from is treated as
// hostile: every path is checked element by element (see ValidName), every
// operation goes through an os.Root, which refuses to leave the output
// directory even through symlinks already present there, and the
// operations os.Root lacks (mkfifo, mknod, xattrs, times and owners of
// symlinks) use the *at system calls on a parent directory opened through
// that Root, never following the final symlink.
//
// Only Linux is supported.
package fsmeta
