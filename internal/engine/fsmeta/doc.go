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
// Platforms: the Unix writer (writer_unix.go, meta_unix.go...) serves
// Linux, macOS and FreeBSD, with each system's own calls in at_linux.go,
// at_darwin.go, at_freebsd.go and at_bsd.go, and its stat layout in
// stat_linux.go and stat_bsd.go. Windows has its own writer
// (writer_windows.go) over the Root and NtCreateFile relative to an open
// directory (nt_windows.go). What each platform captures and restores is
// in docs/platforms.md.
package fsmeta
