//go:build unix

package fsmeta

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// setFlagsAt is setFlags on the entry base of the directory dirfd, which
// must still be a regular file or directory.
func (w *Writer) setFlagsAt(dirfd int, base, rel string, n *tree.Node) error {
	fd, err := unix.Openat(dirfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open for its flags: %w", err)
	}
	defer unix.Close(fd) //nolint:errcheck // read-only descriptor: nothing to flush
	return w.setFlags(fd, rel, n)
}

// ApplyFlags gives the regular file rel the flags of n this platform has
// (Linux inode flags, or chflags flags on macOS and FreeBSD). Call it once
// the file is complete and has its final name: an immutable file can be
// neither written nor renamed. ApplyMeta sets the flags of other entries
// itself.
func (w *Writer) ApplyFlags(rel string, n *tree.Node) error {
	if !hasPlatformFlags(n) || !hasFlags(n.Type) {
		return nil
	}
	err := w.atParent(rel, func(dirfd int, base string) error {
		var st unix.Stat_t
		if err := unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("lstat: %w", err)
		}
		if !hasFlags(modeType(uint32(st.Mode))) { //nolint:unconvert // Mode is a uint16 on the BSDs
			return fmt.Errorf("%w: want %s", ErrTypeMismatch, n.Type)
		}
		return w.setFlagsAt(dirfd, base, rel, n)
	})
	if err != nil {
		return fmt.Errorf("fsmeta: apply flags to %s: %w", rel, err)
	}
	return nil
}
