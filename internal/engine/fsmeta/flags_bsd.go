//go:build darwin || freebsd

package fsmeta

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// setFlags gives the open file or directory fd the chflags flags of n
// (UserBSDFlags), keeping its other flags. Call it last: an immutable or
// append-only file refuses later changes. Flags the file system or our
// privileges do not allow are warnings. Linux's inode flags (n.Flags) have
// no meaning here and are not applied.
func (w *Writer) setFlags(fd int, rel string, n *tree.Node) error {
	flags := n.BSDFlags & UserBSDFlags
	if flags == 0 {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("fstat: %w", err)
	}
	want := st.Flags&^UserBSDFlags | flags
	if want == st.Flags {
		return nil
	}
	err := unix.Fchflags(fd, int(want))
	switch {
	case err == nil:
		return nil
	case isNotSupported(err), errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES), errors.Is(err, unix.EINVAL):
		w.opts.Logf("fsmeta: %s: flags %#x not restored: %v", rel, flags, err)
		return nil
	}
	return fmt.Errorf("fchflags: %w", err)
}

// hasPlatformFlags says whether n has flags this platform sets.
func hasPlatformFlags(n *tree.Node) bool { return n.BSDFlags&UserBSDFlags != 0 }
