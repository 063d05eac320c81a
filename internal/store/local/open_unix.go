//go:build unix

package local

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/store"
)

// Opening an object for reading, on Unix: O_NOFOLLOW makes the open of a
// symbolic link fail (ELOOP) instead of reading its target, and O_NONBLOCK
// makes the open of a FIFO return at once instead of waiting for a writer
// (a regular file ignores it). The caller then checks on the descriptor
// that it is a regular file, so nothing else is ever read.

// openNoFollow opens p read-only, not following a symbolic link at p
// itself and not waiting on a FIFO.
func openNoFollow(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// openRead opens the regular file of key at p for ReadRange and returns its
// descriptor, retrying when a signal interrupts the open. It is opened
// with plain system calls (see ReadRange) and refused like openObject
// refuses: a missing file or a directory is store.ErrNotFound, anything
// else but a regular file store.ErrNotRegular.
func openRead(key, p string) (int, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return -1, openError(key, p, &os.PathError{Op: "open", Path: p, Err: err})
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd) //nolint:errcheck // nothing was read; the fstat error is the one to report
		return -1, &os.PathError{Op: "fstat", Path: p, Err: err}
	}
	mode := fileMode(uint32(st.Mode)) // uint16 on the BSDs and macOS
	if mode.IsRegular() {
		return fd, nil
	}
	unix.Close(fd) //nolint:errcheck // nothing was read
	if mode.IsDir() {
		return -1, fmt.Errorf("%s: %w", key, store.ErrNotFound)
	}
	return -1, store.NotRegular(p, mode)
}

// fileMode is the type of a stat(2) mode as an fs.FileMode.
func fileMode(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}
