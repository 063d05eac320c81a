//go:build unix

package fsmeta

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// CreateFile creates the regular file rel for writing (mode 0600 until
// ApplyMeta). It never opens or overwrites an existing entry, nor follows
// a symlink: if anything is already at rel it returns ErrExists and leaves
// it untouched.
func (w *Writer) CreateFile(rel string, _ *tree.Node) (*os.File, error) {
	var f *os.File
	err := w.atParent(rel, func(dirfd int, base string) error {
		// base is one checked name and O_NOFOLLOW|O_EXCL creates a new
		// file or fails: nothing here can follow a link.
		fd, err := unix.Openat(dirfd, base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return err
		}
		f = os.NewFile(uintptr(fd), rel)
		return nil
	})
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("fsmeta: create %s: %w", rel, ErrExists)
	}
	if err != nil {
		return nil, fmt.Errorf("fsmeta: create %s: %w", rel, err)
	}
	return f, nil
}

// Special creates a FIFO or a device node at rel (mode 0600 until
// ApplyMeta). Devices need root: otherwise, or if the kernel refuses
// (EPERM, as in many containers), it logs a warning and returns nil.
// Sockets are not restored (they belong to a running process); that too
// is only a warning.
func (w *Writer) Special(rel string, n *tree.Node) error {
	var mode uint32
	switch n.Type {
	case tree.TypeFIFO:
		mode = unix.S_IFIFO
	case tree.TypeCharDev:
		mode = unix.S_IFCHR
	case tree.TypeBlkDev:
		mode = unix.S_IFBLK
	case tree.TypeSocket:
		if _, _, err := splitRel(rel); err != nil {
			return err
		}
		w.opts.Logf("fsmeta: %s: sockets are not restored", rel)
		return nil
	default:
		return fmt.Errorf("fsmeta: special %s: not a special file type: %q", rel, n.Type)
	}
	if mode != unix.S_IFIFO && w.opts.NoDevices {
		if _, _, err := splitRel(rel); err != nil {
			return err
		}
		w.priv.devicesWithheld.Add(1)
		return nil
	}
	if mode != unix.S_IFIFO && !w.isRoot {
		if _, _, err := splitRel(rel); err != nil {
			return err
		}
		w.opts.Logf("fsmeta: %s: device not restored: needs root", rel)
		return nil
	}
	err := w.atParent(rel, func(dirfd int, base string) error {
		return mknodAt(dirfd, base, mode|0o600, n.Rdev)
	})
	switch {
	case err == nil:
		if mode != unix.S_IFIFO {
			w.priv.devices.Add(1)
		}
		return nil
	case errors.Is(err, unix.EEXIST):
		return fmt.Errorf("fsmeta: mknod %s: %w", rel, ErrExists)
	case errors.Is(err, errNoMknodat):
		w.opts.Logf("fsmeta: %s: %s not restored: %v", rel, n.Type, err)
		return nil
	case mode != unix.S_IFIFO && errors.Is(err, unix.EPERM):
		w.opts.Logf("fsmeta: %s: device not restored: %v", rel, err)
		return nil
	default:
		return fmt.Errorf("fsmeta: mknod %s: %w", rel, err)
	}
}

// errNoMknodat: the platform cannot create a special file relative to a
// directory (macOS); Special reports it as not restored.
var errNoMknodat = errors.New("not supported on this platform")

// atParent checks rel, opens its parent directory through the Root (so
// symlinks in the parents cannot lead outside; kept open for the next
// entries, see dirCache) and calls f with that directory's descriptor and
// the last element of rel.
func (w *Writer) atParent(rel string, f func(dirfd int, base string) error) error {
	dir, base, err := splitRel(rel)
	if err != nil {
		return err
	}
	parent, release, err := w.dirs.acquire(w.root, dir)
	if err != nil {
		return fmt.Errorf("open parent: %w", err)
	}
	defer release()
	conn, err := parent.SyscallConn()
	if err != nil {
		return fmt.Errorf("open parent: %w", err)
	}
	var ferr error
	if err := conn.Control(func(fd uintptr) { ferr = f(int(fd), base) }); err != nil {
		return err
	}
	return ferr
}

// RemoveAll removes rel and, if it is a directory, everything below it,
// without following symlinks out of the output directory.
func (w *Writer) RemoveAll(rel string) error {
	if _, _, err := splitRel(rel); err != nil {
		return err
	}
	w.dirs.forget(rel)
	if err := w.root.RemoveAll(rel); err != nil {
		return fmt.Errorf("fsmeta: remove %s: %w", rel, err)
	}
	return nil
}

// ReadDirNames lists the names in the directory rel ("." for the output
// directory), which must not be a symlink.
func (w *Writer) ReadDirNames(rel string) ([]string, error) {
	if rel != "." {
		if _, _, err := splitRel(rel); err != nil {
			return nil, err
		}
	}
	f, err := w.root.OpenFile(rel, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("fsmeta: open directory %s: %w", rel, err)
	}
	defer f.Close() //nolint:errcheck // read-only directory: nothing to flush
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("fsmeta: read directory %s: %w", rel, err)
	}
	return names, nil
}
