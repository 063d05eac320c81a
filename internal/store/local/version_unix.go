//go:build unix

package local

import (
	"io/fs"
	"syscall"
)

// inode is the inode number of the file fi describes.
func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino) //nolint:unconvert // Ino is narrower on some platforms
	}
	return 0
}
