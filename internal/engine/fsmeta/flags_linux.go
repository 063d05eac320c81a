package fsmeta

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// noFlags reports the errors of a file system that keeps no inode flags.
func noFlags(err error) bool {
	return errors.Is(err, unix.ENOTTY) || errors.Is(err, unix.EINVAL) || isNotSupported(err) || errors.Is(err, unix.ENOSYS)
}

// setFlags gives the open file or directory fd the user-modifiable flags
// of n, keeping its other flags. Call it last: an immutable or append-only
// file refuses later changes. Flags the file system or our privileges do
// not allow (immutable needs CAP_LINUX_IMMUTABLE) are warnings. macOS's and
// FreeBSD's flags (n.BSDFlags) have no meaning here and are not applied.
func (w *Writer) setFlags(fd int, rel string, n *tree.Node) error {
	flags := n.Flags
	if flags == 0 {
		return nil
	}
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

// hasPlatformFlags says whether n has flags this platform sets.
func hasPlatformFlags(n *tree.Node) bool { return n.Flags != 0 }
