package fsmeta

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// UserFlags are the inode flags (chattr) a backup records and a restore
// sets: the ones Linux lets users change (FS_FL_USER_MODIFIABLE), such as
// immutable (i), append-only (a), nodump (d), noatime (A), sync (S). The
// others describe the file system's own layout (extents, inline data,
// encryption) and are not the file's to carry.
const UserFlags uint32 = 0x000380FF

// hasFlags says whether entries of type t can carry inode flags: reading
// them needs an open descriptor, which only regular files and directories
// give without side effects.
func hasFlags(t tree.Type) bool { return t == tree.TypeFile || t == tree.TypeDir }

// FlagSource is a source.Source that can read inode flags (the local
// file system). Entries of other sources have none.
type FlagSource interface {
	// Flags returns the inode flags (FS_IOC_GETFLAGS) of the regular file
	// or directory at path, not following a symlink; 0 when its file
	// system keeps none.
	Flags(ctx context.Context, path string) (uint32, error)
}

// flags returns the user-modifiable inode flags of the entry at path, when
// the source can read them.
func (c *Capturer) flags(ctx context.Context, path string) (uint32, error) {
	fs, ok := c.src.(FlagSource)
	if !ok {
		return 0, nil
	}
	f, err := fs.Flags(ctx, path)
	return f & UserFlags, err
}

// noFlags reports the errors of a file system that keeps no inode flags.
func noFlags(err error) bool {
	return errors.Is(err, unix.ENOTTY) || errors.Is(err, unix.EINVAL) || isNotSupported(err) || errors.Is(err, unix.ENOSYS)
}

// setFlags gives the open file or directory fd the user-modifiable flags
// of n, keeping its other flags. Call it last: an immutable or append-only
// file refuses later changes. Flags the file system or our privileges do
// not allow (immutable needs CAP_LINUX_IMMUTABLE) are warnings.
func (w *Writer) setFlags(fd int, rel string, flags uint32) error {
	cur, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	if noFlags(err) {
		w.opts.Logf("fsmeta: %s: flags %#x not restored: the file system keeps none (%v)", rel, flags, err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("FS_IOC_GETFLAGS: %w", err)
	}
	want := cur&^UserFlags | flags&UserFlags
	if want == cur {
		return nil
	}
	err = unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, int(want))
	switch {
	case err == nil:
		return nil
	case noFlags(err), errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		w.opts.Logf("fsmeta: %s: flags %#x not restored: %v", rel, flags, err)
		return nil
	}
	return fmt.Errorf("FS_IOC_SETFLAGS: %w", err)
}

// setFlagsAt is setFlags on the entry base of the directory dirfd, which
// must still be a regular file or directory.
func (w *Writer) setFlagsAt(dirfd int, base, rel string, flags uint32) error {
	fd, err := unix.Openat(dirfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open for its flags: %w", err)
	}
	defer unix.Close(fd) //nolint:errcheck // read-only descriptor: nothing to flush
	return w.setFlags(fd, rel, flags)
}

// ApplyFlags gives the regular file rel the inode flags of n. Call it
// once the file is complete and has its final name: an immutable file
// can be neither written nor renamed. ApplyMeta sets the flags of other
// entries itself.
func (w *Writer) ApplyFlags(rel string, n *tree.Node) error {
	if n.Flags == 0 || !hasFlags(n.Type) {
		return nil
	}
	err := w.atParent(rel, func(dirfd int, base string) error {
		var st unix.Stat_t
		if err := unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("lstat: %w", err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFREG && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return fmt.Errorf("%w: want %s", ErrTypeMismatch, n.Type)
		}
		return w.setFlagsAt(dirfd, base, rel, n.Flags)
	})
	if err != nil {
		return fmt.Errorf("fsmeta: apply flags to %s: %w", rel, err)
	}
	return nil
}
