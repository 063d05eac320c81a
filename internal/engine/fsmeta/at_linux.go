package fsmeta

import (
	"errors"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// The system calls Linux does its own way, for the Unix writer.

// renameNoReplace renames from to to in dirfd unless to exists (EEXIST):
// renameat2(RENAME_NOREPLACE), or a link where the file system lacks it.
func renameNoReplace(dirfd int, from, to string) error {
	err := unix.Renameat2(dirfd, from, dirfd, to, unix.RENAME_NOREPLACE)
	if !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOSYS) {
		return err
	}
	return linkThenUnlink(dirfd, from, to)
}

// mknodAt creates the FIFO or device base in dirfd.
func mknodAt(dirfd int, base string, mode uint32, rdev uint64) error {
	return unix.Mknodat(dirfd, base, mode, int(rdev)) //nolint:gosec // a device number the kernel checks
}

// utimeOmit is the nanoseconds of a utimensat time that leaves it alone.
const utimeOmit = unix.UTIME_OMIT

// xattrSetterAt returns a function that sets an attribute on base in dirfd
// without following a symlink, and one to call when done. Linux has no
// lsetxattrat before 6.13, so it names the entry through
// /proc/self/fd/DIRFD/BASE: the directory is pinned by its descriptor and
// base is a single checked element.
func xattrSetterAt(dirfd int, base string, _ tree.Type) (func(name string, value []byte) error, func(), error) {
	path := "/proc/self/fd/" + strconv.Itoa(dirfd) + "/" + base
	return func(name string, value []byte) error { return unix.Lsetxattr(path, name, value, 0) }, func() {}, nil
}

// setTimeFd sets the modification time of the open file fd (whose name is
// name, unused here). Linux names an open file's inode through
// /proc/self/fd (as glibc's futimens does); the descriptor pins the file,
// so no path in the output directory is resolved.
func (w *Writer) setTimeFd(fd int, _ string, mtime int64) error {
	return unix.UtimesNanoAt(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), mtimeOnly(mtime), 0)
}
