package fsmeta

import (
	"errors"

	"golang.org/x/sys/unix"
)

// The system calls macOS does its own way, for the Unix writer.

// utimeOmit is the nanoseconds of a utimensat time that leaves it alone:
// UTIME_OMIT of macOS's <sys/stat.h>, which golang.org/x/sys/unix lacks.
const utimeOmit = -2

// xattrOpenFlags open an entry for its xattrs: O_SYMLINK opens a symlink
// itself, never its target; O_NONBLOCK keeps a FIFO from waiting.
const xattrOpenFlags = unix.O_RDONLY | unix.O_SYMLINK | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC

// symlinkXattrs: macOS can open a symlink itself (O_SYMLINK).
const symlinkXattrs = true

// renameNoReplace renames from to to in dirfd unless to exists (EEXIST):
// renameatx_np(RENAME_EXCL), or a link where the file system lacks it.
func renameNoReplace(dirfd int, from, to string) error {
	err := unix.RenameatxNp(dirfd, from, dirfd, to, unix.RENAME_EXCL)
	if !errors.Is(err, unix.ENOTSUP) && !errors.Is(err, unix.EINVAL) {
		return err
	}
	return linkThenUnlink(dirfd, from, to)
}

// mknodAt would create a FIFO or device in dirfd: macOS has mknodat and
// mkfifoat only since macOS 13, and golang.org/x/sys/unix has neither, so
// Special reports such entries as not restored instead of creating them by
// a path that could lead out of the output directory.
func mknodAt(int, string, uint32, uint64) error { return errNoMknodat }
