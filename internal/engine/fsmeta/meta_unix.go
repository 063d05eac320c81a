//go:build unix

package fsmeta

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// ApplyMeta gives the entry at rel the metadata of n: owner and group
// (when WriterOptions.Owners: by User/Group name if that name exists
// here, else by UID/GID), then extended attributes, then mode (setuid,
// setgid and sticky included, unless WriterOptions withhold them), and
// the modification time last. A symlink
// gets owner, xattrs and time but no mode (Linux has none). Nothing is
// followed: if the entry on disk is a symlink and n is not (or the
// reverse), it returns ErrTypeMismatch and changes nothing.
//
// Owners go first because chown clears setuid/setgid and the
// security.capability attribute. A socket, or a device that Special did
// not create, has nothing to apply: it returns nil.
//
// For a directory, call it after the directory's children are written,
// as writing them changes its mtime.
func (w *Writer) ApplyMeta(rel string, n *tree.Node) error {
	if n.Type == tree.TypeSocket {
		_, _, err := splitRel(rel)
		return err
	}
	err := w.atParent(rel, func(dirfd int, base string) error {
		return w.applyAt(dirfd, base, rel, n)
	})
	if err != nil {
		return fmt.Errorf("fsmeta: apply metadata to %s: %w", rel, err)
	}
	return nil
}

// applyAt is ApplyMeta on the entry base of the directory dirfd.
func (w *Writer) applyAt(dirfd int, base, rel string, n *tree.Node) error {
	var st unix.Stat_t
	err := unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) && (n.Type == tree.TypeCharDev || n.Type == tree.TypeBlkDev) {
		return nil // Special skipped it and said so.
	}
	if err != nil {
		return fmt.Errorf("lstat: %w", err)
	}
	isLink := modeType(uint32(st.Mode)) == tree.TypeSymlink //nolint:unconvert // Mode is a uint16 on the BSDs
	if isLink != (n.Type == tree.TypeSymlink) {
		return fmt.Errorf("%w: want %s", ErrTypeMismatch, n.Type)
	}
	if w.opts.Owners {
		uid := w.ids.uid(n.User, n.UID)
		gid := w.ids.gid(n.Group, n.GID)
		if err := unix.Fchownat(dirfd, base, uid, gid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("lchown: %w", err)
		}
	}
	if err := w.setXattrs(dirfd, base, rel, modeType(uint32(st.Mode)), n.Xattrs); err != nil { //nolint:unconvert // Mode is a uint16 on the BSDs
		return err
	}
	if !isLink {
		mode := w.modeOf(n)
		if err := chmodNoFollow(dirfd, base, mode); err != nil {
			return fmt.Errorf("chmod: %w", err)
		}
		w.modeSet(n, mode)
	}
	if err := unix.UtimesNanoAt(dirfd, base, mtimeOnly(n.MTime), unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("utimensat: %w", err)
	}
	if t := modeType(uint32(st.Mode)); hasPlatformFlags(n) && hasFlags(n.Type) && hasFlags(t) { //nolint:unconvert // Mode is a uint16 on the BSDs
		return w.setFlagsAt(dirfd, base, rel, n) // last: immutable refuses later changes
	}
	return nil
}

// mtimeOnly is the times argument of utimensat that sets the modification
// time to mtime and leaves the access time alone.
func mtimeOnly(mtime int64) []unix.Timespec {
	return []unix.Timespec{{Sec: 0, Nsec: utimeOmit}, unix.NsecToTimespec(mtime)}
}

// setXattrs sets each attribute on base in dirfd without following a
// symlink (setXattrAt, per platform). Attributes the file system or our
// privileges do not allow are warnings, not errors.
func (w *Writer) setXattrs(dirfd int, base, rel string, t tree.Type, xattrs []tree.Xattr) error {
	if len(xattrs) == 0 {
		return nil
	}
	set, done, err := xattrSetterAt(dirfd, base, t)
	if err != nil {
		w.opts.Logf("fsmeta: %s: xattrs not restored: %v", rel, err)
		return nil
	}
	defer done()
	for _, x := range xattrs {
		if w.withheldXattr(x.Name) {
			continue
		}
		err := set(x.Name, x.Value)
		switch {
		case err == nil:
			w.xattrSet(x.Name)
		case isNotSupported(err), errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
			w.opts.Logf("fsmeta: %s: xattr %q not restored: %v", rel, x.Name, err)
		default:
			return fmt.Errorf("lsetxattr %s: %w", x.Name, err)
		}
	}
	return nil
}

// chmodNoFollow sets the mode of base in dirfd, which the caller has seen
// is not a symlink. It uses fchmodat2(AT_SYMLINK_NOFOLLOW) where the
// kernel has it (6.6+), so a symlink swapped in meanwhile is not followed;
// older kernels fall back to plain fchmodat after checking again, with
// the same narrow race os.Root.Chmod documents.
func chmodNoFollow(dirfd int, base string, mode uint32) error {
	err := unix.Fchmodat(dirfd, base, mode, unix.AT_SYMLINK_NOFOLLOW)
	if !isNotSupported(err) {
		return err
	}
	// No fchmodat2, or base became a symlink since the caller looked.
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	if modeType(uint32(st.Mode)) == tree.TypeSymlink { //nolint:unconvert // Mode is a uint16 on the BSDs
		return ErrTypeMismatch
	}
	return unix.Fchmodat(dirfd, base, mode, 0)
}

// ApplyMetaFile is ApplyMeta for a regular file the caller created with
// CreateFile and still has open: it works on the descriptor (fchown,
// fsetxattr, fchmod, then the mtime), so no path is resolved again. Call it
// after the last write and before Close.
func (w *Writer) ApplyMetaFile(f *os.File, rel string, n *tree.Node) error {
	if n.Type != tree.TypeFile {
		return fmt.Errorf("fsmeta: apply metadata to %s: %w: want a regular file, node is %s", rel, ErrTypeMismatch, n.Type)
	}
	conn, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("fsmeta: apply metadata to %s: %w", rel, err)
	}
	var opErr error
	if err := conn.Control(func(fd uintptr) { opErr = w.applyFd(int(fd), f.Name(), rel, n) }); err != nil {
		return fmt.Errorf("fsmeta: apply metadata to %s: %w", rel, err)
	}
	if opErr != nil {
		return fmt.Errorf("fsmeta: apply metadata to %s: %w", rel, opErr)
	}
	return nil
}

// applyFd is applyAt on an open regular file or directory, in the same
// order; name is the file's own relative path, for setTimeFd.
func (w *Writer) applyFd(fd int, name, rel string, n *tree.Node) error {
	if w.opts.Owners {
		if err := unix.Fchown(fd, w.ids.uid(n.User, n.UID), w.ids.gid(n.Group, n.GID)); err != nil {
			return fmt.Errorf("fchown: %w", err)
		}
	}
	for _, x := range n.Xattrs {
		if w.withheldXattr(x.Name) {
			continue
		}
		err := unix.Fsetxattr(fd, x.Name, x.Value, 0)
		switch {
		case err == nil:
			w.xattrSet(x.Name)
		case isNotSupported(err), errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
			w.opts.Logf("fsmeta: %s: xattr %q not restored: %v", rel, x.Name, err)
		default:
			return fmt.Errorf("fsetxattr %s: %w", x.Name, err)
		}
	}
	mode := w.modeOf(n)
	if err := unix.Fchmod(fd, mode); err != nil {
		return fmt.Errorf("fchmod: %w", err)
	}
	w.modeSet(n, mode)
	if err := w.setTimeFd(fd, name, n.MTime); err != nil {
		return fmt.Errorf("futimens: %w", err)
	}
	return nil // flags: ApplyFlags, once the file has its final name
}

// ApplyRootMeta gives the output directory itself the metadata of n (the
// snapshot's source directory), through a descriptor of that directory.
// Call it last: writing entries changes the directory's mtime.
func (w *Writer) ApplyRootMeta(n *tree.Node) error {
	if n.Type != tree.TypeDir {
		return fmt.Errorf("fsmeta: apply metadata to the output directory: %w: node is %s", ErrTypeMismatch, n.Type)
	}
	d, err := w.root.Open(".")
	if err != nil {
		return fmt.Errorf("fsmeta: open the output directory: %w", err)
	}
	defer d.Close() //nolint:errcheck // read-only directory handle: nothing to flush
	conn, err := d.SyscallConn()
	if err != nil {
		return fmt.Errorf("fsmeta: apply metadata to the output directory: %w", err)
	}
	var opErr error
	err = conn.Control(func(fd uintptr) {
		if opErr = w.applyFd(int(fd), ".", ".", n); opErr == nil {
			opErr = w.setFlags(int(fd), ".", n)
		}
	})
	if err != nil {
		return fmt.Errorf("fsmeta: apply metadata to the output directory: %w", err)
	}
	if opErr != nil {
		return fmt.Errorf("fsmeta: apply metadata to the output directory: %w", opErr)
	}
	return nil
}
