package fsmeta

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// CreateUnnamed creates a regular file without a name in the directory of
// rel (mode 0600 until ApplyMetaFile), to be given the name rel by
// LinkUnnamed once complete. Until then no name shows it, and if the
// process ends first the file system frees it: nothing is left behind.
func (w *Writer) CreateUnnamed(rel string) (*os.File, error) {
	var f *os.File
	err := w.atParent(rel, func(dirfd int, _ string) error {
		fd, err := unix.Openat(dirfd, ".", unix.O_WRONLY|unix.O_TMPFILE|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return err
		}
		f = os.NewFile(uintptr(fd), rel)
		return nil
	})
	switch {
	case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EISDIR), errors.Is(err, unix.EINVAL):
		return nil, fmt.Errorf("fsmeta: create %s: %w", rel, ErrNoUnnamed)
	case err != nil:
		return nil, fmt.Errorf("fsmeta: create %s: %w", rel, err)
	}
	return f, nil
}

// LinkUnnamed gives the file CreateUnnamed made the name rel. It never
// replaces an entry: if anything is at rel it returns ErrExists.
func (w *Writer) LinkUnnamed(f *os.File, rel string) error {
	conn, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("fsmeta: link %s: %w", rel, err)
	}
	err = w.atParent(rel, func(dirfd int, base string) error {
		var lerr error
		cerr := conn.Control(func(fd uintptr) {
			// linkat(AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH; the
			// descriptor's /proc link does not.
			lerr = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(fd)), dirfd, base, unix.AT_SYMLINK_FOLLOW)
		})
		return errors.Join(cerr, lerr)
	})
	if errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("fsmeta: link %s: %w", rel, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("fsmeta: link %s: %w", rel, err)
	}
	return nil
}
