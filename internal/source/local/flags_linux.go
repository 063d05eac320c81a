package local

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Flags returns the inode flags (chattr, FS_IOC_GETFLAGS) of the regular
// file or directory at path, not following a symlink. A file system
// without flags, or an entry we may not open, has none.
func (Source) Flags(_ context.Context, path string) (uint32, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.ELOOP) {
		return 0, nil // unreadable: its content fails on its own; a symlink now: no flags
	}
	if err != nil {
		return 0, fmt.Errorf("open for its flags: %w", err)
	}
	defer unix.Close(fd) //nolint:errcheck // read-only descriptor: nothing to flush
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	if errors.Is(err, unix.ENOTTY) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP) ||
		errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("FS_IOC_GETFLAGS: %w", err)
	}
	return flags, nil
}
