//go:build unix

package exclude

import (
	"io/fs"
	"syscall"
)

// localDevice is the device number in the local file system's stat.
func localDevice(fi fs.FileInfo) (uint64, bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), true //nolint:gosec,unconvert // Dev is narrower on some platforms
	}
	return 0, false
}
