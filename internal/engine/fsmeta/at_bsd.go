//go:build darwin || freebsd

package fsmeta

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// The system calls macOS and FreeBSD share, for the Unix writer. Neither
// has an *at form of setxattr or a futimens in golang.org/x/sys/unix.

// errXattrsNotHere: the platform cannot set attributes on an entry of this
// kind without opening it in a way that has effects (a device) or at all
// (a symlink on FreeBSD).
var errXattrsNotHere = errors.New("not settable on this kind of entry here")

// xattrSetterAt returns a function that sets an attribute on base in dirfd
// without following a symlink, and one to call when done: it opens the
// entry relative to dirfd (xattrOpenFlags: never following a final
// symlink) and sets attributes on the descriptor. A device is not opened:
// opening one can rewind a tape or hang up a line.
func xattrSetterAt(dirfd int, base string, t tree.Type) (func(name string, value []byte) error, func(), error) {
	if t == tree.TypeCharDev || t == tree.TypeBlkDev || t == tree.TypeSocket || t == tree.TypeSymlink && !symlinkXattrs {
		return nil, nil, fmt.Errorf("%s: %w", t, errXattrsNotHere)
	}
	fd, err := unix.Openat(dirfd, base, xattrOpenFlags, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open for its xattrs: %w", err)
	}
	set := func(name string, value []byte) error { return unix.Fsetxattr(fd, name, value, 0) }
	return set, func() { unix.Close(fd) }, nil //nolint:errcheck // read-only descriptor: nothing to flush
}

// setTimeFd sets the modification time of the open file fd, whose name in
// the output directory is name ("." for the output directory itself; a
// file's temporary name otherwise, as CreateFile named it). With no
// futimens at hand it names the entry in its parent, which the Writer
// holds open, and never follows a symlink there: the same checks as every
// other *at call of the Writer.
func (w *Writer) setTimeFd(fd int, name string, mtime int64) error {
	if name == "." {
		return unix.UtimesNanoAt(fd, ".", mtimeOnly(mtime), unix.AT_SYMLINK_NOFOLLOW)
	}
	return w.atParent(name, func(dirfd int, base string) error {
		return unix.UtimesNanoAt(dirfd, base, mtimeOnly(mtime), unix.AT_SYMLINK_NOFOLLOW)
	})
}
