package fsmeta

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// ErrIsDir reports that an entry to be replaced or removed is a directory:
// Remove never removes one (RemoveAll does, when asked to).
var ErrIsDir = errors.New("fsmeta: entry is a directory")

// Existing is what Lstat found at a path: enough to decide whether a
// restore may keep, replace or must leave the entry alone.
type Existing struct {
	Mode  uint32 // st_mode: type and permission bits
	Size  int64
	MTime int64 // nanoseconds since the epoch
	Dev   uint64
	Ino   uint64
}

// Type is the kind of the entry, as a snapshot names it.
func (e *Existing) Type() tree.Type {
	switch e.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return tree.TypeDir
	case unix.S_IFREG:
		return tree.TypeFile
	case unix.S_IFLNK:
		return tree.TypeSymlink
	case unix.S_IFIFO:
		return tree.TypeFIFO
	case unix.S_IFCHR:
		return tree.TypeCharDev
	case unix.S_IFBLK:
		return tree.TypeBlkDev
	}
	return tree.TypeSocket
}

// Lstat returns what is at rel without following a final symlink, or an
// error wrapping fs.ErrNotExist when nothing is.
func (w *Writer) Lstat(rel string) (*Existing, error) {
	var st unix.Stat_t
	err := w.atParent(rel, func(dirfd int, base string) error {
		return unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW)
	})
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil, fmt.Errorf("fsmeta: lstat %s: %w", rel, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("fsmeta: lstat %s: %w", rel, err)
	}
	return &Existing{Mode: st.Mode, Size: st.Size, MTime: st.Mtim.Nano(),
		Dev: uint64(st.Dev), Ino: st.Ino}, nil //nolint:unconvert // Dev is narrower on some platforms
}

// Readlink returns the target of the symlink at rel.
func (w *Writer) Readlink(rel string) (string, error) {
	var target string
	err := w.atParent(rel, func(dirfd int, base string) error {
		buf := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(dirfd, base, buf)
		if err != nil {
			return err
		}
		target = string(buf[:n])
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("fsmeta: readlink %s: %w", rel, err)
	}
	return target, nil
}

// Rename moves the entry from (a temporary name) to rel, both in the same
// directory, atomically: rel is either the old entry or the new one, never
// missing or partly written. With noReplace it fails with ErrExists if
// anything is at rel, so nothing created meanwhile is overwritten;
// otherwise it replaces a non-directory at rel (a directory there fails).
func (w *Writer) Rename(from, rel string, noReplace bool) error {
	fromDir, fromBase, err := splitRel(from)
	if err != nil {
		return err
	}
	err = w.atParent(rel, func(dirfd int, base string) error {
		if dir, _, _ := splitRel(rel); dir != fromDir {
			return fmt.Errorf("%s and %s are in different directories", from, rel)
		}
		if !noReplace {
			return unix.Renameat(dirfd, fromBase, dirfd, base)
		}
		err := unix.Renameat2(dirfd, fromBase, dirfd, base, unix.RENAME_NOREPLACE)
		if !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOSYS) {
			return err
		}
		// No RENAME_NOREPLACE on this file system: a link fails if rel
		// exists, so link then drop the temporary name.
		if err := unix.Linkat(dirfd, fromBase, dirfd, base, 0); err != nil {
			return err
		}
		return unix.Unlinkat(dirfd, fromBase, 0)
	})
	switch {
	case errors.Is(err, unix.EEXIST):
		return fmt.Errorf("fsmeta: rename %s: %w", rel, ErrExists)
	case errors.Is(err, unix.EISDIR):
		return fmt.Errorf("fsmeta: rename %s: %w", rel, ErrIsDir)
	case err != nil:
		return fmt.Errorf("fsmeta: rename %s to %s: %w", from, rel, err)
	}
	return nil
}

// Remove removes the non-directory entry at rel (a symlink itself, never
// what it points to). A directory there is ErrIsDir.
func (w *Writer) Remove(rel string) error {
	err := w.atParent(rel, func(dirfd int, base string) error {
		return unix.Unlinkat(dirfd, base, 0)
	})
	if errors.Is(err, unix.EISDIR) {
		return fmt.Errorf("fsmeta: remove %s: %w", rel, ErrIsDir)
	}
	if err != nil {
		return fmt.Errorf("fsmeta: remove %s: %w", rel, err)
	}
	return nil
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

// OpenRead opens the regular file at rel for reading, without following a
// final symlink.
func (w *Writer) OpenRead(rel string) (*os.File, error) {
	var f *os.File
	err := w.atParent(rel, func(dirfd int, base string) error {
		fd, err := unix.Openat(dirfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err != nil {
			return err
		}
		f = os.NewFile(uintptr(fd), rel)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fsmeta: open %s: %w", rel, err)
	}
	return f, nil
}

// ErrNoUnnamed means the file system cannot create unnamed files
// (O_TMPFILE): use a temporary name instead.
var ErrNoUnnamed = errors.New("fsmeta: unnamed files not supported here")

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
