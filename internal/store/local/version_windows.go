//go:build windows

package local

import "io/fs"

// inode is 0: the file index of Windows comes only from an open handle,
// and coarseVersion is used without one. What it stands for holds without
// it: every write of an object makes a new file with a new modification
// time (100 ns ticks), and the objects compare-and-swap is used on are
// small enough for their version to hash their content (objectInfo).
func inode(fs.FileInfo) uint64 { return 0 }
