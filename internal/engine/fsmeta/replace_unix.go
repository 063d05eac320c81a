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

// modeType is the kind of an entry of stat mode m.
func modeType(m uint32) tree.Type {
	switch m & unix.S_IFMT {
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
	return &Existing{Size: st.Size, MTime: st.Mtim.Nano(),
		Dev: uint64(st.Dev), Ino: st.Ino, //nolint:gosec,unconvert // Dev is an int32 on macOS: the bits are the id
		typ: modeType(uint32(st.Mode))}, nil //nolint:unconvert // Mode is a uint16 on the BSDs
}

// Readlink returns the target of the symlink at rel.
func (w *Writer) Readlink(rel string) (string, error) {
	var target string
	err := w.atParent(rel, func(dirfd int, base string) error {
		for size := 256; ; size *= 2 {
			buf := make([]byte, size)
			n, err := unix.Readlinkat(dirfd, base, buf)
			if err != nil {
				return err
			}
			if n < size { // else it may have been cut: try a larger buffer
				target = string(buf[:n])
				return nil
			}
		}
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
		return renameNoReplace(dirfd, fromBase, base)
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

// linkThenUnlink is renameNoReplace where the system or file system has
// no such rename: a link fails if to exists, so link, then drop from.
func linkThenUnlink(dirfd int, from, to string) error {
	if err := unix.Linkat(dirfd, from, dirfd, to, 0); err != nil {
		return err
	}
	return unix.Unlinkat(dirfd, from, 0)
}

// Remove removes the non-directory entry at rel (a symlink itself, never
// what it points to). A directory there is ErrIsDir.
func (w *Writer) Remove(rel string) error {
	err := w.atParent(rel, func(dirfd int, base string) error {
		return unix.Unlinkat(dirfd, base, 0)
	})
	if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EPERM) && w.isDirAt(rel) {
		// EPERM: what macOS and FreeBSD say to unlink(2) of a directory.
		return fmt.Errorf("fsmeta: remove %s: %w", rel, ErrIsDir)
	}
	if err != nil {
		return fmt.Errorf("fsmeta: remove %s: %w", rel, err)
	}
	return nil
}

// isDirAt says whether rel is a directory (not following a symlink).
func (w *Writer) isDirAt(rel string) bool {
	ex, err := w.Lstat(rel)
	return err == nil && ex.Type() == tree.TypeDir
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
